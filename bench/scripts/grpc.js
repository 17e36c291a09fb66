// Protocol bench (bench/protocols.py): unary gRPC in a tight loop, one client (one HTTP/2
// connection) per VU, against the echo server (h2c) at GRPC_ADDR.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['../../examples/grpc'], 'echo.proto');

export default function () {
  if (__ITER === 0) {
    client.connect(__ENV.GRPC_ADDR, { plaintext: true });
  }
  const res = client.invoke('rk6.test.Echo/Say', { text: 'hello', count: __ITER });
  check(res, { ok: (r) => r && r.status === grpc.StatusOK });
}
