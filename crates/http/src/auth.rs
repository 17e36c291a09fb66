//! Request authentication schemes (k6's `auth` param) and the Digest challenge round trip.
//!
//! Basic needs nothing here: credentials in the URL become a `Basic` header when the request
//! is built. Digest works as k6's client does: the hop goes out first without a Digest
//! answer (Basic from the URL included, as Go's client adds it), and a `401` carrying a
//! Digest challenge is answered once by resending the same hop with `Authorization: Digest`.
//! Both requests are hops of their own (own samples, own `http_reqs`).

use http::HeaderMap;
use http_auth::{parse_challenges, DigestClient, ParamValue, PasswordParams};

use crate::headers::{credentials, path_and_query};
use crate::redirect::HopRequest;

/// How a request authenticates with the credentials of its URL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Basic` from the URL's credentials (the default, and `auth: "basic"`).
    #[default]
    Basic,
    /// HTTP Digest (RFC 7616: MD5, SHA-256, their `-sess` forms, qop `auth`/`auth-int`).
    Digest,
}

/// The `Authorization` value answering the first usable Digest challenge among the
/// `WWW-Authenticate` headers of a 401 to `hop`; `None` when there is none to answer
/// (the 401 is then the response, as a server refusing Digest meant it).
pub(crate) fn digest_answer(headers: &HeaderMap, hop: &HopRequest) -> Option<String> {
    let (username, password) = credentials(&hop.url);
    let params = PasswordParams {
        username: &username,
        password: &password,
        uri: path_and_query(&hop.url),
        method: hop.method.as_str(),
        // Without the body the answer uses qop `auth`, the one k6 always answers with.
        body: None,
    };
    headers
        .get_all(http::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| parse_challenges(v).ok())
        .flatten()
        .filter(|c| c.scheme.eq_ignore_ascii_case("digest"))
        .find_map(|mut c| {
            // k6 answers an `auth-int`-only challenge with qop `auth` too, and servers such
            // as httpbin accept it; the crate would otherwise refuse to answer.
            for (k, v) in &mut c.params {
                if k.eq_ignore_ascii_case("qop") {
                    *v = ParamValue::try_from_escaped("auth").ok()?;
                }
            }
            DigestClient::try_from(&c).ok()?.respond(&params).ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::{HeaderValue, Method};
    use url::Url;

    fn hop(url: &str, body: &'static [u8]) -> HopRequest {
        HopRequest {
            method: Method::GET,
            url: Url::parse(url).unwrap(),
            headers: Vec::new(),
            body: Bytes::from_static(body),
            sensitive: true,
        }
    }

    fn challenge(v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.append(http::header::WWW_AUTHENTICATE, HeaderValue::from_static(v));
        h
    }

    /// A field of a Digest answer, unquoted.
    fn field<'a>(answer: &'a str, name: &str) -> &'a str {
        let start = answer.find(&format!("{name}=")).unwrap() + name.len() + 1;
        let rest = &answer[start..];
        let rest = rest.strip_prefix('"').unwrap_or(rest);
        &rest[..rest.find(['"', ',']).unwrap_or(rest.len())]
    }

    fn md5_hex(s: &str) -> String {
        use md5_digest::Digest as _;
        format!("{:x}", md5_digest::Md5::digest(s))
    }

    #[test]
    fn answers_md5_with_qop_auth_as_rfc_2617_computes_it() {
        let h = challenge(
            r#"Digest realm="me@x", nonce="abc", opaque="o1", qop="auth", algorithm=MD5, stale=False"#,
        );
        let a = digest_answer(&h, &hop("http://us%40er:pa%3As@h.test/p/a?q=1", b"")).unwrap();
        assert!(a.starts_with("Digest "), "{a}");
        assert_eq!(field(&a, "username"), "us@er");
        assert_eq!(field(&a, "uri"), "/p/a?q=1");
        assert_eq!(field(&a, "nc"), "00000001");
        assert_eq!(field(&a, "opaque"), "o1");
        let ha1 = md5_hex("us@er:me@x:pa:s");
        let ha2 = md5_hex("GET:/p/a?q=1");
        let cnonce = field(&a, "cnonce");
        let expected = md5_hex(&format!("{ha1}:abc:00000001:{cnonce}:auth:{ha2}"));
        assert_eq!(field(&a, "response"), expected);
    }

    #[test]
    fn answers_sha256_and_auth_int_only_challenges_with_qop_auth() {
        let h = challenge(r#"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256"#);
        let a = digest_answer(&h, &hop("http://u:p@h.test/", b"body")).unwrap();
        assert_eq!(field(&a, "algorithm"), "SHA-256");
        assert_eq!(field(&a, "qop"), "auth");
        assert_eq!(field(&a, "response").len(), 64);
    }

    #[test]
    fn picks_the_digest_challenge_among_several() {
        let mut h = challenge(r#"Basic realm="b""#);
        h.append(
            http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Negotiate, Digest realm="d", nonce="n", qop="auth""#),
        );
        let a = digest_answer(&h, &hop("http://u:p@h.test/", b"")).unwrap();
        assert_eq!(field(&a, "realm"), "d");
    }

    #[test]
    fn no_answer_without_a_usable_digest_challenge() {
        let none = |v: &'static str| digest_answer(&challenge(v), &hop("http://u:p@h/", b""));
        assert_eq!(none(r#"Basic realm="b""#), None);
        assert_eq!(none(r#"Digest realm="r""#), None, "no nonce");
        assert_eq!(none("Digest realm=\"r\", nonce=\"n\", algorithm=FOO"), None);
        assert_eq!(none("garbage ,,, \"x"), None);
        assert_eq!(
            digest_answer(&HeaderMap::new(), &hop("http://h/", b"")),
            None
        );
    }
}
