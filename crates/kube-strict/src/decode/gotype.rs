//! Go's names for types and values in decoding errors (`int32`, `[]v1.Container`,
//! `map[string]string`; `string`, `number`, `object`). A list or map visitor does not say
//! what its items are, so a probe deserializer is handed to it and records the first
//! `deserialize_*` call the item type makes.

use super::walker::WalkError;
use serde::de::{self, DeserializeSeed, Visitor};
use serde_json::Value;

/// Go's word for a JSON value in `json: cannot unmarshal <value> into ...`.
pub fn go_value(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%T` of a value decoded into `interface{}`, as structured-merge-diff prints it.
pub fn unstructured_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `v1.Container`: the Go package of apimachinery's meta types is always `v1`; the others
/// live in the package named for the kind's API version.
pub fn struct_type(name: &str, package: &str) -> String {
    const META: &[&str] = &[
        "ObjectMeta",
        "LabelSelector",
        "LabelSelectorRequirement",
        "OwnerReference",
        "ManagedFieldsEntry",
        "Condition",
    ];
    let package = if META.contains(&name) { "v1" } else { package };
    format!("{package}.{name}")
}

/// The Go type a probe found, or Go's catch-all when the visitor never asked.
pub fn probed<T>(result: Result<T, WalkError>) -> String {
    match result {
        Err(WalkError::Probe(t)) => t,
        _ => "interface {}".to_owned(),
    }
}

/// A deserializer that only reports which type was asked of it.
struct Probe<'a> {
    package: &'a str,
}

fn found<T>(t: impl Into<String>) -> Result<T, WalkError> {
    Err(WalkError::Probe(t.into()))
}

macro_rules! named {
    ($($method:ident => $go:literal),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, WalkError> {
            found($go)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = WalkError;

    named! {
        deserialize_any => "intstr.IntOrString",
        deserialize_bool => "bool",
        deserialize_i8 => "int8",
        deserialize_i16 => "int16",
        deserialize_i32 => "int32",
        deserialize_i64 => "int64",
        deserialize_u8 => "uint8",
        deserialize_u16 => "uint16",
        deserialize_u32 => "uint32",
        deserialize_u64 => "uint64",
        deserialize_f32 => "float32",
        deserialize_f64 => "float64",
        deserialize_char => "string",
        deserialize_str => "string",
        deserialize_string => "string",
        deserialize_bytes => "[]uint8",
        deserialize_byte_buf => "[]uint8",
        deserialize_unit => "struct {}",
        deserialize_identifier => "string",
        deserialize_ignored_any => "interface {}",
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _visitor: V,
    ) -> Result<V::Value, WalkError> {
        found(struct_type(name, self.package))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, WalkError> {
        match name {
            "Quantity" => found("resource.Quantity"),
            "Time" | "MicroTime" => found(format!("v1.{name}")),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        found(format!(
            "[]{}",
            probed(visitor.visit_seq(ProbeSeq::new(self.package)))
        ))
    }

    // No Kubernetes type is a tuple.
    serde::forward_to_deserialize_any! { tuple tuple_struct }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, WalkError> {
        found(format!(
            "map[string]{}",
            probed(visitor.visit_map(ProbeMap::new(self.package)))
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, WalkError> {
        found(struct_type(name, self.package))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, WalkError> {
        found("string")
    }
}

/// A one-item list whose item is a probe.
pub struct ProbeSeq<'a> {
    package: &'a str,
}

impl<'a> ProbeSeq<'a> {
    pub fn new(package: &'a str) -> Self {
        ProbeSeq { package }
    }
}

impl<'de> de::SeqAccess<'de> for ProbeSeq<'_> {
    type Error = WalkError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, WalkError> {
        seed.deserialize(Probe {
            package: self.package,
        })
        .map(Some)
    }
}

/// A one-entry map whose value is a probe.
pub struct ProbeMap<'a> {
    package: &'a str,
}

impl<'a> ProbeMap<'a> {
    pub fn new(package: &'a str) -> Self {
        ProbeMap { package }
    }
}

impl<'de> de::MapAccess<'de> for ProbeMap<'_> {
    type Error = WalkError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, WalkError> {
        seed.deserialize(de::value::StrDeserializer::<WalkError>::new("probe"))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, WalkError> {
        seed.deserialize(Probe {
            package: self.package,
        })
    }
}
