//! `CryptoKey` objects: the key material and its algorithm live in native data; `type`,
//! `extractable`, `algorithm` and `usages` are plain properties for scripts to read.

use std::rc::Rc;

use boa_engine::object::builtins::{JsArray, JsUint8Array};
use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, Finalize, JsData, JsObject, JsString, JsValue, Trace};

use super::algorithm::{KeyAlgorithm, Usage};
use super::ec::EcKey;
use super::error::{fail, ErrorName, Fail};
use super::rsa_keys::RsaKey;
use crate::value::{define, plain_object};

/// What a key holds.
#[derive(Debug)]
pub(crate) enum Material {
    /// The bytes of an HMAC or AES key.
    Secret(Vec<u8>),
    /// An elliptic-curve key, private or public.
    Ec(EcKey),
    /// An RSA key, private or public.
    Rsa(RsaKey),
}

/// A key's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyType {
    Secret,
    Private,
    Public,
}

impl KeyType {
    /// The `type` property's value.
    pub(crate) fn name(self) -> &'static str {
        match self {
            KeyType::Secret => "secret",
            KeyType::Private => "private",
            KeyType::Public => "public",
        }
    }
}

impl Material {
    /// Whether this is a secret, a private or a public key.
    pub(crate) fn key_type(&self) -> KeyType {
        match self {
            Material::Secret(_) => KeyType::Secret,
            Material::Ec(k) if k.is_private() => KeyType::Private,
            Material::Rsa(k) if k.is_private() => KeyType::Private,
            Material::Ec(_) | Material::Rsa(_) => KeyType::Public,
        }
    }
}

/// The internal slots of a `CryptoKey`. The material is shared, so reading a key out of
/// its object for each call copies no key bytes.
#[derive(Debug, Clone, Trace, Finalize, JsData)]
pub(crate) struct CryptoKey {
    #[unsafe_ignore_trace]
    pub(crate) algorithm: KeyAlgorithm,
    pub(crate) extractable: bool,
    #[unsafe_ignore_trace]
    pub(crate) usages: Vec<Usage>,
    #[unsafe_ignore_trace]
    pub(crate) material: Rc<Material>,
}

impl CryptoKey {
    /// A key of `algorithm` holding `material`.
    pub(crate) fn new(
        algorithm: KeyAlgorithm,
        extractable: bool,
        usages: Vec<Usage>,
        material: Material,
    ) -> CryptoKey {
        CryptoKey {
            algorithm,
            extractable,
            usages,
            material: Rc::new(material),
        }
    }

    /// Whether this is a secret, a private or a public key.
    pub(crate) fn key_type(&self) -> KeyType {
        self.material.key_type()
    }

    /// The bytes of a secret key.
    pub(crate) fn secret(&self) -> Option<&[u8]> {
        match &*self.material {
            Material::Secret(s) => Some(s),
            _ => None,
        }
    }

    /// Fails unless the key was made for `usage`, with k6's message for `op`.
    pub(crate) fn require(&self, usage: Usage, op: &str) -> Result<(), Fail> {
        if self.usages.contains(&usage) {
            return Ok(());
        }
        let whose = match op {
            "encrypt" | "decrypt" | "wrapKey" | "unwrapKey" | "deriveKey" => format!("{op}'s key"),
            "deriveBits" => "provided baseKey".to_string(),
            _ => "key".to_string(),
        };
        Err(fail(
            ErrorName::InvalidAccess,
            format!("{whose} does not contain the '{}' usage", usage.name()),
        ))
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
        let kind = JsString::from(self.key_type().name());
        ObjectInitializer::with_native_data(self, ctx)
            .property(js_string!("type"), kind, Attribute::all())
            .property(js_string!("extractable"), extractable, Attribute::all())
            .property(js_string!("algorithm"), algorithm, Attribute::all())
            .property(js_string!("usages"), usages, Attribute::all())
            .build()
    }

    /// The key behind a JS value, if it is a `CryptoKey`.
    pub(crate) fn from_value(value: Option<&JsValue>) -> Option<CryptoKey> {
        let obj = value.and_then(JsValue::as_object)?;
        let key = obj.downcast_ref::<CryptoKey>().map(|k| k.clone());
        key
    }
}

/// The `{privateKey, publicKey}` object of a generated key pair.
pub(crate) fn pair_object(private: CryptoKey, public: CryptoKey, ctx: &mut Context) -> JsObject {
    let private = private.into_object(ctx);
    let public = public.into_object(ctx);
    let pair = plain_object(ctx);
    define(&pair, js_string!("privateKey"), private);
    define(&pair, js_string!("publicKey"), public);
    pair
}

/// The `algorithm` dictionary of a key, as WebCrypto shapes it.
fn algorithm_object(algorithm: KeyAlgorithm, ctx: &mut Context) -> JsObject {
    let obj = plain_object(ctx);
    define(&obj, js_string!("name"), JsString::from(algorithm.name()));
    let hash_object = |hash: super::algorithm::Hash, ctx: &mut Context| {
        let h = plain_object(ctx);
        define(&h, js_string!("name"), JsString::from(hash.name()));
        h
    };
    match algorithm {
        KeyAlgorithm::Hmac { hash, length } => {
            let h = hash_object(hash, ctx);
            define(&obj, js_string!("hash"), h);
            define(&obj, js_string!("length"), bits(length));
        }
        KeyAlgorithm::Aes { length, .. } => {
            define(&obj, js_string!("length"), bits(length));
        }
        KeyAlgorithm::Ec { curve, .. } => {
            define(&obj, js_string!("namedCurve"), JsString::from(curve.name()));
        }
        KeyAlgorithm::Rsa {
            hash,
            modulus_length,
            public_exponent,
            ..
        } => {
            define(&obj, js_string!("modulusLength"), bits(modulus_length));
            let bytes = public_exponent.to_be_bytes();
            let start = bytes
                .iter()
                .position(|b| *b != 0)
                .unwrap_or(bytes.len() - 1);
            // A `BigInteger`: a big-endian Uint8Array without leading zeros.
            if let Ok(exponent) = JsUint8Array::from_iter(bytes[start..].iter().copied(), ctx) {
                define(&obj, js_string!("publicExponent"), exponent);
            }
            let h = hash_object(hash, ctx);
            define(&obj, js_string!("hash"), h);
        }
        KeyAlgorithm::Kdf(_) => {}
    }
    obj
}

/// A key length as a JS integer (so it serialises as `256`, not `256.0`).
fn bits(length: usize) -> JsValue {
    i32::try_from(length).map_or(JsValue::from(length as f64), JsValue::from)
}
