// A gRPC test: unary calls to the Echo service of examples/grpc/echo.proto, with checks,
// tags and a threshold on grpc_req_duration. Run it against a server at GRPC_ADDR:
//   rk6 run -e GRPC_ADDR=127.0.0.1:50051 examples/grpc.js
import grpc from 'k6/net/grpc';
import { check, sleep } from 'k6';

const client = new grpc.Client();
// Init context only: the .proto (and what it imports) is compiled once per VU, in Rust.
client.load(['grpc'], 'echo.proto');

export const options = {
  vus: 2,
  duration: '5s',
  thresholds: {
    grpc_req_duration: ['p(95)<500'],
    'grpc_req_duration{method:Say}': ['p(99)<1000'],
    checks: ['rate>0.99'],
  },
};

export default () => {
  // One HTTP/2 connection per client; connect again each iteration as k6 examples do.
  client.connect(__ENV.GRPC_ADDR || '127.0.0.1:50051', { plaintext: true, timeout: '5s' });

  const res = client.invoke('rk6.test.Echo/Say', { text: 'hello', count: 3, mood: 'HAPPY' }, {
    metadata: { 'x-request-id': `${__VU}-${__ITER}` },
    tags: { flow: 'echo' },
    timeout: '2s',
  });
  check(res, {
    'status is OK': (r) => r && r.status === grpc.StatusOK,
    'echoed': (r) => r.message.text === 'hello' && r.message.count === '3',
  });

  // A failed status is a reply, not an exception.
  const denied = client.invoke('rk6.test.Echo/Fail', { code: 7, message: 'denied' });
  check(denied, {
    'denied': (r) => r.status === grpc.StatusPermissionDenied && r.error.message === 'denied',
  });

  client.close();
  sleep(0.1);
};
