//! The `k6/crypto` module (digests, HMAC, random bytes), and the digests and random numbers
//! the global `crypto` object (`webcrypto`) uses too.

use boa_engine::object::builtins::JsFunction;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    NativeFunction,
};
use boa_gc::{Finalize, Trace};
use hmac::digest::{FixedOutput, KeyInit, Update};
use hmac::Hmac;

use super::encoding::{require_bytes, Variant};
use super::synthetic::Export;
use crate::value::array_buffer;

pub(super) fn functions() -> Vec<Export> {
    vec![
        ("createHash", 1, NativeFunction::from_fn_ptr(create_hash)),
        ("createHMAC", 2, NativeFunction::from_fn_ptr(create_hmac)),
        ("hexEncode", 1, NativeFunction::from_fn_ptr(hex_encode)),
        ("hmac", 4, NativeFunction::from_fn_ptr(hmac_fn)),
        ("md4", 2, NativeFunction::from_fn_ptr(md4)),
        ("md5", 2, NativeFunction::from_fn_ptr(md5)),
        ("randomBytes", 1, NativeFunction::from_fn_ptr(random_bytes)),
        ("ripemd160", 2, NativeFunction::from_fn_ptr(ripemd160)),
        ("sha1", 2, NativeFunction::from_fn_ptr(sha1)),
        ("sha256", 2, NativeFunction::from_fn_ptr(sha256)),
        ("sha384", 2, NativeFunction::from_fn_ptr(sha384)),
        ("sha512", 2, NativeFunction::from_fn_ptr(sha512)),
        ("sha512_224", 2, NativeFunction::from_fn_ptr(sha512_224)),
        ("sha512_256", 2, NativeFunction::from_fn_ptr(sha512_256)),
    ]
}

/// A running hash or HMAC. (Simpler than `DynDigest`, which HMAC only implements with hmac's `reset` feature.)
pub(crate) trait RunningHash {
    /// Feeds more input.
    fn update(&mut self, data: &[u8]);
    /// The digest of everything fed so far; the state stays usable.
    fn finish(&self) -> Vec<u8>;
}

impl<T: Update + FixedOutput + Clone> RunningHash for T {
    fn update(&mut self, data: &[u8]) {
        Update::update(self, data);
    }
    fn finish(&self) -> Vec<u8> {
        self.clone().finalize_fixed().to_vec()
    }
}

/// The hash algorithms k6 names (lower case, exactly as written here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Md4,
    Md5,
    Sha1,
    Sha256,
    Sha384,
    Sha512,
    Sha512_224,
    Sha512_256,
    Ripemd160,
}

impl Algorithm {
    pub(crate) fn from_name(name: &str) -> Option<Algorithm> {
        Some(match name {
            "md4" => Algorithm::Md4,
            "md5" => Algorithm::Md5,
            "sha1" => Algorithm::Sha1,
            "sha256" => Algorithm::Sha256,
            "sha384" => Algorithm::Sha384,
            "sha512" => Algorithm::Sha512,
            "sha512_224" => Algorithm::Sha512_224,
            "sha512_256" => Algorithm::Sha512_256,
            "ripemd160" => Algorithm::Ripemd160,
            _ => return None,
        })
    }

    /// A fresh hasher, keyed (HMAC) when `key` is given.
    pub(crate) fn hasher(self, key: Option<&[u8]>) -> Box<dyn RunningHash> {
        // HMAC takes keys of any length, so `new_from_slice` cannot fail.
        macro_rules! make {
            ($d:ty) => {
                match key {
                    None => Box::new(<$d>::default()) as Box<dyn RunningHash>,
                    Some(k) => Box::new(
                        <Hmac<$d> as KeyInit>::new_from_slice(k)
                            .expect("HMAC accepts any key length"),
                    ),
                }
            };
        }
        match self {
            Algorithm::Md4 => make!(md4::Md4),
            Algorithm::Md5 => make!(md5_digest::Md5),
            Algorithm::Sha1 => make!(sha1::Sha1),
            Algorithm::Sha256 => make!(sha2::Sha256),
            Algorithm::Sha384 => make!(sha2::Sha384),
            Algorithm::Sha512 => make!(sha2::Sha512),
            Algorithm::Sha512_224 => make!(sha2::Sha512_224),
            Algorithm::Sha512_256 => make!(sha2::Sha512_256),
            Algorithm::Ripemd160 => make!(ripemd::Ripemd160),
        }
    }

    pub(crate) fn digest(self, key: Option<&[u8]>, data: &[u8]) -> Vec<u8> {
        let mut h = self.hasher(key);
        h.update(data);
        h.finish()
    }
}

/// The text forms of a digest; `None` for an unknown encoding. `binary` is handled by the caller.
pub(crate) fn encode_text(bytes: &[u8], encoding: &str) -> Option<String> {
    Some(match encoding {
        "hex" => hex::encode(bytes),
        "base64" => Variant::Std.encode(bytes),
        "base64url" => Variant::Url.encode(bytes),
        "base64rawurl" => Variant::RawUrl.encode(bytes),
        _ => return None,
    })
}

/// Encodes a digest as `outputEncoding` asks: a string, or an `ArrayBuffer` for `binary`.
fn encode_output(bytes: &[u8], encoding: Option<&JsValue>, ctx: &mut Context) -> JsResult<JsValue> {
    let name = match encoding {
        Some(v) if !v.is_undefined() && !v.is_null() => v.to_string(ctx)?.to_std_string_lossy(),
        _ => String::new(),
    };
    if name == "binary" {
        return array_buffer(bytes, ctx);
    }
    match encode_text(bytes, &name) {
        Some(text) => Ok(JsString::from(text.as_str()).into()),
        None => Err(JsNativeError::typ()
            .with_message(format!("invalid output encoding: {name}"))
            .into()),
    }
}

fn algorithm_arg(value: Option<&JsValue>, ctx: &mut Context) -> JsResult<Algorithm> {
    let name = value
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_lossy();
    Algorithm::from_name(&name).ok_or_else(|| {
        JsNativeError::typ()
            .with_message(format!("invalid algorithm: {name}"))
            .into()
    })
}

fn digest_fn(
    algorithm: Algorithm,
    name: &str,
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let data = require_bytes(args.first(), Some(name), ctx)?;
    let out = algorithm.digest(None, &data);
    encode_output(&out, args.get(1), ctx)
}

macro_rules! digest_fns {
    ($($f:ident => $alg:ident),* $(,)?) => {
        $(
            /// `name(input, outputEncoding)`.
            fn $f(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
                digest_fn(Algorithm::$alg, stringify!($f), args, ctx)
            }
        )*
    };
}

digest_fns!(
    md4 => Md4,
    md5 => Md5,
    sha1 => Sha1,
    sha256 => Sha256,
    sha384 => Sha384,
    sha512 => Sha512,
    sha512_224 => Sha512_224,
    sha512_256 => Sha512_256,
    ripemd160 => Ripemd160,
);

/// `hmac(algorithm, secret, data, outputEncoding)`.
fn hmac_fn(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let algorithm = algorithm_arg(args.first(), ctx)?;
    let key = require_bytes(args.get(1), None, ctx)?;
    let data = require_bytes(args.get(2), None, ctx)?;
    let out = algorithm.digest(Some(&key), &data);
    encode_output(&out, args.get(3), ctx)
}

/// The running state behind a `createHash`/`createHMAC` object.
#[derive(Trace, Finalize, JsData)]
struct Hasher {
    #[unsafe_ignore_trace]
    state: Box<dyn RunningHash>,
}

fn hasher_object(state: Box<dyn RunningHash>, ctx: &mut Context) -> JsObject {
    let digest = method(ctx, hasher_digest, "digest", 1);
    let update = method(ctx, hasher_update, "update", 1);
    ObjectInitializer::with_native_data(Hasher { state }, ctx)
        .property(js_string!("digest"), digest, Attribute::all())
        .property(js_string!("update"), update, Attribute::all())
        .build()
}

/// A function for an enumerable method property (k6's objects list their methods in
/// `Object.keys`).
pub(crate) fn method(
    ctx: &mut Context,
    f: fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>,
    name: &str,
    length: usize,
) -> JsFunction {
    FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(f))
        .name(JsString::from(name))
        .length(length)
        .build()
}

/// `createHash(algorithm)`.
fn create_hash(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let algorithm = algorithm_arg(args.first(), ctx)?;
    Ok(hasher_object(algorithm.hasher(None), ctx).into())
}

/// `createHMAC(algorithm, secret)`.
fn create_hmac(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let algorithm = algorithm_arg(args.first(), ctx)?;
    let key = require_bytes(args.get(1), None, ctx)?;
    Ok(hasher_object(algorithm.hasher(Some(&key)), ctx).into())
}

fn this_hasher(this: &JsValue) -> JsResult<JsObject> {
    this.as_object()
        .filter(|o| o.downcast_ref::<Hasher>().is_some())
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("update() and digest() must be called on a hasher object")
                .into()
        })
}

/// `hasher.update(data)`: adds `data`; returns the hasher so calls can be chained.
fn hasher_update(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let obj = this_hasher(this)?;
    let data = require_bytes(args.first(), None, ctx)?;
    if let Some(mut h) = obj.downcast_mut::<Hasher>() {
        h.state.update(&data);
    }
    Ok(obj.into())
}

/// `hasher.digest(outputEncoding)`: the digest of everything added so far. Like k6 it does
/// not reset the hasher: later updates continue from the same state.
fn hasher_digest(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let obj = this_hasher(this)?;
    let out = match obj.downcast_ref::<Hasher>() {
        Some(h) => h.state.finish(),
        None => Vec::new(),
    };
    encode_output(&out, args.first(), ctx)
}

/// `randomBytes(size)`: an `ArrayBuffer` of `size` random bytes (`size` must be at least 1).
fn random_bytes(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let size = args.first().cloned().unwrap_or_default().to_number(ctx)?;
    if !(size >= 1.0 && size <= f64::from(u32::MAX)) {
        return Err(JsNativeError::range().with_message("invalid size").into());
    }
    let mut bytes = vec![0u8; size as usize];
    fill_random(&mut bytes)?;
    array_buffer(&bytes, ctx)
}

/// `hexEncode(data)`: lower-case hex of a string's UTF-8 bytes or of a buffer.
fn hex_encode(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let data = require_bytes(args.first(), None, ctx)?;
    Ok(JsString::from(hex::encode(data).as_str()).into())
}

/// Fills `bytes` from the operating system's random source.
pub(crate) fn fill_random(bytes: &mut [u8]) -> JsResult<()> {
    getrandom::getrandom(bytes).map_err(|e| {
        JsNativeError::error()
            .with_message(format!("no random numbers from the operating system: {e}"))
            .into()
    })
}

/// A random (version 4) UUID in its lower-case hyphenated form.
pub(crate) fn random_uuid() -> JsResult<String> {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes)?;
    Ok(uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::{encode_text, random_uuid, Algorithm};

    fn hex_digest(alg: Algorithm, data: &[u8]) -> String {
        hex::encode(alg.digest(None, data))
    }

    fn hex_hmac(alg: Algorithm, key: &[u8], data: &[u8]) -> String {
        hex::encode(alg.digest(Some(key), data))
    }

    #[test]
    fn digests_of_abc() {
        // FIPS 180 / RFC 1320 / RFC 1321 / RIPEMD-160 reference vectors for "abc".
        let cases = [
            (Algorithm::Md4, "a448017aaf21d8525fc10ae87aa6729d"),
            (Algorithm::Md5, "900150983cd24fb0d6963f7d28e17f72"),
            (Algorithm::Sha1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (
                Algorithm::Sha256,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                Algorithm::Sha384,
                "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed\
                 8086072ba1e7cc2358baeca134c825a7",
            ),
            (
                Algorithm::Sha512,
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
                 2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            ),
            (
                Algorithm::Sha512_224,
                "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa",
            ),
            (
                Algorithm::Sha512_256,
                "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23",
            ),
            (
                Algorithm::Ripemd160,
                "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc",
            ),
        ];
        for (alg, want) in cases {
            assert_eq!(hex_digest(alg, b"abc"), want, "{alg:?}");
        }
    }

    #[test]
    fn digests_of_empty_input() {
        assert_eq!(
            hex_digest(Algorithm::Md5, b""),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
        assert_eq!(
            hex_digest(Algorithm::Sha256, b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn hmac_sha256_rfc4231() {
        // Test case 1.
        assert_eq!(
            hex_hmac(Algorithm::Sha256, &[0x0b; 20], b"Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2.
        assert_eq!(
            hex_hmac(Algorithm::Sha256, b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 3.
        assert_eq!(
            hex_hmac(Algorithm::Sha256, &[0xaa; 20], &[0xdd; 50]),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        );
        // Test case 6: a key longer than the block size.
        assert_eq!(
            hex_hmac(
                Algorithm::Sha256,
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn hmac_other_algorithms() {
        // RFC 2202 test case 2 for MD5 and SHA-1; RFC 4231 test case 2 for SHA-512.
        assert_eq!(
            hex_hmac(Algorithm::Md5, b"Jefe", b"what do ya want for nothing?"),
            "750c783e6ab0b503eaa86e310a5db738"
        );
        assert_eq!(
            hex_hmac(Algorithm::Sha1, b"Jefe", b"what do ya want for nothing?"),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
        assert_eq!(
            hex_hmac(Algorithm::Sha512, b"Jefe", b"what do ya want for nothing?"),
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554\
             9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
    }

    #[test]
    fn output_encodings() {
        let md5 = Algorithm::Md5.digest(None, b"abc");
        assert_eq!(
            encode_text(&md5, "hex").unwrap(),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(
            encode_text(&md5, "base64").unwrap(),
            "kAFQmDzST7DWlj99KOF/cg=="
        );
        assert_eq!(
            encode_text(&md5, "base64url").unwrap(),
            "kAFQmDzST7DWlj99KOF_cg=="
        );
        assert_eq!(
            encode_text(&md5, "base64rawurl").unwrap(),
            "kAFQmDzST7DWlj99KOF_cg"
        );
        assert!(encode_text(&md5, "HEX").is_none());
        assert!(encode_text(&md5, "").is_none());
    }

    #[test]
    fn algorithm_names_are_exact() {
        assert_eq!(
            Algorithm::from_name("sha512_224"),
            Some(Algorithm::Sha512_224)
        );
        assert_eq!(Algorithm::from_name("SHA256"), None);
        assert_eq!(Algorithm::from_name("sha-256"), None);
    }

    #[test]
    fn streaming_equals_one_shot() {
        let mut h = Algorithm::Sha256.hasher(Some(b"key"));
        h.update(b"The quick brown fox ");
        h.update(b"jumps over the lazy dog");
        assert_eq!(
            hex::encode(h.finish()),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
    }

    #[test]
    fn uuids_are_version_4() {
        let a = random_uuid().unwrap();
        let b = random_uuid().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
        assert!(a
            .bytes()
            .all(|c| c == b'-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }
}
