"""gRPC test server for the parity tests: the Echo service of examples/grpc/echo.proto and the Streams
service of stream.proto without generated
stubs (descriptors compiled at start with grpc_tools), plus server reflection.

Prints the port it listens on (127.0.0.1, chosen by the OS), then serves until killed."""

import os
import sys
import tempfile
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection
from grpc_tools import protoc

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "grpc")


def load_pool():
    out = os.path.join(tempfile.mkdtemp(), "echo.protoset")
    wkt = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", f"-I{HERE}", f"-I{wkt}", "--include_imports",
                      f"--descriptor_set_out={out}", "echo.proto", "stream.proto"])
    if rc != 0:
        sys.exit(f"protoc failed: {rc}")
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return pool


def main():
    pool = load_pool()
    cls = lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    Echo, Fail, Sleep, Empty, MetaReply = (cls("rk6.test." + n) for n in
                                           ("EchoRequest", "FailRequest", "SleepRequest", "Empty", "MetadataReply"))

    def say(req, ctx):
        ctx.send_initial_metadata((("x-echo", "yes"),))
        ctx.set_trailing_metadata((("x-trailer", "done"),))
        return req

    def fail(req, ctx):
        ctx.abort(grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == req.code)), req.message)

    def sleep(req, ctx):
        time.sleep(req.ms / 1000.0)
        return Echo(text="slept")

    def metadata(req, ctx):
        reply = MetaReply()
        for k, v in ctx.invocation_metadata():
            if k.startswith("x-"):
                reply.metadata[k] = v
        return reply

    def unary(fn, req_cls, resp_cls):
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=req_cls.FromString, response_serializer=resp_cls.SerializeToString)

    handler = grpc.method_handlers_generic_handler("rk6.test.Echo", {
        "Say": unary(say, Echo, Echo),
        "Fail": unary(fail, Fail, Echo),
        "Sleep": unary(sleep, Sleep, Echo),
        "Metadata": unary(metadata, Empty, MetaReply),
    })
    # Streams of stream.proto: replies are sent as requests arrive.
    def repeat(req, ctx):
        if req.text == "fail":
            yield req
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no such thing")
        for _ in range(req.count):
            yield req

    def collect(reqs, ctx):
        texts = [r.text for r in reqs]
        return Echo(text=",".join(texts), count=len(texts))

    def chat(reqs, ctx):
        for r in reqs:
            yield r

    ser = dict(request_deserializer=Echo.FromString, response_serializer=Echo.SerializeToString)
    streams = grpc.method_handlers_generic_handler("rk6.test.Streams", {
        "Repeat": grpc.unary_stream_rpc_method_handler(repeat, **ser),
        "Collect": grpc.stream_unary_rpc_method_handler(collect, **ser),
        "Chat": grpc.stream_stream_rpc_method_handler(chat, **ser),
    })
    # MAX_CONNECTION_AGE_MS: the server ends each connection with GOAWAY after that long,
    # as production servers do (grpc-go's MaxConnectionAge, Envoy), for the reconnect test.
    age = os.environ.get("MAX_CONNECTION_AGE_MS")
    opts = [("grpc.max_connection_age_ms", int(age)), ("grpc.max_connection_age_grace_ms", 100)] if age else []
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=opts)
    server.add_generic_rpc_handlers((handler, streams))
    # Only Echo is listed: the reflection service's own descriptors are not in this pool.
    reflection.enable_server_reflection(("rk6.test.Echo",), server, pool=pool)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
