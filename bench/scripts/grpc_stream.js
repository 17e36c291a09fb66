// Protocol bench (bench/protocols.py): a bidirectional gRPC stream per iteration on the
// VU's client, MESSAGES messages written and each one echoed back by the server.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['../../examples/grpc'], 'stream.proto');
const MESSAGES = Number(__ENV.MESSAGES || 100);

export default function () {
  if (__ITER === 0) {
    client.connect(__ENV.GRPC_ADDR, { plaintext: true });
  }
  const stream = new grpc.Stream(client, 'rk6.test.Streams/Chat');
  let received = 0;
  stream.on('data', () => {
    received++;
  });
  stream.on('end', () => {
    check(received, { 'all echoed': (n) => n === MESSAGES });
  });
  for (let i = 0; i < MESSAGES; i++) {
    stream.write({ text: 'hello', count: i });
  }
  stream.end();
}
