// Protocol bench (bench/protocols.py): k6/ws, one open socket per VU for SESSION_S seconds,
// a message a second each way (the echo server sends each one back).
import ws from 'k6/ws';
import { check } from 'k6';

const SESSION_MS = 1000 * Number(__ENV.SESSION_S || 9);

// One session per VU: every VU holds its socket for the whole session, and none starts a
// second one that the end of the test would cut short.
export const options = {
  scenarios: {
    sockets: { executor: 'per-vu-iterations', vus: Number(__ENV.VUS || 1), iterations: 1, maxDuration: '2m' },
  },
};

export default function () {
  let received = 0;
  const res = ws.connect(__ENV.WS_URL, {}, (socket) => {
    socket.on('open', () => {
      socket.setInterval(() => socket.send(`hello from ${__VU}`), 1000);
      socket.setTimeout(() => socket.close(), SESSION_MS);
    });
    socket.on('message', () => {
      received++;
    });
  });
  check(res, { upgraded: (r) => r && r.status === 101 });
  check(received, { echoed: (n) => n > 0 });
}
