//! Small readers and writers of object JSON shared by the workload, batch, network and
//! storage controllers: metadata fields, owner references, generated names, the hashes
//! Kubernetes puts in names, timestamps and status conditions.

use crate::store::ObjectKey;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// The string at a JSON pointer, or "".
pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The integer at a JSON pointer (numbers, or strings holding numbers as some clients send).
pub(crate) fn int_at(v: &Value, pointer: &str) -> Option<i64> {
    match v.pointer(pointer)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub(crate) fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}

pub(crate) fn namespace(v: &Value) -> &str {
    str_at(v, "/metadata/namespace")
}

pub(crate) fn uid(v: &Value) -> &str {
    str_at(v, "/metadata/uid")
}

pub(crate) fn is_deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// `metadata.labels` as a map (empty when absent).
pub(crate) fn labels(v: &Value) -> Map<String, Value> {
    v.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The ownerReference a controller writes on what it creates (`metav1.NewControllerRef`).
pub(crate) fn controller_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": str_at(owner, "/apiVersion"),
        "kind": str_at(owner, "/kind"),
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The controlling ownerReference of an object, if any.
pub(crate) fn controller_of(v: &Value) -> Option<&Value> {
    v.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// Whether `owner` (by uid) controls `v`.
pub(crate) fn is_controlled_by(v: &Value, owner: &Value) -> bool {
    controller_of(v).is_some_and(|r| str_at(r, "/uid") == uid(owner))
}

/// The key of the object of `kind` that controls `object` (same namespace), for routing a
/// child's change to its owner's controller.
pub(crate) fn owner_key(
    object: &Value,
    kind: &str,
    group: &str,
    plural: &str,
) -> Option<ObjectKey> {
    let owner = controller_of(object)?;
    (str_at(owner, "/kind") == kind)
        .then(|| ObjectKey::new(group, plural, namespace(object), str_at(owner, "/name")))
}

/// The alphabet of `k8s.io/apimachinery/pkg/util/rand`: no vowels, no confusable digits.
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.SafeEncodeString`: how hashes become name-safe strings.
pub(crate) fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

/// FNV-1 32-bit, as `hash/fnv.New32` (ControllerRevision names).
pub(crate) fn fnv32(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, b| {
        h.wrapping_mul(0x0100_0193) ^ u32::from(*b)
    })
}

/// FNV-1a 32-bit, as `hash/fnv.New32a` (`controller.ComputeHash`).
pub(crate) fn fnv32a(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Deterministic stand-in for the API server's `generateName` suffix (five characters of
/// the same alphabet), so a simulated run names its pods the same way every time.
#[derive(Debug, Clone)]
pub(crate) struct NameGenerator {
    state: u64,
}

impl NameGenerator {
    pub(crate) fn new(seed: &str) -> Self {
        NameGenerator {
            state: u64::from(fnv32a(seed.as_bytes())) << 16 | 0x5eed,
        }
    }

    /// `prefix` + five random characters (`prefix` usually ends with `-`).
    pub(crate) fn generate(&mut self, prefix: &str) -> String {
        let mut out = String::from(prefix);
        for _ in 0..5 {
            // splitmix64: cheap, well mixed, reproducible.
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            out.push(ALPHANUMS[(z % ALPHANUMS.len() as u64) as usize] as char);
        }
        out
    }
}

/// Parse a `metav1.Time`.
pub(crate) fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// A `metav1.Time` for a timestamp (whole seconds).
pub(crate) fn format_time(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Set a condition of `type_` in a `status.conditions` list, keeping its
/// `lastTransitionTime` unless the status flips (as `meta.SetStatusCondition` does).
/// Returns whether anything changed.
pub(crate) fn set_condition(conditions: &mut Vec<Value>, mut condition: Value, now: &str) -> bool {
    let type_ = str_at(&condition, "/type").to_owned();
    if let Some(existing) = conditions.iter_mut().find(|c| str_at(c, "/type") == type_) {
        let same_status = str_at(existing, "/status") == str_at(&condition, "/status");
        condition["lastTransitionTime"] = if same_status {
            existing
                .get("lastTransitionTime")
                .cloned()
                .unwrap_or_else(|| json!(now))
        } else {
            json!(now)
        };
        if *existing == condition {
            return false;
        }
        *existing = condition;
        true
    } else {
        condition["lastTransitionTime"] = json!(now);
        conditions.push(condition);
        true
    }
}

/// Insert `value` under `key` unless it is zero, as Go's `omitempty` does for integers.
pub(crate) fn put_nonzero(map: &mut Map<String, Value>, key: &str, value: i64) {
    if value == 0 {
        map.remove(key);
    } else {
        map.insert(key.to_owned(), json!(value));
    }
}

/// An `intstr` (count or percentage) against `total`, percentages rounded up
/// (`intstr.GetScaledValueFromIntOrPercent(.., true)`).
pub(crate) fn scaled(value: Option<&Value>, total: i64, default: i64) -> i64 {
    match value {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(default),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(pct) => (pct * total + 99) / 100,
            None => s.parse().unwrap_or(default),
        },
        _ => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_names_use_the_kubernetes_alphabet() {
        // Known vectors of FNV-1 and FNV-1a for "a".
        assert_eq!(fnv32(b"a"), 0x050c_5d7e);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        // Decimal digits map to the characters seen in real hashes ("5d8b7c9f6").
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
        let encoded = safe_encode(&fnv32(b"x").to_string());
        assert!(encoded.bytes().all(|b| ALPHANUMS.contains(&b)));
        let mut a = NameGenerator::new("job-controller");
        let mut b = NameGenerator::new("job-controller");
        let first = a.generate("migrate-");
        assert_eq!(first, b.generate("migrate-"));
        assert_eq!(first.len(), "migrate-".len() + 5);
        assert_ne!(first, a.generate("migrate-"));
    }

    #[test]
    fn conditions_keep_transition_time_while_status_holds() {
        let mut list = Vec::new();
        let cond = |s: &str, m: &str| json!({"type": "DisruptionAllowed", "status": s, "reason": "x", "message": m});
        assert!(set_condition(&mut list, cond("True", "a"), "t1"));
        assert!(!set_condition(&mut list, cond("True", "a"), "t2"));
        assert!(set_condition(&mut list, cond("True", "b"), "t3"));
        assert_eq!(list[0]["lastTransitionTime"], "t1");
        assert!(set_condition(&mut list, cond("False", "b"), "t4"));
        assert_eq!(list[0]["lastTransitionTime"], "t4");
        assert_eq!(list.len(), 1);
    }
}
