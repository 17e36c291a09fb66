//! The module's `Blob` (parts of strings, buffers, views and blobs; `size`, `type`,
//! `arrayBuffer()`, `text()`, `bytes()`, `slice()`, `stream()`), written in JS over natives
//! for UTF-8 and the VU's `ReadableStream` class, made once per VU.

use boa_engine::object::builtins::JsArray;
use boa_engine::{Context, JsObject, JsResult, JsString, JsValue, NativeFunction, Source};

/// The class and the reader of a blob's bytes, from a factory given the UTF-8 natives.
const BLOB_JS: &str = r#"(function (encode, decode, readable) {
  const BYTES = Symbol('bytes');
  function partBytes(p) {
    if (p instanceof Blob) return p[BYTES];
    if (p instanceof ArrayBuffer) return new Uint8Array(p.slice(0));
    if (ArrayBuffer.isView(p)) return new Uint8Array(p.buffer.slice(p.byteOffset, p.byteOffset + p.byteLength));
    return new Uint8Array(encode(String(p)));
  }
  // As k6 1.1 builds them: own enumerable `size`, `type` and methods.
  class Blob {
    constructor(parts, options) {
      const list = parts === undefined ? [] : Array.from(parts, partBytes);
      let size = 0;
      for (const b of list) size += b.length;
      const all = new Uint8Array(size);
      let at = 0;
      for (const b of list) { all.set(b, at); at += b.length; }
      Object.defineProperty(this, BYTES, { value: all });
      this.size = size;
      this.type = options && options.type !== undefined ? String(options.type) : '';
      this.arrayBuffer = () => Promise.resolve(all.slice().buffer);
      this.bytes = () => Promise.resolve(all.slice());
      this.slice = (start, end, type) => new Blob([all.slice(start, end)], { type: type === undefined ? '' : type });
      this.text = () => Promise.resolve(decode(all.slice().buffer));
      // As k6's: chunks of at most 1024 bytes as text, then an empty one as the stream closes.
      this.stream = () => {
        const Readable = readable();
        let at = 0;
        return new Readable({
          pull(controller) {
            const n = Math.min(1024, all.length - at);
            controller.enqueue(decode(all.slice(at, at + n).buffer));
            at += n;
            if (n === 0) controller.close();
          },
        });
      };
    }
  }
  return [Blob, (b) => (b instanceof Blob ? b[BYTES].slice().buffer : undefined)];
})"#;

/// A VU's `Blob` class and byte reader.
pub(crate) struct BlobKit {
    pub(crate) class: JsObject,
    reader: JsObject,
}

impl BlobKit {
    /// Builds the class in `ctx`.
    pub(crate) fn build(ctx: &mut Context) -> JsResult<BlobKit> {
        let factory = ctx.eval(Source::from_bytes(BLOB_JS))?;
        let factory = factory.as_callable().expect("the factory is a function");
        let encode = boa_engine::object::FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_fn_ptr(|_, a, ctx| {
                let s = a.first().cloned().unwrap_or_default().to_string(ctx)?;
                crate::value::array_buffer(s.to_std_string_escaped().as_bytes(), ctx)
            }),
        )
        .build();
        let decode = boa_engine::object::FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_fn_ptr(|_, a, ctx| {
                let v = a.first().cloned().unwrap_or_default();
                let bytes = crate::modules::encoding::bytes_of(&v, ctx)?.unwrap_or_default();
                Ok(JsString::from(String::from_utf8_lossy(&bytes).as_ref()).into())
            }),
        )
        .build();
        let readable = boa_engine::object::FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_fn_ptr(|_, _, ctx| {
                Ok(crate::modules::experimental::streams::readable_stream_class(ctx)?.into())
            }),
        )
        .build();
        let pair = factory.call(
            &JsValue::undefined(),
            &[encode.into(), decode.into(), readable.into()],
            ctx,
        )?;
        let pair = pair.as_object().expect("the factory returns a pair");
        let class = pair.get(0, ctx)?.as_object().expect("class").clone();
        let reader = pair.get(1, ctx)?.as_object().expect("reader").clone();
        Ok(BlobKit { class, reader })
    }
}

/// A `Blob` holding `bytes`, of the class of the VU's module.
pub(crate) fn from_bytes(bytes: &[u8], ctx: &mut Context) -> JsResult<JsValue> {
    let kit = super::instance(ctx)?.blob(ctx)?;
    let buf = crate::value::array_buffer(bytes, ctx)?;
    let parts = JsArray::from_iter([buf], ctx);
    Ok(kit.class.construct(&[parts.into()], None, ctx)?.into())
}

/// The bytes of `value` if it is one of the module's `Blob`s.
pub(crate) fn bytes_of_blob(value: &JsValue, ctx: &mut Context) -> JsResult<Option<Vec<u8>>> {
    if !value.is_object() {
        return Ok(None);
    }
    let kit = super::instance(ctx)?.blob(ctx)?;
    let out = kit
        .reader
        .call(&JsValue::undefined(), std::slice::from_ref(value), ctx)?;
    if out.is_undefined() {
        return Ok(None);
    }
    crate::modules::encoding::bytes_of(&out, ctx)
}
