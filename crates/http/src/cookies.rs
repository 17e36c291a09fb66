//! The per-VU cookie jar: RFC 6265 domain/path/expiry rules from `cookie_store`.

use cookie_store::CookieStore;
use url::Url;

use crate::error::{self, HttpError};

/// Cookies a VU has received; applied to every request and redirect hop.
#[derive(Debug, Default)]
pub struct CookieJar {
    store: CookieStore,
}

impl CookieJar {
    /// An empty jar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes every cookie (k6 does this between iterations unless `noCookiesReset`).
    pub fn clear(&mut self) {
        self.store.clear();
    }

    /// Name/value pairs that a request to `url` would send, in `cookie_store` order.
    pub fn cookies_for_url(&self, url: &Url) -> Vec<(String, String)> {
        self.store
            .get_request_values(url)
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect()
    }

    /// Stores a cookie as if `url` had answered with this `Set-Cookie` header value. Only a
    /// header that does not parse is an error: a cookie the jar's rules refuse (a `Domain`
    /// the URL does not domain-match, an expired one, `HttpOnly` from a non-HTTP URL) is
    /// dropped silently, as Go's cookie jar (k6's) drops it.
    pub fn set(&mut self, url: &Url, set_cookie_header: &str) -> Result<(), HttpError> {
        match self.store.parse(set_cookie_header, url) {
            Err(e @ cookie_store::CookieError::Parse) => Err(HttpError::new(
                error::GENERIC,
                format!("invalid cookie: {e}"),
            )),
            _ => Ok(()),
        }
    }

    /// Deletes cookie `name` from every domain/path that `url` would send it for.
    pub fn delete(&mut self, url: &Url, name: &str) {
        let doomed: Vec<(String, String)> = self
            .store
            .matches(url)
            .into_iter()
            .filter(|c| c.name() == name)
            .map(|c| (domain_of(c), String::from(&c.path)))
            .collect();
        for (domain, path) in doomed {
            self.store.remove(&domain, &path, name);
        }
    }

    /// Deletes every cookie that `url` would send.
    pub fn clear_url(&mut self, url: &Url) {
        let doomed: Vec<(String, String, String)> = self
            .store
            .matches(url)
            .into_iter()
            .map(|c| (domain_of(c), String::from(&c.path), c.name().to_owned()))
            .collect();
        for (domain, path, name) in doomed {
            self.store.remove(&domain, &path, &name);
        }
    }

    /// The underlying store, for callers that need full cookie attributes.
    pub fn store(&self) -> &CookieStore {
        &self.store
    }

    /// Mutable access to the underlying store.
    pub fn store_mut(&mut self) -> &mut CookieStore {
        &mut self.store
    }

    /// Stores every `Set-Cookie` value of a response to `url`; bad cookies are ignored, as Go does.
    pub(crate) fn store_response<'a>(
        &mut self,
        url: &Url,
        set_cookies: impl Iterator<Item = &'a str>,
    ) {
        for value in set_cookies {
            let _ = self.store.parse(value, url);
        }
    }
}

fn domain_of(c: &cookie_store::Cookie<'_>) -> String {
    // `cookie_store::CookieDomain` converts into the bare domain string used as the store key.
    String::from(&c.domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_cookies_are_dropped_not_errors() {
        let mut jar = CookieJar::default();
        let u = Url::parse("http://a.test/").unwrap();
        jar.set(&u, "x=1; Domain=other.test").unwrap();
        jar.set(&u, "y=2; Max-Age=0").unwrap();
        assert!(jar.cookies_for_url(&u).is_empty());
        assert!(
            jar.set(&u, "=").is_err(),
            "a header that does not parse is an error"
        );
    }

    #[test]
    fn set_match_delete() {
        let mut jar = CookieJar::new();
        let u = Url::parse("http://example.com/a/b").unwrap();
        jar.set(&u, "x=1; Path=/a").unwrap();
        jar.set(&u, "y=2; Path=/").unwrap();
        let mut got = jar.cookies_for_url(&u);
        got.sort();
        assert_eq!(
            got,
            vec![("x".into(), "1".into()), ("y".into(), "2".into())]
        );
        let other = Url::parse("http://example.com/c").unwrap();
        assert_eq!(jar.cookies_for_url(&other), vec![("y".into(), "2".into())]);
        jar.delete(&u, "x");
        assert_eq!(jar.cookies_for_url(&u), vec![("y".into(), "2".into())]);
        jar.clear_url(&u);
        assert!(jar.cookies_for_url(&u).is_empty());
    }
}
