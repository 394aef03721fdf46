//! `status.conditions` read from raw objects, for kinds the rules do not type (custom
//! resources, CRDs, HPAs read from any version): every such kind shares this shape.

use crate::pointer::Pointer;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub message: Option<&'a str>,
}

impl Condition<'_> {
    pub fn is(&self, status: &str) -> bool {
        self.status == status
    }

    /// `Stalled=True (ReconcileFailed): image not found`.
    pub fn describe(&self) -> String {
        let mut s = format!("{}={}", self.type_, self.status);
        if let Some(r) = self.reason.filter(|r| !r.is_empty()) {
            s.push_str(&format!(" ({r})"));
        }
        if let Some(m) = self.message.filter(|m| !m.is_empty()) {
            s.push_str(&format!(": {m}"));
        }
        s
    }
}

/// All well-formed entries of `status.conditions`.
pub fn conditions(obj: &Value) -> Vec<Condition<'_>> {
    let list = obj.at("/status/conditions").and_then(Value::as_array);
    list.into_iter().flatten().filter_map(parse).collect()
}

pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<Condition<'a>> {
    conditions(obj).into_iter().find(|c| c.type_ == type_)
}

/// One condition object, e.g. an entry of a JSON-encoded condition list in an annotation.
pub fn parse(c: &Value) -> Option<Condition<'_>> {
    Some(Condition {
        type_: c.get("type")?.as_str()?,
        status: c.get("status")?.as_str()?,
        reason: c.get("reason").and_then(Value::as_str),
        message: c.get("message").and_then(Value::as_str),
    })
}
