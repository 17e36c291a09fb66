import { x } from 'https://127.0.0.1:18443/m04-remote-missing/nope.js';
export default function () {}
