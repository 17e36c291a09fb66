// k6/websockets, the stable path of the WebSocket API since k6 1.6 (release notes v1.6.0,
// #5586; k6-docs javascript-api/k6-websockets), with the close event's `code` and `reason`
// (v1.5.0, #5376) and the standard's readyState constants. BASE is the test server's URL.
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = { iterations: 1 };

function session(path, onopen) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${BASE}${path}`);
    const seen = { states: [ws.readyState] };
    ws.onopen = () => {
      seen.states.push(ws.readyState);
      if (onopen) onopen(ws, seen);
    };
    ws.onerror = (e) => { seen.error = e.error; };
    ws.onclose = (e) => {
      seen.states.push(ws.readyState);
      seen.hasCode = 'code' in e;
      seen.code = e.code;
      seen.reason = e.reason;
      resolve(seen);
    };
  });
}

export default async function () {
  check(WebSocket, {
    'constants on the constructor': (W) => W.CONNECTING === 0 && W.OPEN === 1 && W.CLOSING === 2 && W.CLOSED === 3,
  });
  const mine = await session('/echo', (ws, seen) => {
    seen.instance = [ws.CONNECTING, ws.OPEN, ws.CLOSING, ws.CLOSED].join();
    ws.close(3001, 'later');
    seen.states.push(ws.readyState);
  });
  check(mine, {
    'constants on the socket': (s) => s.instance === '0,1,2,3',
    'readyState goes CONNECTING, OPEN, CLOSING, CLOSED': (s) => s.states.join() === '0,1,2,3',
    'the close event has the code and reason': (s) => s.code === 3001 && s.reason === 'later',
  });
  const server = await session('/close/4001');
  check(server, { "the server's close code and reason": (s) => s.code === 4001 && s.reason === 'bye' && s.error === 'websocket: close 4001: bye' });
  const normal = await session('/echo', (ws) => ws.close());
  check(normal, { 'close() sends 1000': (s) => s.code === 1000 && s.reason === '' });
  const refused = await session('/reject');
  check(refused, { 'no code without a close frame, an empty reason': (s) => !s.hasCode && s.reason === '' });
  const errors = await session('/echo', (ws, seen) => {
    seen.thrown = [];
    for (const args of [[1001], [2999], [5000], [1000, 'x'.repeat(124)], [1000, 'é'.repeat(62)]]) {
      try {
        ws.close(...args);
        seen.thrown.push('none');
      } catch (e) {
        seen.thrown.push(String(e));
      }
    }
    ws.close(4000, 'é'.repeat(61));
  });
  check(errors.thrown, {
    'close codes outside 1000 and 3000-4999 throw': (t) => t.slice(0, 3).every((m) => m.includes("InvalidAccessError: Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999.")),
    'reasons over 123 bytes throw': (t) => t.slice(3).every((m) => m.includes("SyntaxError: Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes")),
  });
  check(errors, { 'a reason of 122 bytes closes': (s) => s.code === 4000 && s.reason === 'é'.repeat(61) });
  // Views send their own bytes only (v1.5.0, #5358), counted in bufferedAmount (v2.0.0, #5716).
  const views = await session('/echo', (ws, seen) => {
    ws.binaryType = 'arraybuffer';
    const bytes = new Uint8Array([1, 2, 3, 4, 5, 6]);
    seen.got = [];
    ws.onmessage = (e) => {
      seen.got.push(Array.from(new Uint8Array(e.data)).join(','));
      if (seen.got.length === 2) ws.close();
    };
    ws.send(bytes.subarray(1, 3));
    ws.send(new DataView(bytes.buffer, 3, 2));
    seen.buffered = ws.bufferedAmount;
  });
  check(views, { 'typed array and DataView windows': (s) => s.got.join('|') === '2,3|4,5' && s.buffered === 4 });
}
