//! WebCrypto failures, named like the `DOMException`s browsers and k6 reject with.

use boa_engine::{js_string, Context, JsError, JsObject, JsString};

use crate::value::{define, plain_object};

/// The `DOMException` names WebCrypto uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorName {
    /// The algorithm, format or parameter is valid WebCrypto but not implemented.
    NotSupported,
    /// The key cannot be used for this operation (usage, algorithm, extractability).
    InvalidAccess,
    /// The operation failed (bad ciphertext, wrong lengths...).
    Operation,
    /// Key material is malformed.
    Data,
    /// Key usages are invalid for the algorithm.
    Syntax,
    /// A parameter has the wrong type.
    Type,
}

impl ErrorName {
    fn as_str(self) -> &'static str {
        match self {
            ErrorName::NotSupported => "NotSupportedError",
            ErrorName::InvalidAccess => "InvalidAccessError",
            ErrorName::Operation => "OperationError",
            ErrorName::Data => "DataError",
            ErrorName::Syntax => "SyntaxError",
            ErrorName::Type => "TypeError",
        }
    }
}

/// A WebCrypto operation's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", .name.as_str())]
pub(crate) struct CryptoError {
    /// The exception name scripts see in `e.name`.
    pub(crate) name: ErrorName,
    /// The text in `e.message`.
    pub(crate) message: String,
}

impl CryptoError {
    /// An error named `name`.
    pub(crate) fn new(name: ErrorName, message: impl Into<String>) -> Self {
        CryptoError {
            name,
            message: message.into(),
        }
    }

    /// The JS value a promise rejects with: an object with `name` and `message` that
    /// inherits `Error.prototype` (so `String(e)` reads "Name: message").
    pub(crate) fn to_js(&self, ctx: &mut Context) -> JsError {
        let obj: JsObject = plain_object(ctx);
        let proto = ctx.intrinsics().constructors().error().prototype();
        obj.set_prototype(Some(proto));
        define(&obj, js_string!("name"), JsString::from(self.name.as_str()));
        define(
            &obj,
            js_string!("message"),
            JsString::from(self.message.as_str()),
        );
        JsError::from_opaque(obj.into())
    }
}

/// Why a WebCrypto call rejects: a named WebCrypto error, or an exception the script's own
/// values threw (a getter, a bad conversion).
#[derive(Debug)]
pub(crate) enum Fail {
    /// A WebCrypto error.
    Crypto(CryptoError),
    /// An exception from the engine.
    Js(JsError),
}

impl From<CryptoError> for Fail {
    fn from(e: CryptoError) -> Self {
        Fail::Crypto(e)
    }
}

impl From<JsError> for Fail {
    fn from(e: JsError) -> Self {
        Fail::Js(e)
    }
}

/// Shorthand for a failure named `name`.
pub(crate) fn fail(name: ErrorName, message: impl Into<String>) -> Fail {
    Fail::Crypto(CryptoError::new(name, message))
}
