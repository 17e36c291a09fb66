// WebSocket load test: k6/ws's callback API and the standard WebSocket API of
// k6/experimental/websockets, against an echo server at WS_URL (ws:// or wss://).
//
//   rk6 run -e WS_URL=ws://127.0.0.1:8080 examples/websockets.js
import ws from 'k6/ws';
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';

const BASE = __ENV.WS_URL || 'ws://127.0.0.1:8080';

export const options = {
  vus: 2,
  iterations: 4,
  thresholds: {
    ws_connecting: ['p(95)<1000'],
    'ws_sessions{status:101}': ['count==8'],
    checks: ['rate==1'],
  },
};

export default function () {
  // k6/ws: the callback runs the session; ws.connect returns when the socket closes.
  let echoed = 0;
  const res = ws.connect(`${BASE}/echo`, { tags: { api: 'k6/ws' } }, (socket) => {
    socket.on('open', () => {
      socket.send('hello');
      socket.sendBinary(new Uint8Array([1, 2, 3]).buffer);
      socket.ping();
    });
    socket.on('message', () => echoed++);
    socket.on('binaryMessage', () => echoed++);
    socket.setInterval(() => {
      if (echoed === 2) socket.close();
    }, 10);
    socket.setTimeout(() => socket.close(), 5000);
  });
  check(res, { 'k6/ws upgraded': (r) => r.status === 101 });
  check(echoed, { 'k6/ws echoed both': (n) => n === 2 });

  // The WebSocket API: the iteration ends once the socket has closed. `compression`
  // offers permessage-deflate (also a ws.connect param); a server that declines it gets
  // plain messages, and `socket.extensions` says what it answered.
  const socket = new WebSocket(`${BASE}/echo`, [], { tags: { api: 'websockets' }, compression: 'deflate' });
  socket.binaryType = 'arraybuffer';
  socket.onopen = () => socket.send('hi');
  socket.onmessage = (e) => {
    check(e.data, { 'WebSocket echoed': (d) => d === 'hi' });
    socket.close();
  };
  socket.onerror = (e) => console.error(e.error);
}
