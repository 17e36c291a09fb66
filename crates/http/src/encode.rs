//! Request body compression (k6's `compression` param).

use std::io::Write;

use crate::error::HttpError;

/// Compresses `body` with each algorithm of the comma-separated `algorithms` in turn (the
/// last one outermost) and returns it with its `Content-Encoding` value. An empty list
/// leaves the body alone and gives `None`.
pub fn compress(body: &[u8], algorithms: &str) -> Result<(Vec<u8>, Option<String>), HttpError> {
    let mut out = body.to_vec();
    let mut names: Vec<&str> = Vec::new();
    for name in algorithms
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        out = apply(name, &out)
            .ok_or_else(|| {
                HttpError::new(
                    0,
                    format!(
                        "unknown compression algorithm {name}, supported algorithms are [gzip deflate zstd br]"
                    ),
                )
            })?
            .map_err(|e| HttpError::new(0, format!("compressing the request body: {e}")))?;
        names.push(name);
    }
    Ok((out, (!names.is_empty()).then(|| names.join(", "))))
}

/// One compression pass; `None` for an algorithm k6 does not know.
fn apply(name: &str, data: &[u8]) -> Option<std::io::Result<Vec<u8>>> {
    let level = flate2::Compression::default();
    Some(match name {
        "gzip" => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), level);
            enc.write_all(data).and_then(|()| enc.finish())
        }
        // HTTP's "deflate" is the zlib format.
        "deflate" => {
            let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), level);
            enc.write_all(data).and_then(|()| enc.finish())
        }
        "br" => {
            let mut enc = brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
            enc.write_all(data).map(|()| enc.into_inner())
        }
        "zstd" => zstd::bulk::compress(data, 0),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    const TEXT: &[u8] = b"hello hello hello hello hello";

    #[test]
    fn each_algorithm_round_trips_through_the_response_decoder() {
        for alg in ["gzip", "deflate", "br", "zstd"] {
            let (body, enc) = compress(TEXT, alg).unwrap();
            assert_eq!(enc.as_deref(), Some(alg));
            assert_ne!(body, TEXT, "{alg} left the body as is");
            let back = crate::decode::decode(Bytes::from(body), alg).unwrap();
            assert_eq!(&back[..], TEXT, "{alg}");
        }
    }

    #[test]
    fn stacked_algorithms_apply_in_order_and_are_listed_trimmed() {
        let (body, enc) = compress(TEXT, " gzip,br ").unwrap();
        assert_eq!(enc.as_deref(), Some("gzip, br"));
        let (gz, _) = compress(TEXT, "gzip").unwrap();
        let mut inner = Vec::new();
        brotli::BrotliDecompress(&mut &body[..], &mut inner).unwrap();
        assert_eq!(inner.len(), gz.len(), "br must wrap the gzip stream");
        assert_eq!(&inner[..2], &[0x1f, 0x8b]);
    }

    #[test]
    fn empty_list_is_identity_and_unknown_is_k6s_error() {
        assert_eq!(compress(TEXT, "").unwrap(), (TEXT.to_vec(), None));
        let e = compress(TEXT, "gzip, lzma").unwrap_err();
        assert_eq!(
            e.message,
            "unknown compression algorithm lzma, supported algorithms are [gzip deflate zstd br]"
        );
        assert_eq!(e.code, 0);
    }
}
