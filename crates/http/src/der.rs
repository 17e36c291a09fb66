//! The few fields rk6 reads from an X.509 certificate itself (validity, extensions), with a
//! minimal DER reader: what Go checks that rustls's verifier does not expose.

/// A DER reader over the rest of one constructed value.
pub(crate) struct Der<'a>(pub(crate) &'a [u8]);

impl<'a> Der<'a> {
    /// The next element's tag and contents.
    pub(crate) fn next(&mut self) -> Option<(u8, &'a [u8])> {
        let (&tag, rest) = self.0.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |len, &b| len << 8 | usize::from(b));
            (len, &rest[n..])
        };
        if rest.len() < len {
            return None;
        }
        let (value, tail) = rest.split_at(len);
        self.0 = tail;
        Some((tag, value))
    }

    /// The next element's contents when its tag is `tag`.
    pub(crate) fn expect(&mut self, tag: u8) -> Option<&'a [u8]> {
        self.next().filter(|(t, _)| *t == tag).map(|(_, v)| v)
    }
}

/// One extension: its object identifier's bytes and the contents of its OCTET STRING.
pub(crate) struct Extension<'a> {
    pub(crate) id: &'a [u8],
    pub(crate) value: &'a [u8],
}

/// The parts of a certificate's `tbsCertificate` rk6 reads.
pub(crate) struct Certificate<'a> {
    /// `notBefore` and `notAfter` as (tag, contents): UTCTime or GeneralizedTime.
    pub(crate) not_before: (u8, &'a [u8]),
    pub(crate) not_after: (u8, &'a [u8]),
    pub(crate) extensions: Vec<Extension<'a>>,
}

impl<'a> Certificate<'a> {
    /// Reads a DER certificate; `None` when it is malformed.
    pub(crate) fn read(der: &'a [u8]) -> Option<Self> {
        let cert = Der(der).expect(0x30)?;
        let mut tbs = Der(Der(cert).expect(0x30)?);
        let (tag, _) = tbs.next()?;
        if tag == 0xa0 {
            tbs.expect(0x02)?; // the serial number after the version
        } else if tag != 0x02 {
            return None;
        }
        tbs.expect(0x30)?; // signature algorithm
        tbs.expect(0x30)?; // issuer
        let mut validity = Der(tbs.expect(0x30)?);
        let not_before = validity.next()?;
        let not_after = validity.next()?;
        tbs.expect(0x30)?; // subject
        tbs.expect(0x30)?; // subject public key info
        let mut extensions = Vec::new();
        while let Some((tag, value)) = tbs.next() {
            if tag != 0xa3 {
                continue; // issuer and subject unique IDs
            }
            let mut list = Der(Der(value).expect(0x30)?);
            while let Some(extension) = list.expect(0x30) {
                let mut extension = Der(extension);
                let id = extension.expect(0x06)?;
                let (mut tag, mut value) = extension.next()?;
                if tag == 0x01 {
                    (tag, value) = extension.next()?; // past `critical`
                }
                if tag == 0x04 {
                    extensions.push(Extension { id, value });
                }
            }
        }
        Some(Certificate {
            not_before,
            not_after,
            extensions,
        })
    }

    /// The contents of the extension `id`, if the certificate has it.
    pub(crate) fn extension(&self, id: &[u8]) -> Option<&'a [u8]> {
        self.extensions.iter().find(|e| e.id == id).map(|e| e.value)
    }
}
