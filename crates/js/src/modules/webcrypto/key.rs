//! `CryptoKey` objects: the secret and its algorithm live in native data; `type`,
//! `extractable`, `algorithm` and `usages` are plain properties for scripts to read.

use boa_engine::object::builtins::JsArray;
use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, Finalize, JsData, JsObject, JsString, JsValue, Trace};

use super::algorithm::{KeyAlgorithm, Usage};
use super::error::{fail, ErrorName, Fail};
use crate::value::{define, plain_object};

/// The internal slots of a secret `CryptoKey`.
#[derive(Debug, Clone, Trace, Finalize, JsData)]
pub(crate) struct SecretKey {
    #[unsafe_ignore_trace]
    pub(crate) algorithm: KeyAlgorithm,
    pub(crate) extractable: bool,
    #[unsafe_ignore_trace]
    pub(crate) usages: Vec<Usage>,
    pub(crate) secret: Vec<u8>,
}

impl SecretKey {
    /// Fails unless the key was made for `usage`.
    pub(crate) fn require(&self, usage: Usage) -> Result<(), Fail> {
        if self.usages.contains(&usage) {
            Ok(())
        } else {
            Err(fail(
                ErrorName::InvalidAccess,
                format!("the key does not have the '{}' usage", usage.name()),
            ))
        }
    }

    /// The JS `CryptoKey` object for this key.
    pub(crate) fn into_object(self, ctx: &mut Context) -> JsObject {
        let algorithm = algorithm_object(self.algorithm, ctx);
        let usages = JsArray::from_iter(
            self.usages
                .iter()
                .map(|u| JsValue::from(JsString::from(u.name()))),
            ctx,
        );
        let extractable = self.extractable;
        ObjectInitializer::with_native_data(self, ctx)
            .property(js_string!("type"), js_string!("secret"), Attribute::all())
            .property(js_string!("extractable"), extractable, Attribute::all())
            .property(js_string!("algorithm"), algorithm, Attribute::all())
            .property(js_string!("usages"), usages, Attribute::all())
            .build()
    }

    /// The key behind a JS value, if it is a `CryptoKey`.
    pub(crate) fn from_value(value: Option<&JsValue>) -> Result<SecretKey, Fail> {
        let obj = value.and_then(JsValue::as_object);
        let key = obj
            .as_ref()
            .and_then(|o| o.downcast_ref::<SecretKey>().map(|k| k.clone()));
        key.ok_or_else(|| fail(ErrorName::Type, "the key is not a CryptoKey"))
    }
}

/// The `algorithm` dictionary of a key, as WebCrypto shapes it.
fn algorithm_object(algorithm: KeyAlgorithm, ctx: &mut Context) -> JsObject {
    let obj = plain_object(ctx);
    define(&obj, js_string!("name"), JsString::from(algorithm.name()));
    match algorithm {
        KeyAlgorithm::Hmac { hash, length } => {
            let h = plain_object(ctx);
            define(&h, js_string!("name"), JsString::from(hash.name()));
            define(&obj, js_string!("hash"), h);
            define(&obj, js_string!("length"), bits(length));
        }
        KeyAlgorithm::Aes { length, .. } => {
            define(&obj, js_string!("length"), bits(length));
        }
    }
    obj
}

/// A key length as a JS integer (so it serialises as `256`, not `256.0`).
fn bits(length: usize) -> JsValue {
    i32::try_from(length).map_or(JsValue::from(length as f64), JsValue::from)
}
