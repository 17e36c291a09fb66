// gRPC streams: the Streams service of examples/grpc/stream.proto, a server stream, a client
// stream and a bidirectional one, with checks and a threshold on the messages received.
// Run it against a server at GRPC_ADDR:
//   rk6 run -e GRPC_ADDR=127.0.0.1:50051 examples/grpc-stream.js
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['grpc'], 'stream.proto');

export const options = {
  vus: 2,
  duration: '5s',
  thresholds: {
    grpc_streams_msgs_received: ['count>0'],
    checks: ['rate>0.99'],
  },
};

export default () => {
  client.connect(__ENV.GRPC_ADDR || '127.0.0.1:50051', { plaintext: true, timeout: '5s' });

  // Close the connection once both streams ended (closing it earlier cuts the other one).
  let open = 2;
  const done = () => { if (--open === 0) client.close(); };

  // Server streaming: one request, `count` replies.
  const replies = [];
  const repeat = new grpc.Stream(client, 'rk6.test.Streams/Repeat', { tags: { flow: 'repeat' } });
  repeat.on('data', (msg) => replies.push(msg.text));
  repeat.on('end', () => {
    check(replies, { 'three replies': (r) => r.length === 3 });
    done();
  });
  repeat.write({ text: 'hello', count: 3 });
  repeat.end();

  // Bidirectional: every message written comes back; 'end' follows the server's status.
  const chat = new grpc.Stream(client, 'rk6.test.Streams/Chat', { timeout: '2s' });
  const echoed = [];
  chat.on('data', (msg) => echoed.push(msg.text));
  chat.on('error', (e) => console.error(`chat failed: ${e.code} ${e.message}`));
  chat.on('end', () => {
    check(echoed, { 'echoed in order': (e) => e.join() === 'a,b' });
    done();
  });
  chat.write({ text: 'a' });
  chat.write({ text: 'b' });
  chat.end();
  // The iteration ends once both streams ended.
};
