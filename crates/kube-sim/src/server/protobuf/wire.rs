//! The protobuf wire format, as far as decoding Kubernetes messages needs it: varints,
//! length-delimited fields, and skipping fixed-width ones.

/// A body that is not well-formed protobuf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("unexpected end of protobuf data")]
    Truncated,
    #[error("varint is longer than 64 bits")]
    VarintTooLong,
    #[error("unsupported protobuf wire type {0}")]
    WireType(u64),
}

/// One field's value as it is on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// 32- or 64-bit fixed values; no field kube-sim decodes uses them.
    Fixed,
}

/// Reads `(field number, value)` pairs from a message.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.data.len() < n {
            return Err(WireError::Truncated);
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.take(1)?.first().ok_or(WireError::Truncated)?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::VarintTooLong)
    }

    /// The next field, or `None` at the end of the message.
    pub fn field(&mut self) -> Result<Option<(u64, Wire<'a>)>, WireError> {
        if self.data.is_empty() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let value = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| WireError::Truncated)?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            other => return Err(WireError::WireType(other)),
        };
        Ok(Some((tag >> 3, value)))
    }
}

#[cfg(test)]
pub mod encode {
    //! Writing messages, for tests.

    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    pub fn bytes(out: &mut Vec<u8>, field: u64, data: &[u8]) {
        varint(out, field << 3 | 2);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }

    pub fn uint(out: &mut Vec<u8>, field: u64, v: u64) {
        varint(out, field << 3);
        varint(out, v);
    }

    /// A `map<string, string>` entry.
    pub fn entry(out: &mut Vec<u8>, field: u64, key: &str, value: &[u8]) {
        let mut e = Vec::new();
        bytes(&mut e, 1, key.as_bytes());
        bytes(&mut e, 2, value);
        bytes(out, field, &e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_varints_and_length_delimited_fields() {
        let mut m = Vec::new();
        encode::uint(&mut m, 7, 300);
        encode::bytes(&mut m, 1, b"web");
        let mut r = Reader::new(&m);
        assert_eq!(r.field(), Ok(Some((7, Wire::Varint(300)))));
        assert_eq!(r.field(), Ok(Some((1, Wire::Bytes(b"web")))));
        assert_eq!(r.field(), Ok(None));
        assert_eq!(
            Reader::new(&[0x0a, 0x05, b'a']).field(),
            Err(WireError::Truncated)
        );
    }
}
