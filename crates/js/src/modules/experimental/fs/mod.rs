//! The `k6/experimental/fs` module: `open(path)` (init context only) resolves to a `File`
//! with `stat()`, `read(buffer)` and `seek(offset, whence)`. A file's bytes are read once
//! per test (the run's `Program` cache, shared with `open()`) and every VU's `File` reads
//! the same bytes with an offset of its own.

mod error;

use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use boa_engine::object::builtins::{JsArrayBuffer, JsPromise, JsUint8Array};
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction, Trace,
};

use crate::host::{Host, Phase};
use crate::value::define;
use error::{fs_error, Kind};

/// k6's `SeekMode` values.
const SEEK_START: i64 = 0;
const SEEK_CURRENT: i64 = 1;
const SEEK_END: i64 = 2;

/// One opened file of one VU: the test's shared bytes and this file's offset.
pub(crate) struct OpenFile {
    /// The absolute path, as `file.path` shows it.
    pub(crate) path: String,
    /// The file's bytes, shared by every VU.
    pub(crate) data: Arc<[u8]>,
    /// Where the next read starts.
    pub(crate) offset: Cell<usize>,
}

/// Native data of a JS `File`.
#[derive(Trace, Finalize, JsData)]
struct FileData {
    #[unsafe_ignore_trace]
    file: Rc<OpenFile>,
}

/// The opened file behind a JS `File` value.
pub(crate) fn file_of(v: &JsValue) -> Option<Rc<OpenFile>> {
    v.as_object()
        .and_then(|o| o.downcast_ref::<FileData>().map(|d| d.file.clone()))
}

/// Builds the `k6/experimental/fs` module.
pub(crate) fn module(ctx: &mut Context) -> Module {
    let realm = ctx.realm().clone();
    let open = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(open))
        .name(js_string!("open"))
        .length(1)
        .build();
    let seek_mode = ObjectInitializer::new(ctx)
        .property(js_string!("Start"), SEEK_START, Attribute::all())
        .property(js_string!("Current"), SEEK_CURRENT, Attribute::all())
        .property(js_string!("End"), SEEK_END, Attribute::all())
        .build();
    let object = ObjectInitializer::new(ctx)
        .property(js_string!("open"), open, Attribute::all())
        .property(js_string!("SeekMode"), seek_mode, Attribute::all())
        .build();
    crate::modules::synthetic::from_object(
        object,
        vec![js_string!("SeekMode"), js_string!("open")],
        ctx,
    )
}

/// A promise settled with `result`.
fn settle(result: JsResult<JsValue>, ctx: &mut Context) -> JsResult<JsValue> {
    Ok(match result {
        Ok(v) => JsPromise::resolve(v, ctx)?,
        Err(e) => JsPromise::reject(e, ctx)?,
    }
    .into())
}

/// `open(path)`: a promise of a `File`.
fn open(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let result = open_file(args, ctx);
    settle(result, ctx)
}

fn open_file(args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(fs_error(
            Kind::Forbidden,
            "open() failed; reason: opening a file is allowed only in the Init context",
            ctx,
        ));
    }
    let path = match args.first() {
        None => None,
        Some(v) if v.is_null_or_undefined() => None,
        Some(v) => Some(v.to_string(ctx)?.to_std_string_escaped()),
    };
    let Some(path) = path else {
        return Err(fs_error(
            Kind::Type,
            "open() failed; reason: path cannot be null or undefined",
            ctx,
        ));
    };
    if path.is_empty() {
        return Err(fs_error(
            Kind::Type,
            "open() failed; reason: path cannot be empty",
            ctx,
        ));
    }
    let program = host.shared.program.clone();
    let resolved = program.resolve(&path, None);
    let shown = resolved.display().to_string();
    match program.stat(&resolved) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(fs_error(
                Kind::NotFound,
                &format!("no such file or directory {shown:?}"),
                ctx,
            ))
        }
        Err(e) => {
            return Err(plain_error(&format!(
                "open() failed, unable to verify if {shown:?} exists; reason: {e}"
            )))
        }
        Ok(crate::script::files::Entry::Dir) => {
            return Err(fs_error(
                Kind::InvalidResource,
                &format!("cannot open {shown:?}: opening a directory is not supported"),
                ctx,
            ))
        }
        Ok(_) => {}
    }
    let data = program
        .read(&resolved)
        .map_err(|e| plain_error(&format!("failed to read the content of file {shown}: {e}")))?;
    Ok(make_file(
        OpenFile {
            path: shown,
            data,
            offset: Cell::new(0),
        },
        ctx,
    )
    .into())
}

fn plain_error(message: &str) -> JsError {
    boa_engine::JsNativeError::error()
        .with_message(message.to_string())
        .into()
}

/// The VU's `File` methods, made once and shared by its files.
struct Methods {
    read: JsObject,
    seek: JsObject,
    stat: JsObject,
}

fn methods(ctx: &mut Context) -> Rc<Methods> {
    if let Some(m) = ctx.get_data::<Rc<Methods>>() {
        return m.clone();
    }
    let realm = ctx.realm().clone();
    let build =
        |f: fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>, name: &str, len: usize| {
            FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(f))
                .name(JsString::from(name))
                .length(len)
                .build()
                .into()
        };
    let m = Rc::new(Methods {
        read: build(read, "read", 1),
        seek: build(seek, "seek", 2),
        stat: build(stat, "stat", 0),
    });
    ctx.insert_data(m.clone());
    m
}

/// A JS `File`: own `path`, `read`, `seek`, `stat`, as k6's object lists them.
fn make_file(file: OpenFile, ctx: &mut Context) -> JsObject {
    let m = methods(ctx);
    let path = JsString::from(file.path.as_str());
    let proto = ctx.intrinsics().constructors().object().prototype();
    let obj = JsObject::from_proto_and_data(
        proto,
        FileData {
            file: Rc::new(file),
        },
    );
    define(&obj, js_string!("path"), path);
    define(&obj, js_string!("read"), m.read.clone());
    define(&obj, js_string!("seek"), m.seek.clone());
    define(&obj, js_string!("stat"), m.stat.clone());
    obj
}

fn this_file(this: &JsValue) -> JsResult<Rc<OpenFile>> {
    file_of(this).ok_or_else(|| {
        boa_engine::JsNativeError::typ()
            .with_message("a File method was called on something that is not a File")
            .into()
    })
}

/// A count as a JS number (an integer value, as k6's are).
fn number(n: usize) -> JsValue {
    match i32::try_from(n) {
        Ok(i) => i.into(),
        Err(_) => (n as f64).into(),
    }
}

/// `file.stat()`: a promise of `{name, size}`.
fn stat(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let file = this_file(this)?;
    let name = Path::new(&file.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let info = ObjectInitializer::new(ctx)
        .property(js_string!("name"), JsString::from(name), Attribute::all())
        .property(
            js_string!("size"),
            number(file.data.len()),
            Attribute::all(),
        )
        .build();
    settle(Ok(info.into()), ctx)
}

/// `file.read(buffer)`: copies from the offset into `buffer`, a promise of the number of
/// bytes read, or of `null` at the end of the file.
fn read(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let file = this_file(this)?;
    let result = read_into(&file, args.first(), ctx);
    settle(result, ctx)
}

fn read_into(file: &OpenFile, into: Option<&JsValue>, ctx: &mut Context) -> JsResult<JsValue> {
    let into = into.filter(|v| !v.is_null_or_undefined()).ok_or_else(|| {
        fs_error(
            Kind::Type,
            "read() failed; reason: into argument cannot be null or undefined",
            ctx,
        )
    })?;
    let not_uint8 = |ctx: &mut Context| {
        fs_error(
            Kind::Type,
            "read() failed; reason: into argument must be a Uint8Array",
            ctx,
        )
    };
    let Some(obj) = into.as_object() else {
        return Err(not_uint8(ctx));
    };
    // k6 checks the constructor, not the internal slot.
    let uint8 = ctx
        .intrinsics()
        .constructors()
        .typed_uint8_array()
        .constructor();
    let constructor = obj.get(js_string!("constructor"), ctx)?;
    let same = constructor
        .as_object()
        .is_some_and(|c| JsObject::equals(&c, &uint8));
    let Some(array) = same
        .then(|| JsUint8Array::from_object(obj.clone()).ok())
        .flatten()
    else {
        return Err(not_uint8(ctx));
    };
    let buffer = array
        .buffer(ctx)?
        .as_object()
        .and_then(|b| JsArrayBuffer::from_object(b.clone()).ok())
        .ok_or_else(|| not_uint8(ctx))?;
    let start = file.offset.get();
    if start >= file.data.len() {
        return Ok(JsValue::null());
    }
    // As k6: the bytes go to the start of the array's whole buffer, whatever the view's
    // offset and length.
    let Some(mut bytes) = buffer.data_mut() else {
        return Err(not_uint8(ctx));
    };
    let n = bytes.len().min(file.data.len() - start);
    bytes[..n].copy_from_slice(&file.data[start..start + n]);
    file.offset.set(start + n);
    Ok(number(n))
}

/// `file.seek(offset, whence)`: a promise of the new offset.
fn seek(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let file = this_file(this)?;
    let result = seek_to(&file, args, ctx);
    settle(result, ctx)
}

/// An integer argument as k6 reads it: a number with no fraction.
fn integer(v: Option<&JsValue>, what: &str, ctx: &mut Context) -> JsResult<i64> {
    let fail = |why: &str, ctx: &mut Context| {
        fs_error(
            Kind::Type,
            &format!("seek() failed; reason: the {what} argument {why}"),
            ctx,
        )
    };
    match v {
        None => Err(fail("cannot be null or undefined", ctx)),
        Some(v) if v.is_null_or_undefined() => Err(fail("cannot be null or undefined", ctx)),
        Some(v) => match v.as_number() {
            Some(n) if n.is_finite() && n.fract() == 0.0 => Ok(n as i64),
            _ => Err(fail("must be a number", ctx)),
        },
    }
}

fn seek_to(file: &OpenFile, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let offset = integer(args.first(), "offset", ctx)?;
    let whence = integer(args.get(1), "whence", ctx)?;
    let size = file.data.len() as i64;
    let type_error = |m: &str, ctx: &mut Context| fs_error(Kind::Type, m, ctx);
    let target = match whence {
        SEEK_START if offset < 0 => {
            return Err(type_error(
                "offset cannot be negative when using SeekModeStart",
                ctx,
            ))
        }
        SEEK_START => offset,
        SEEK_CURRENT => file.offset.get() as i64 + offset,
        SEEK_END if offset > 0 => {
            return Err(type_error(
                "offset cannot be positive when using SeekModeEnd",
                ctx,
            ))
        }
        // k6 counts from the last byte, not from the end: `seek(0, End)` is `size - 1`.
        SEEK_END => size - 1 + offset,
        _ => {
            return Err(type_error(
                "seek() failed; reason: the whence argument must be a SeekMode",
                ctx,
            ))
        }
    };
    if target < 0 {
        return Err(type_error("seeking before start of file", ctx));
    }
    if target > size {
        return Err(type_error("seeking beyond end of file", ctx));
    }
    file.offset.set(target as usize);
    Ok(number(target as usize))
}

#[cfg(test)]
mod tests;
