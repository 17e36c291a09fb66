//! Response body decoding per `Content-Encoding`.
//!
//! k6 sends no `Accept-Encoding` by default yet decodes gzip, deflate (zlib), br and zstd
//! bodies transparently; a body that fails to decode is error 1701.

use std::io::Read;

use bytes::Bytes;

use crate::error::{self, HttpError};

/// Decodes `body` by undoing each listed coding, last applied first.
/// Unknown codings (and `identity`) leave the bytes untouched.
pub(crate) fn decode(body: Bytes, content_encoding: &str) -> Result<Bytes, HttpError> {
    let mut body = body;
    for coding in content_encoding.rsplit(',') {
        let coding = coding.trim();
        if body.is_empty() {
            break;
        }
        let mut out = Vec::with_capacity(body.len() * 4);
        let res = if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            flate2::read::MultiGzDecoder::new(&body[..]).read_to_end(&mut out)
        } else if coding.eq_ignore_ascii_case("deflate") {
            // HTTP "deflate" is the zlib format; k6 does not accept raw deflate either.
            flate2::read::ZlibDecoder::new(&body[..]).read_to_end(&mut out)
        } else if coding.eq_ignore_ascii_case("br") {
            brotli::Decompressor::new(&body[..], 4096).read_to_end(&mut out)
        } else if coding.eq_ignore_ascii_case("zstd") {
            zstd::stream::read::Decoder::new(&body[..]).and_then(|mut d| d.read_to_end(&mut out))
        } else {
            continue;
        };
        if let Err(e) = res {
            return Err(HttpError::new(
                error::DECOMPRESSION,
                format!("error decompressing response body ({coding}): {e}"),
            ));
        }
        body = Bytes::from(out);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_then_br_stack() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"hello").unwrap();
        let gz = gz.finish().unwrap();
        let mut br = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut br, 4096, 5, 22);
            w.write_all(&gz).unwrap();
        }
        assert_eq!(&decode(Bytes::from(br), "gzip, br").unwrap()[..], b"hello");
    }

    #[test]
    fn garbage_is_1701_and_unknown_is_kept() {
        assert_eq!(
            decode(Bytes::from_static(b"nope"), "gzip")
                .unwrap_err()
                .code,
            1701
        );
        assert_eq!(
            &decode(Bytes::from_static(b"raw"), "identity, foo").unwrap()[..],
            b"raw"
        );
    }
}
