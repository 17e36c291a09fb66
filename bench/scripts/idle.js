// A VU that only sleeps: what a VU costs before it does anything (scenario 6).
import { sleep } from 'k6';

export default function () {
  sleep(1);
}
