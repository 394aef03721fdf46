//! Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`),
//! which kubectl's typed clients send (`kubectl create namespace|configmap|secret`): the
//! `k8s\0` magic, a `runtime.Unknown` envelope naming the kind, and the kind's message,
//! turned into the JSON object the rest of the server works on. Only the kinds in
//! `schema` are decoded, and in them only the fields it lists: another kind, or a field
//! set to anything but its zero value, is refused as an unsupported media type rather
//! than dropped.

mod authorization;
mod rbac;
mod schema;
mod wire;
mod workloads;

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
    /// A field kube-sim's schema of the kind does not list, set to a non-zero value.
    #[error("field {number} of {path} is not decoded from protobuf by kube-sim")]
    UnknownField { path: String, number: u64 },
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
                type_meta = message(b, schema::TYPE_META, "TypeMeta")?;
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
    object.extend(message(raw, fields, &kind)?);
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

/// An `intstr.IntOrString` (type 1 is a string).
fn int_or_string(b: &[u8]) -> Result<Value, WireError> {
    let (mut ty, mut int, mut string) = (0, 0i64, Value::String(String::new()));
    let mut reader = Reader::new(b);
    while let Some((number, wire)) = reader.field()? {
        match (number, wire) {
            (1, Wire::Varint(t)) => ty = t,
            (2, Wire::Varint(i)) => int = i64::from(i as i32),
            (3, Wire::Bytes(s)) => string = text(s),
            _ => {}
        }
    }
    Ok(if ty == 1 { string } else { json!(int) })
}

/// A `resource.Quantity`: its string, field 1.
fn quantity(b: &[u8]) -> Value {
    message_bytes(b, 1).map_or_else(|_| text(&[]), text)
}

/// One field's JSON value; `None` for what Go's JSON encoding leaves out (empty strings,
/// the zero time, zero `omitempty` numbers and bools). Items of a repeated string are
/// kept even when empty.
fn scalar(field: &Field, wire: Wire<'_>, path: &str) -> Result<Option<Value>, ProtobufError> {
    Ok(match (field.ty, wire) {
        (Ty::Str, Wire::Bytes([])) if !field.repeated => None,
        (Ty::Str, Wire::Bytes(b)) => Some(text(b)),
        (Ty::Bool | Ty::Int, Wire::Varint(0)) => None,
        (Ty::Bool | Ty::OptBool, Wire::Varint(v)) => Some(json!(v != 0)),
        // int32 and int64 alike: negative values are sign-extended to 64 bits.
        (Ty::Int | Ty::OptInt, Wire::Varint(v)) => Some(json!(v as i64)),
        (Ty::Time, Wire::Bytes(b)) => time(b)?,
        (Ty::FieldsV1, Wire::Bytes(b)) => {
            let raw = message_bytes(b, 1)?;
            serde_json::from_slice(raw).ok()
        }
        (Ty::IntOrString, Wire::Bytes(b)) => Some(int_or_string(b)?),
        (Ty::Msg(fields), Wire::Bytes(b)) => Some(Value::Object(message(
            b,
            fields,
            &format!("{path}.{}", field.json),
        )?)),
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

/// Whether a field's value is its zero value, as Go writes every unset non-pointer field.
fn zero(wire: Wire<'_>) -> bool {
    matches!(wire, Wire::Varint(0) | Wire::Bytes([]))
}

/// A message's fields as JSON; `path` names it in errors (`Deployment.spec`).
fn message(b: &[u8], fields: &[Field], path: &str) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    let mut reader = Reader::new(b);
    while let Some((number, wire)) = reader.field()? {
        let Some(field) = fields.iter().find(|f| f.number == number) else {
            if zero(wire) {
                continue;
            }
            return Err(ProtobufError::UnknownField {
                path: path.to_owned(),
                number,
            });
        };
        if let (Ty::StrMap | Ty::BytesMap | Ty::QuantityMap, Wire::Bytes(b)) = (field.ty, wire) {
            let value_of = match field.ty {
                Ty::StrMap => text,
                Ty::BytesMap => base64,
                _ => quantity,
            };
            let (k, v) = entry(b, value_of)?;
            if let Value::Object(map) = out.entry(field.json).or_insert_with(|| json!({})) {
                map.insert(k, v);
            }
        } else {
            let Some(value) = scalar(field, wire, path)? else {
                continue;
            };
            if field.repeated {
                if let Value::Array(items) = out.entry(field.json).or_insert_with(|| json!([])) {
                    items.push(value);
                }
            } else {
                out.insert(field.json.to_owned(), value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
