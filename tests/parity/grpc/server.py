"""gRPC test server for the parity tests: the Echo service of examples/grpc/echo.proto and the Streams
service of stream.proto without generated
stubs (descriptors compiled at start with grpc_tools), plus server reflection, the health
checking protocol, and failed statuses with rich error details (google.rpc.Status in
grpc-status-details-bin, built here from rk6's own google/rpc protos: no grpcio-status).

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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
HERE = os.path.join(ROOT, "examples", "grpc")
# google.rpc.Status, its error details and grpc.health.v1, as rk6 embeds them.
RPC = os.path.join(ROOT, "crates", "js", "src", "modules", "grpc", "protos")
MINE = os.path.dirname(os.path.abspath(__file__))


def load_pool():
    out = os.path.join(tempfile.mkdtemp(), "echo.protoset")
    wkt = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", f"-I{HERE}", f"-I{RPC}", f"-I{MINE}", f"-I{wkt}", "--include_imports",
                      f"--descriptor_set_out={out}", "echo.proto", "stream.proto", "hidden.proto",
                      "google/rpc/status.proto", "google/rpc/error_details.proto",
                      "grpc/health/v1/health.proto", "google/protobuf/wrappers.proto",
                      "google/protobuf/struct.proto"])
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

    def status_code(n):
        return grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == n))

    def pack(msg):
        a = cls("google.protobuf.Any")()
        a.Pack(msg)
        return a

    def details(kind):
        """The details of a failed status, by name."""
        r = lambda n, **kw: pack(cls("google.rpc." + n)(**kw))
        Duration = cls("google.protobuf.Duration")
        if kind == "rich":
            BR, QF, PF, H = (cls("google.rpc." + n) for n in ("BadRequest", "QuotaFailure", "PreconditionFailure", "Help"))
            return [r("ErrorInfo", reason="QUOTA", domain="rk6.test", metadata={"k": "v"}),
                    pack(BR(field_violations=[BR.FieldViolation(field="text", description="too long")])),
                    r("RetryInfo", retry_delay=Duration(seconds=1, nanos=500000000)),
                    r("DebugInfo", stack_entries=["a", "b"], detail="dbg"),
                    pack(QF(violations=[QF.Violation(subject="s", quota_value=9, future_quota_value=12)])),
                    pack(PF(violations=[PF.Violation(type="T", subject="s", description="d")])),
                    r("RequestInfo", request_id="r1", serving_data="sd"),
                    r("ResourceInfo", resource_type="t", resource_name="n", owner="o", description="d"),
                    pack(H(links=[H.Link(description="docs", url="https://example.test")])),
                    r("LocalizedMessage", locale="en-US", message="hello"),
                    r("ErrorInfo")]
        if kind == "loaded":
            return [pack(Echo(text="in detail", count=3, mood=1, ratio=float("inf")))]
        if kind == "reflected":
            return [pack(cls("rk6.hidden.Secret")(code="c", n=7, f=float("nan")))]
        if kind == "wkt":
            S, V = cls("google.protobuf.Struct"), cls("google.protobuf.Value")
            return [pack(cls("google.protobuf.StringValue")(value="s")), pack(Duration(seconds=3, nanos=5)),
                    pack(cls("google.protobuf.BytesValue")(value=b"hi")), pack(S(fields={"a": V(number_value=1.5)})),
                    pack(cls("grpc.health.v1.HealthCheckResponse")(status=2))]
        unknown = cls("google.protobuf.Any")(type_url="type.googleapis.com/nope.Thing", value=b"\x08\x01")
        if kind == "unknown":
            return [unknown]
        if kind == "mixed":
            return [r("ErrorInfo", reason="R"), unknown]
        return []

    def fail_with(ctx, code, kind):
        """Ends the call with `code` and a google.rpc.Status of `kind`'s details, as
        grpcio-status's abort_with_status does; "mismatch" puts another code in the Status,
        "badbin" bytes that are no Status."""
        Status = cls("google.rpc.Status")
        if kind == "badbin":
            blob = b"\xff\xff\xff"
            message = "outer"
        elif kind == "mismatch":
            blob = Status(code=5, message="inner", details=details("mixed")[:1]).SerializeToString()
            message = "outer"
        else:
            message = "failed: " + kind
            blob = Status(code=code, message=message, details=details(kind)).SerializeToString()
            if kind == "innermsg":
                message = "outer message"
        ctx.set_trailing_metadata((("grpc-status-details-bin", blob),))
        ctx.abort(status_code(code), message)

    def fail(req, ctx):
        # "details:<kind>": a status with rich error details.
        if req.message.startswith("details:"):
            fail_with(ctx, req.code, req.message[len("details:"):])
        ctx.abort(status_code(req.code), req.message)

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
        if req.text.startswith("details:"):
            yield req
            fail_with(ctx, 5, req.text[len("details:"):])
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
    # grpc.health.v1: the server and Echo serve, "down" does not, others are unknown.
    HealthReq, HealthResp = cls("grpc.health.v1.HealthCheckRequest"), cls("grpc.health.v1.HealthCheckResponse")

    def check(req, ctx):
        states = {"": 1, "rk6.test.Echo": 1, "down": 2}
        if req.service not in states:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return HealthResp(status=states[req.service])

    health = grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": unary(check, HealthReq, HealthResp),
    })
    Secret = cls("rk6.hidden.Secret")
    hidden = grpc.method_handlers_generic_handler("rk6.hidden.Hidden", {
        "Peek": unary(lambda req, ctx: req, Secret, Secret),
    })
    # MAX_CONNECTION_AGE_MS: the server ends each connection with GOAWAY after that long,
    # as production servers do (grpc-go's MaxConnectionAge, Envoy), for the reconnect test.
    age = os.environ.get("MAX_CONNECTION_AGE_MS")
    opts = [("grpc.max_connection_age_ms", int(age)), ("grpc.max_connection_age_grace_ms", 100)] if age else []
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=opts)
    server.add_generic_rpc_handlers((handler, streams, health, hidden))
    # Echo and Hidden are listed: the reflection service's own descriptors are not in this
    # pool.
    reflection.enable_server_reflection(("rk6.test.Echo", "rk6.hidden.Hidden"), server, pool=pool)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
