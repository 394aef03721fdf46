//! A JSON string read without copying it when the input allows: the readers of watched
//! objects compare many map keys and keep few, and serde's `Cow<str>` always copies.

use serde::de::{DeserializeSeed, Deserializer, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A string (a map key, a short value), borrowed from the input when it has no escapes.
pub(crate) struct Borrowed;

impl<'de> DeserializeSeed<'de> for Borrowed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Borrowed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_without_escapes_is_borrowed_and_one_with_them_copied() {
        let read = |text: &'static str| {
            Borrowed
                .deserialize(&mut serde_json::Deserializer::from_str(text))
                .unwrap()
        };
        assert!(matches!(read(r#""app""#), Cow::Borrowed("app")));
        assert!(matches!(read(r#""a\"b""#), Cow::Owned(s) if s == "a\"b"));
        let not_a_string = Borrowed.deserialize(&mut serde_json::Deserializer::from_str("1"));
        assert!(not_a_string.is_err());
    }
}
