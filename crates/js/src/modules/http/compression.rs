//! The request side of `k6/http` bodies: the `compression` param and a user-set
//! `Content-Length` that does not match what is sent.

use bytes::Bytes;
use http::Method;

use crate::host::Host;
use crate::log::Level;

/// Compresses `body` with the `compression` param's algorithms and sets `Content-Encoding`;
/// a `Content-Encoding` the script set itself wins, with a warning (as in k6).
pub(super) fn apply(
    host: &Host,
    method: &Method,
    url: &str,
    body: &[u8],
    algorithms: &str,
    headers: &mut Vec<(String, String)>,
) -> Result<Bytes, rk6_http::HttpError> {
    let (compressed, encoding) = rk6_http::compress(body, algorithms)?;
    let Some(encoding) = encoding else {
        return Ok(Bytes::copy_from_slice(body));
    };
    match headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-encoding"))
    {
        Some((_, set)) if *set != encoding => host.shared.logger.log(
            Level::Warning,
            &format!(
                "The Content-Encoding header set for the {method} request to '{url}' differs from its `compression` param ({encoding}); the header is sent as set, so it may not describe the body."
            ),
            &[],
        ),
        Some(_) => {}
        None => headers.push(("Content-Encoding".to_owned(), encoding)),
    }
    Ok(Bytes::from(compressed))
}

/// Drops a user `Content-Length` that disagrees with the body's real length, with a
/// warning: sending it would hang or truncate the request (k6 ignores it too).
pub(super) fn check_content_length(
    host: &Host,
    method: &Method,
    url: &str,
    len: usize,
    headers: &mut Vec<(String, String)>,
) {
    let Some(i) = headers
        .iter()
        .position(|(k, _)| k.eq_ignore_ascii_case("content-length"))
    else {
        return;
    };
    let given = headers[i].1.trim();
    if given.parse::<usize>() == Ok(len) {
        return;
    }
    host.shared.logger.log(
        Level::Warning,
        &format!(
            "The Content-Length header {given:?} set for the {method} request to {url} is not the body's length of {len}, so it is ignored."
        ),
        &[],
    );
    headers.remove(i);
}
