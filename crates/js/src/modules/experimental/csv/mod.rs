//! The `k6/experimental/csv` module: `parse(file, options)` (a promise of a `SharedArray`
//! of the file's records, read once per test) and `new Parser(file, options)` with
//! `next()` (a promise of `{done, value}`, one record at a time). Input is a
//! `k6/experimental/fs` `File`; records are read as Go's `encoding/csv` reads them
//! (records.rs).

mod records;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use boa_engine::object::builtins::{JsArray, JsPromise};
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsError, JsObject, JsResult, JsString, JsValue, Module,
    NativeFunction, Trace,
};

use super::fs::{file_of, OpenFile};
use crate::host::{Host, Phase};
use crate::modules::args::arg;
use crate::modules::data::{shared_view, SharedArrays, SharedData};
use crate::modules::go_error::{go_error, go_value, message_object, with_message};
use crate::value::define;
use records::{RecordError, Records};

/// The options k6 reads, with its defaults.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    delimiter: u8,
    skip_first_line: bool,
    from_line: Option<i64>,
    to_line: Option<i64>,
    as_objects: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            delimiter: b',',
            skip_first_line: false,
            from_line: None,
            to_line: None,
            as_objects: false,
        }
    }
}

/// Builds the `k6/experimental/csv` module.
pub(crate) fn module(ctx: &mut Context) -> Module {
    let realm = ctx.realm().clone();
    let parser = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(new_parser))
        .name(js_string!("Parser"))
        .length(2)
        .constructor(true)
        .build();
    let parse = FunctionObjectBuilder::new(&realm, NativeFunction::from_fn_ptr(parse))
        .name(js_string!("parse"))
        .length(2)
        .build();
    let object = ObjectInitializer::new(ctx)
        .property(js_string!("Parser"), parser, Attribute::all())
        .property(js_string!("parse"), parse, Attribute::all())
        .build();
    crate::modules::synthetic::from_object(
        object,
        vec![js_string!("Parser"), js_string!("parse")],
        ctx,
    )
}

fn error(message: String) -> JsError {
    boa_engine::JsNativeError::error()
        .with_message(message)
        .into()
}

/// Reads k6's options from `value` (absent keys keep their defaults).
fn read_options(value: Option<&JsValue>, ctx: &mut Context) -> JsResult<Result<Options, String>> {
    let mut o = Options::default();
    let Some(obj) = value.and_then(JsValue::as_object) else {
        return Ok(Ok(o));
    };
    let get = |key: &str, ctx: &mut Context| -> JsResult<Option<JsValue>> {
        let v = obj.get(JsString::from(key), ctx)?;
        Ok((!v.is_undefined()).then_some(v))
    };
    if let Some(v) = get("delimiter", ctx)? {
        let d = v.to_string(ctx)?.to_std_string_escaped();
        if d.len() != 1 {
            return Ok(Err("delimiter must be a single character".into()));
        }
        o.delimiter = d.as_bytes()[0];
    }
    if let Some(v) = get("skipFirstLine", ctx)? {
        o.skip_first_line = v.to_boolean();
    }
    if let Some(v) = get("fromLine", ctx)? {
        o.from_line = Some(integer(&v, ctx)?);
    }
    if let Some(v) = get("toLine", ctx)? {
        o.to_line = Some(integer(&v, ctx)?);
    }
    if let Some(v) = get("asObjects", ctx)? {
        o.as_objects = v.to_boolean();
    }
    if let (Some(from), Some(to)) = (o.from_line, o.to_line) {
        if from >= to {
            return Ok(Err("fromLine must be less than or equal to toLine".into()));
        }
    }
    Ok(Ok(o))
}

/// `ToInteger`, as Go's `ToInteger` gives it (NaN → 0, clamped).
fn integer(v: &JsValue, ctx: &mut Context) -> JsResult<i64> {
    let n = v.to_number(ctx)?;
    Ok(if n.is_nan() { 0 } else { n as i64 })
}

/// k6's checks of the options together.
fn validate(o: &Options) -> Result<(), String> {
    if o.as_objects && o.skip_first_line {
        return Err("the 'header' option cannot be enabled when 'skipFirstLine' is true".into());
    }
    if o.as_objects && o.from_line.is_some_and(|f| f > 0) {
        return Err(
            "the 'header' option cannot be enabled when 'fromLine' is set to a value greater than 0"
                .into(),
        );
    }
    if let Some(f) = o.from_line.filter(|f| *f < 0) {
        return Err(format!(
            "the 'fromLine' option must be greater than or equal to 0; got {f}"
        ));
    }
    if let Some(t) = o.to_line.filter(|t| *t < 0) {
        return Err(format!(
            "the 'toLine' option must be greater than or equal to 0; got {t}"
        ));
    }
    Ok(())
}

/// A record reader positioned as k6 leaves it: past the header (kept as column names),
/// the skipped first line and the lines before `fromLine`.
struct Reader {
    records: Records,
    options: Options,
    /// How many records were read so far (header and skipped ones included).
    line: i64,
    columns: Option<Vec<String>>,
}

fn end_of_data(r: Option<Result<Vec<String>, RecordError>>) -> Result<Vec<String>, String> {
    match r {
        None => Err("EOF".into()),
        Some(r) => r.map_err(|e| e.to_string()),
    }
}

impl Reader {
    /// Validates the options and skips what they say; the file is consumed from its
    /// offset on (its offset moves to the end).
    fn new(file: &OpenFile, options: Options) -> Result<Reader, String> {
        validate(&options)?;
        let from = file.offset.get().min(file.data.len());
        file.offset.set(file.data.len());
        let mut r = Reader {
            records: Records::new(file.data.clone(), from, options.delimiter),
            options,
            line: 0,
            columns: None,
        };
        if r.options.as_objects {
            let header = end_of_data(r.records.next_record())
                .map_err(|e| format!("failed to read the first line; reason: {e}"))?;
            r.columns = Some(header);
            r.line += 1;
        }
        if r.options.skip_first_line && r.options.from_line.is_none_or(|f| f == 0) {
            end_of_data(r.records.next_record())
                .map_err(|e| format!("failed to skip the first line; reason: {e}"))?;
            r.line += 1;
        }
        if let Some(from) = r.options.from_line.filter(|f| *f > 0) {
            while r.line < from {
                end_of_data(r.records.next_record())
                    .map_err(|e| format!("failed to skip lines until line {from}; reason: {e}"))?;
                r.line += 1;
            }
        }
        Ok(r)
    }

    /// The next record, `None` past `toLine` or the end of the data.
    fn next(&mut self) -> Option<Result<Vec<String>, RecordError>> {
        if self.options.to_line.is_some_and(|t| t > 0 && self.line > t) {
            return None;
        }
        let record = self.records.next_record()?;
        self.line += 1;
        Some(record)
    }
}

/// What k6 says when the first argument is no `File`: Go's `%T` of the JS value.
fn not_a_file(v: Option<&JsValue>) -> String {
    let kind = match v {
        None => "<nil>",
        Some(v) if v.is_undefined() => "sobek.valueUndefined",
        Some(v) if v.is_null() => "sobek.valueNull",
        Some(v) if v.is_boolean() => "sobek.valueBool",
        Some(v) if v.as_number().is_some_and(|n| n.fract() == 0.0) => "sobek.valueInt",
        Some(v) if v.is_number() => "sobek.valueFloat",
        Some(v) => match v.as_string() {
            Some(s) if s.to_std_string_escaped().is_ascii() => "sobek.asciiString",
            Some(_) => "sobek.unicodeString",
            None => "*sobek.Object",
        },
    };
    format!("first argument expected to be a fs.File instance, got {kind} instead")
}

/// The opened file of argument 0: `Err(None)` for an object that is not a `File` (k6 reads
/// it as a `File` with no reader).
fn file_arg(args: &[JsValue]) -> Result<Rc<OpenFile>, Option<String>> {
    match args.first() {
        Some(v) => match file_of(v) {
            Some(f) => Ok(f),
            None if v.is_object() => Err(None),
            None => Err(Some(not_a_file(Some(v)))),
        },
        None => Err(Some(not_a_file(None))),
    }
}

/// `csv.parse(file, options)`.
fn parse(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    // As k6: argument and option errors throw; only reading the records settles the promise.
    let file = match file_arg(args) {
        Ok(f) => f,
        Err(Some(m)) => return Err(go_value(&m, false, ctx)),
        Err(None) => {
            return Err(go_value(
                "failed to create a new parser; reason: the reader cannot be nil",
                true,
                ctx,
            ))
        }
    };
    let options = match read_options(arg(args, 1), ctx)? {
        Ok(o) => o,
        Err(e) => {
            let m = format!("failed to interpret the provided Parser options; reason: {e}");
            return Err(go_value(&m, true, ctx));
        }
    };
    let mut reader = match Reader::new(&file, options.clone()) {
        Ok(r) => r,
        Err(e) => {
            let m = format!("failed to create a new parser; reason: {e}");
            return Err(go_value(&m, true, ctx));
        }
    };
    let name = format!("csv.parse.{}\u{0}{options:?}", file.path);
    let host = Host::of(ctx);
    let arrays = host.shared.program.run_scoped().get::<SharedArrays>();
    let made = arrays.get_or_make(&name, || read_all(&mut reader));
    let result = match made {
        Ok(data) => shared_view(data, ctx).map(JsValue::from),
        Err(e) => Err(go_error(
            &format!("failed to read record; reason: {e}"),
            ctx,
        )),
    };
    Ok(match result {
        Ok(v) => JsPromise::resolve(v, ctx)?,
        Err(e) => JsPromise::reject(e, ctx)?,
    }
    .into())
}

/// Every remaining record as the JSON text of an array (objects with sorted keys, as k6
/// stores them).
fn read_all(reader: &mut Reader) -> Result<SharedData, RecordError> {
    let mut text = String::from("[");
    let mut first = true;
    while let Some(record) = reader.next() {
        let record = record?;
        if !first {
            text.push(',');
        }
        first = false;
        let json = match &reader.columns {
            Some(columns) => {
                let row: BTreeMap<&str, &str> = columns
                    .iter()
                    .map(String::as_str)
                    .zip(record.iter().map(String::as_str))
                    .collect();
                serde_json::to_string(&row)
            }
            None => serde_json::to_string(&record),
        };
        text.push_str(&json.unwrap_or_default());
    }
    text.push(']');
    Ok(SharedData::from_json_array(text).expect("records make a JSON array"))
}

/// Native data of a JS `Parser`.
#[derive(Trace, Finalize, JsData)]
struct ParserData {
    #[unsafe_ignore_trace]
    reader: Rc<RefCell<Reader>>,
}

/// `new csv.Parser(file, options)`.
fn new_parser(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(go_error(
            "csv Parser constructor must be called in the init context",
            ctx,
        ));
    }
    if args.first().is_none_or(JsValue::is_null_or_undefined) {
        return Err(go_error(
            "csv Parser constructor takes at least one non-nil source argument",
            ctx,
        ));
    }
    let file = match file_arg(args) {
        Ok(f) => f,
        Err(Some(m)) => return Err(go_error(&m, ctx)),
        Err(None) => {
            return Err(go_error(
                "failed to create a new parser; reason: the reader cannot be nil",
                ctx,
            ))
        }
    };
    let options = match read_options(arg(args, 1), ctx)? {
        Ok(o) => o,
        Err(e) => {
            return Err(go_error(
                &format!("encountered an error while interpreting Parser options; reason: {e}"),
                ctx,
            ))
        }
    };
    let reader = match Reader::new(&file, options) {
        Ok(r) => r,
        Err(e) => {
            return Err(go_error(
                &format!("failed to create a new parser; reason: {e}"),
                ctx,
            ))
        }
    };
    let proto = ctx.intrinsics().constructors().object().prototype();
    let obj = JsObject::from_proto_and_data(
        proto,
        ParserData {
            reader: Rc::new(RefCell::new(reader)),
        },
    );
    let next = FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(next))
        .name(js_string!("next"))
        .length(0)
        .build();
    define(&obj, js_string!("next"), next);
    Ok(obj.into())
}

/// `parser.next()`: a promise of `{done, value}`; `{done: true, value: []}` at the end.
fn next(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let reader = this
        .as_object()
        .and_then(|o| o.downcast_ref::<ParserData>().map(|d| d.reader.clone()))
        .ok_or_else(|| error("next() was called on something that is not a Parser".into()))?;
    let mut reader = reader.borrow_mut();
    let outcome = match reader.next() {
        None => Ok((true, JsArray::new(ctx)?.into())),
        Some(Ok(record)) => Ok((false, record_value(&record, reader.columns.as_deref(), ctx))),
        Some(Err(e)) => Err(parse_error(&e, ctx)),
    };
    drop(reader);
    let promise = match outcome {
        Ok((done, value)) => {
            let result = ObjectInitializer::new(ctx)
                .property(js_string!("done"), done, Attribute::all())
                .property(js_string!("value"), value, Attribute::all())
                .build();
            JsPromise::resolve(result, ctx)?
        }
        Err(e) => JsPromise::reject(e, ctx)?,
    };
    Ok(promise.into())
}

/// A record as an array of strings, or an object keyed by the header's names.
fn record_value(record: &[String], columns: Option<&[String]>, ctx: &mut Context) -> JsValue {
    match columns {
        Some(columns) => {
            let obj = crate::value::plain_object(ctx);
            for (name, value) in columns.iter().zip(record) {
                define(
                    &obj,
                    JsString::from(name.as_str()),
                    JsString::from(value.as_str()),
                );
            }
            obj.into()
        }
        None => JsArray::from_iter(
            record.iter().map(|s| JsString::from(s.as_str()).into()),
            ctx,
        )
        .into(),
    }
}

/// The Go `csv.ParseError` k6 rejects with: an object of its fields (`start_line`, `line`,
/// `column`, `err`) and methods, whose string form is the message.
fn parse_error(e: &RecordError, ctx: &mut Context) -> JsError {
    let (start_line, line, column) = e.position();
    let message = e.to_string();
    let cause = match e {
        RecordError::FieldCount { .. } => "wrong number of fields",
        RecordError::Parse { bare: true, .. } => "bare \" in non-quoted-field",
        RecordError::Parse { .. } => "extraneous or missing \" in quoted-field",
    };
    let err = message_object(cause, ctx);
    let obj = ObjectInitializer::new(ctx)
        .property(
            js_string!("start_line"),
            start_line as i32,
            Attribute::all(),
        )
        .property(js_string!("line"), line as i32, Attribute::all())
        .property(js_string!("column"), column as i32, Attribute::all())
        .property(js_string!("err"), err.clone(), Attribute::all())
        .build();
    let unwrap = NativeFunction::from_copy_closure_with_captures(
        |_, _, err: &JsObject, _| Ok(err.clone().into()),
        err,
    );
    with_message(&obj, &message, ctx);
    let f = FunctionObjectBuilder::new(ctx.realm(), unwrap)
        .name(js_string!("unwrap"))
        .build();
    define(&obj, js_string!("unwrap"), f);
    JsError::from_opaque(obj.into())
}

#[cfg(test)]
mod tests;
