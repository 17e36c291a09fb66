// Protocol bench (bench/protocols.py): the standard WebSocket API of
// k6/experimental/websockets, one open socket per VU for SESSION_S seconds, a message a
// second each way; the iteration ends when the socket has closed and its timers are gone.
import { WebSocket } from 'k6/experimental/websockets';

const SESSION_MS = 1000 * Number(__ENV.SESSION_S || 9);

// One session per VU: every VU holds its socket for the whole session, and none starts a
// second one that the end of the test would cut short.
export const options = {
  scenarios: {
    sockets: { executor: 'per-vu-iterations', vus: Number(__ENV.VUS || 1), iterations: 1, maxDuration: '2m' },
  },
};

export default function () {
  const socket = new WebSocket(__ENV.WS_URL);
  let timer;
  socket.onopen = () => {
    timer = setInterval(() => socket.send(`hello from ${__VU}`), 1000);
    setTimeout(() => {
      clearInterval(timer);
      socket.close();
    }, SESSION_MS);
  };
  socket.onerror = (e) => {
    console.error(`websocket error: ${e.error}`);
    clearInterval(timer);
  };
}
