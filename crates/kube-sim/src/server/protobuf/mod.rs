//! Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`),
//! which kubectl's typed clients send (`kubectl create namespace|configmap|secret`): the
//! `k8s\0` magic, a `runtime.Unknown` envelope naming the kind, and the kind's message,
//! turned into the JSON object the rest of the server works on. Only the kinds in
//! `schema` are decoded; others are refused as an unsupported media type.

mod schema;
mod wire;

use base64::Engine;
use schema::{Field, Ty};
use serde_json::{Map, Value, json};
use wire::{Reader, Wire, WireError};

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// Why a protobuf body could not be turned into an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    #[error("provided data does not appear to be a protobuf message, expected prefix {MAGIC:?}")]
    Magic,
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("protobuf content encoding {0:?} is not supported")]
    ContentEncoding(String),
    /// A kind kube-sim has no protobuf schema for.
    #[error("{kind} in version {api_version:?} is not decoded from protobuf by kube-sim")]
    Unsupported { api_version: String, kind: String },
}

/// The object in a protobuf request body.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let envelope = body.strip_prefix(MAGIC).ok_or(ProtobufError::Magic)?;
    let mut type_meta = Map::new();
    let mut raw: &[u8] = &[];
    let mut reader = Reader::new(envelope);
    while let Some((number, value)) = reader.field()? {
        match (number, value) {
            (schema::UNKNOWN_TYPE_META, Wire::Bytes(b)) => {
                type_meta = message(b, schema::TYPE_META)?
            }
            (schema::UNKNOWN_RAW, Wire::Bytes(b)) => raw = b,
            (schema::UNKNOWN_CONTENT_ENCODING, Wire::Bytes(b)) if !b.is_empty() => {
                return Err(ProtobufError::ContentEncoding(
                    String::from_utf8_lossy(b).into_owned(),
                ));
            }
            _ => {}
        }
    }
    let text = |k: &str| {
        type_meta
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let fields = schema::kind(&api_version, &kind).ok_or_else(|| ProtobufError::Unsupported {
        api_version: api_version.clone(),
        kind: kind.clone(),
    })?;
    let mut object = Map::new();
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    object.extend(message(raw, fields)?);
    Ok(Value::Object(object))
}

fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

fn base64(b: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(b))
}

/// A `map<string, V>` entry: key 1, value 2.
fn entry(b: &[u8], value_of: fn(&[u8]) -> Value) -> Result<(String, Value), WireError> {
    let (mut key, mut value) = (String::new(), value_of(&[]));
    let mut reader = Reader::new(b);
    while let Some((number, wire)) = reader.field()? {
        match (number, wire) {
            (1, Wire::Bytes(k)) => key = String::from_utf8_lossy(k).into_owned(),
            (2, Wire::Bytes(v)) => value = value_of(v),
            _ => {}
        }
    }
    Ok((key, value))
}

/// `metav1.Time`; the zero time is absent, as in JSON.
fn time(b: &[u8]) -> Result<Option<Value>, WireError> {
    let mut seconds = 0i64;
    let mut reader = Reader::new(b);
    while let Some((number, wire)) = reader.field()? {
        if let (1, Wire::Varint(s)) = (number, wire) {
            seconds = s as i64;
        }
    }
    if seconds == 0 {
        return Ok(None);
    }
    Ok(jiff::Timestamp::from_second(seconds)
        .ok()
        .map(|t| json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())))
}

/// One field's JSON value; `None` for what Go's JSON encoding leaves out (empty strings,
/// the zero time, a zero generation).
fn scalar(field: &Field, wire: Wire<'_>) -> Result<Option<Value>, ProtobufError> {
    Ok(match (field.ty, wire) {
        (Ty::Str, Wire::Bytes([])) => None,
        (Ty::Str, Wire::Bytes(b)) => Some(text(b)),
        (Ty::Bool, Wire::Varint(v)) => Some(json!(v != 0)),
        (Ty::Int64, Wire::Varint(0)) if field.json == "generation" => None,
        (Ty::Int64, Wire::Varint(v)) => Some(json!(v as i64)),
        (Ty::Time, Wire::Bytes(b)) => time(b)?,
        (Ty::FieldsV1, Wire::Bytes(b)) => {
            let raw = message_bytes(b, 1)?;
            serde_json::from_slice(raw).ok()
        }
        (Ty::Msg(fields), Wire::Bytes(b)) => Some(Value::Object(message(b, fields)?)),
        _ => None,
    })
}

/// Field `number`'s bytes in a message (empty if absent).
fn message_bytes(b: &[u8], number: u64) -> Result<&[u8], WireError> {
    let mut reader = Reader::new(b);
    while let Some((n, wire)) = reader.field()? {
        if let (true, Wire::Bytes(v)) = (n == number, wire) {
            return Ok(v);
        }
    }
    Ok(&[])
}

fn message(b: &[u8], fields: &[Field]) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    let mut reader = Reader::new(b);
    while let Some((number, wire)) = reader.field()? {
        let Some(field) = fields.iter().find(|f| f.number == number) else {
            continue;
        };
        match (field.ty, wire) {
            (Ty::StrMap | Ty::BytesMap, Wire::Bytes(b)) => {
                let value_of = if matches!(field.ty, Ty::StrMap) {
                    text
                } else {
                    base64
                };
                let (k, v) = entry(b, value_of)?;
                if let Value::Object(map) = out.entry(field.json).or_insert_with(|| json!({})) {
                    map.insert(k, v);
                }
            }
            _ => {
                let Some(value) = scalar(field, wire)? else {
                    continue;
                };
                if field.repeated {
                    if let Value::Array(items) = out.entry(field.json).or_insert_with(|| json!([]))
                    {
                        items.push(value);
                    }
                } else {
                    out.insert(field.json.to_owned(), value);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
