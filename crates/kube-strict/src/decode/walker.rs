//! A serde `Deserializer` over a `serde_json::Value` that drives a k8s-openapi type the way
//! the API server's decoders drive its Go type: each struct's declared fields (serde's
//! `FIELDS`) say which keys are unknown, each `deserialize_*` call says which JSON type
//! is wanted, and `null` decodes to the zero value as in Go.

use super::gotype::{self, go_value};
use super::location::Location;
use super::{Dialect, Shared};
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::{Map, Value};

/// Why a walk stopped.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// The first type error, as Go's JSON decoder reports it (it wins over unknown fields).
    #[error("{0}")]
    Mismatch(String),
    /// A probe found the Go type a visitor wants (see `gotype`).
    #[error("Go type {0}")]
    Probe(String),
    /// A visitor's own complaint (a bad timestamp, bad base64): not a decoding rule kube-sim
    /// models, so the object passes as it did before.
    #[error("{0}")]
    Custom(String),
}

impl de::Error for WalkError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        WalkError::Custom(msg.to_string())
    }
}

/// What a `deserialize_*` call asked for, for the type error when the JSON is something else.
#[derive(Clone, Copy)]
enum Want {
    Number(&'static str),
    String,
    Bool,
    Seq,
    Map,
    Struct(&'static str),
}

pub struct Walker<'a> {
    pub value: &'a Value,
    pub at: Location,
    /// The Go struct whose field this value is (Go's `UnmarshalTypeError.Struct`).
    pub owner: &'static str,
    pub shared: &'a Shared,
}

impl<'a> Walker<'a> {
    fn child(&self, value: &'a Value, at: Location, owner: &'static str) -> Self {
        Walker {
            value,
            at,
            owner,
            shared: self.shared,
        }
    }

    /// A JSON value of the wrong type. Go's decoder stops at the first (with the Go type
    /// named); structured-merge-diff records each and carries on, so the visitor gets a
    /// zero value from `zero`.
    fn mismatch<'de, V: Visitor<'de>>(
        self,
        want: Want,
        visitor: V,
        zero: fn(V) -> Result<V::Value, WalkError>,
    ) -> Result<V::Value, WalkError> {
        match self.shared.dialect {
            Dialect::Json => {
                let go_type = match want {
                    Want::Number(t) => t.to_owned(),
                    Want::String => "string".to_owned(),
                    Want::Bool => "bool".to_owned(),
                    Want::Struct(name) => gotype::struct_type(name, &self.shared.package),
                    Want::Seq => {
                        let probe = gotype::ProbeSeq::new(&self.shared.package);
                        format!("[]{}", gotype::probed(visitor.visit_seq(probe)))
                    }
                    Want::Map => {
                        let probe = gotype::ProbeMap::new(&self.shared.package);
                        format!("map[string]{}", gotype::probed(visitor.visit_map(probe)))
                    }
                };
                let got = match (self.value, &want) {
                    (Value::Number(n), Want::Number(_)) => format!("number {n}"),
                    (v, _) => go_value(v).to_owned(),
                };
                Err(WalkError::Mismatch(format!(
                    "json: cannot unmarshal {got} into Go struct field {}.{} of type {go_type}",
                    self.owner,
                    self.at.go_field()
                )))
            }
            Dialect::Apply => {
                let message = match want {
                    Want::Number(_) => format!(
                        "expected numeric (int or float), got {}",
                        gotype::unstructured_type(self.value)
                    ),
                    Want::String => format!("expected string, got {}", smd_value(self.value)),
                    Want::Bool => format!("expected boolean, got {}", smd_value(self.value)),
                    Want::Seq => format!("expected list, got {}", smd_value(self.value)),
                    Want::Map | Want::Struct(_) => {
                        format!("expected map, got {}", smd_value(self.value))
                    }
                };
                let message = format!("{}: {message}", self.at.smd());
                self.shared.error(&self.at, message, &[]);
                zero(visitor)
            }
        }
    }

    fn visit_object<'de, V: Visitor<'de>>(
        self,
        map: &'a Map<String, Value>,
        fields: Option<(&'static str, &'static [&'static str])>,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        visitor.visit_map(Entries {
            iter: map.iter(),
            pending: None,
            fields,
            parent: self,
            stopped: false,
        })
    }
}

/// How structured-merge-diff prints a value in its type errors.
fn smd_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn empty_map<'de, V: Visitor<'de>>(visitor: V) -> Result<V::Value, WalkError> {
    visitor.visit_map(de::value::MapDeserializer::new(std::iter::empty::<(
        &str,
        &str,
    )>()))
}

fn empty_seq<'de, V: Visitor<'de>>(visitor: V) -> Result<V::Value, WalkError> {
    visitor.visit_seq(de::value::SeqDeserializer::new(std::iter::empty::<&str>()))
}

macro_rules! number {
    ($method:ident, $visit:ident, $t:ty, $go:literal) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
            let fits = match self.value {
                Value::Number(n) => n
                    .as_i64()
                    .and_then(|i| <$t>::try_from(i).ok())
                    .or_else(|| n.as_u64().and_then(|u| <$t>::try_from(u).ok())),
                Value::Null => Some(0),
                _ => None,
            };
            match (fits, self.value, self.shared.dialect) {
                (Some(v), _, _) => visitor.$visit(v),
                // structured-merge-diff takes any number where a number is declared.
                (None, Value::Number(_), Dialect::Apply) => visitor.$visit(0),
                _ => self.mismatch(Want::Number($go), visitor, |v| v.$visit(0)),
            }
        }
    };
}

impl<'de> de::Deserializer<'de> for Walker<'_> {
    type Error = WalkError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => visitor.visit_i64(i),
                (None, Some(u), _) => visitor.visit_u64(u),
                (_, _, f) => visitor.visit_f64(f.unwrap_or_default()),
            },
            Value::String(s) => visitor.visit_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                iter: items.iter().enumerate(),
                parent: self,
            }),
            Value::Object(map) => self.visit_object(map, None, visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Null => visitor.visit_bool(false),
            _ => self.mismatch(Want::Bool, visitor, |v| v.visit_bool(false)),
        }
    }

    number!(deserialize_i8, visit_i8, i8, "int8");
    number!(deserialize_i16, visit_i16, i16, "int16");
    number!(deserialize_i32, visit_i32, i32, "int32");
    number!(deserialize_i64, visit_i64, i64, "int64");
    number!(deserialize_u8, visit_u8, u8, "uint8");
    number!(deserialize_u16, visit_u16, u16, "uint16");
    number!(deserialize_u32, visit_u32, u32, "uint32");
    number!(deserialize_u64, visit_u64, u64, "uint64");

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Number(n) => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            Value::Null => visitor.visit_f64(0.0),
            _ => self.mismatch(Want::Number("float64"), visitor, |v| v.visit_f64(0.0)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::String(s) => visitor.visit_str(s),
            Value::Null => visitor.visit_str(""),
            _ => self.mismatch(Want::String, visitor, |v| v.visit_str("")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Array(items) => visitor.visit_seq(Items {
                iter: items.iter().enumerate(),
                parent: self,
            }),
            Value::Null => empty_seq(visitor),
            _ => self.mismatch(Want::Seq, visitor, empty_seq),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Object(map) => self.visit_object(map, None, visitor),
            Value::Null => empty_map(visitor),
            _ => self.mismatch(Want::Map, visitor, empty_map),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        match self.value {
            Value::Object(map) => self.visit_object(map, Some((name, fields)), visitor),
            Value::Null => empty_map(visitor),
            _ => self.mismatch(Want::Struct(name), visitor, empty_map),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        match self.value {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            _ => Err(WalkError::Custom("enum is not a string".to_owned())),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        visitor.visit_unit()
    }
}

/// The items of a JSON array.
struct Items<'a, I> {
    iter: I,
    parent: Walker<'a>,
}

impl<'de, 'a, I: Iterator<Item = (usize, &'a Value)>> de::SeqAccess<'de> for Items<'a, I> {
    type Error = WalkError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, WalkError> {
        let Some((i, item)) = self.iter.next() else {
            return Ok(None);
        };
        let at = self.parent.at.item(i, item);
        seed.deserialize(self.parent.child(item, at, self.parent.owner))
            .map(Some)
    }
}

/// The entries of a JSON object: a struct's fields (checked against its declared names)
/// or a map's keys.
struct Entries<'a, I> {
    iter: I,
    pending: Option<(&'a str, &'a Value)>,
    /// The struct's Go name and declared fields; `None` for a map.
    fields: Option<(&'static str, &'static [&'static str])>,
    parent: Walker<'a>,
    /// structured-merge-diff stops reading an object at its first undeclared field.
    stopped: bool,
}

impl<'de, 'a, I: Iterator<Item = (&'a String, &'a Value)>> de::MapAccess<'de> for Entries<'a, I> {
    type Error = WalkError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, WalkError> {
        if self.stopped {
            return Ok(None);
        }
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        if let Some((_, declared)) = self.fields
            && !declared.contains(&key.as_str())
        {
            let at = self.parent.at.field(key);
            if self.parent.shared.unknown(at, declared) {
                self.stopped = true;
                return Ok(None);
            }
        }
        self.pending = Some((key, value));
        seed.deserialize(StrDeserializer::<WalkError>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, WalkError> {
        let Some((key, value)) = self.pending.take() else {
            return Err(WalkError::Custom("value without a key".to_owned()));
        };
        let child = match self.fields {
            Some((owner, _)) => self.parent.child(value, self.parent.at.field(key), owner),
            None => self
                .parent
                .child(value, self.parent.at.key(key), self.parent.owner),
        };
        seed.deserialize(child)
    }
}
