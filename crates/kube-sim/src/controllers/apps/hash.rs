//! Names the apps controllers make up: the `pod-template-hash` (`controller.ComputeHash`:
//! FNV-32a of the pod template plus the collision count, written with Kubernetes'
//! `rand.SafeEncodeString` alphabet) and the five-character suffix of generated pod names.
//! The template is hashed in a canonical JSON form (sorted keys), not Go's spew dump, so
//! hashes differ from a real cluster's but are just as stable.

use serde_json::Value;

/// `k8s.io/apimachinery/pkg/util/rand` alphanums: no vowels, no 0/1/3, no confusables.
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1a, 32 bits.
pub(crate) fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// `rand.SafeEncodeString`: each byte mapped into the alphabet.
pub(crate) fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

/// JSON with object keys sorted at every level, so key order never changes a hash.
pub(crate) fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        leaf => out.push_str(&leaf.to_string()),
    }
}

/// The `pod-template-hash` of a Deployment's template (`controller.ComputeHash`): the
/// collision count enters as 8 little-endian bytes, as Go writes it.
pub(crate) fn pod_template_hash(template: &Value, collision_count: Option<i64>) -> String {
    let mut bytes = canonical_json(template).into_bytes();
    if let Some(count) = collision_count {
        let mut extra = [0u8; 8];
        extra[..4].copy_from_slice(&(count as u32).to_le_bytes());
        bytes.extend_from_slice(&extra);
    }
    safe_encode(&fnv32a(&bytes).to_string())
}

/// Five characters of the alphabet, fixed by `seed` and `n` (what the API server's name
/// generator draws at random; deterministic here so runs repeat).
pub(crate) fn name_suffix(seed: &str, n: u64) -> String {
    let mut x = u64::from(fnv32a(seed.as_bytes())) << 32 ^ n;
    // splitmix64: spreads consecutive `n` over the whole alphabet.
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (0..5)
        .map(|_| {
            let c = ALPHANUMS[(x % ALPHANUMS.len() as u64) as usize] as char;
            x /= ALPHANUMS.len() as u64;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(image: &str) -> Value {
        json!({"metadata": {"labels": {"app": "web", "tier": "frontend"}},
               "spec": {"containers": [{"name": "web", "image": image,
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}]}],
                        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}})
    }

    #[test]
    fn fnv32a_and_safe_encoding_match_go() {
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b"foobar"), 0xbf9c_f968);
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
    }

    #[test]
    fn hash_is_stable_across_key_order_and_changes_with_the_template() {
        let a = template("registry.example.com/web:1.4.2");
        let reordered = json!({"spec": {"terminationGracePeriodSeconds": 30, "restartPolicy": "Always",
                               "containers": [{"ports": [{"protocol": "TCP", "containerPort": 8080}],
                                               "image": "registry.example.com/web:1.4.2", "name": "web"}]},
                               "metadata": {"labels": {"tier": "frontend", "app": "web"}}});
        let h = pod_template_hash(&a, None);
        assert_eq!(h, pod_template_hash(&reordered, None));
        assert_eq!(
            h,
            safe_encode(&fnv32a(canonical_json(&a).as_bytes()).to_string())
        );
        assert!(
            h.len() <= 10 && h.chars().all(|c| "456789bcdf".contains(c)),
            "{h}"
        );
        assert_ne!(
            h,
            pod_template_hash(&template("registry.example.com/web:1.4.3"), None)
        );
        assert_ne!(h, pod_template_hash(&a, Some(1)));
        assert_ne!(
            pod_template_hash(&a, Some(1)),
            pod_template_hash(&a, Some(2))
        );
    }

    #[test]
    fn name_suffixes_are_deterministic_and_varied() {
        let names: Vec<String> = (0..50).map(|n| name_suffix("web-7d4b9c8f5d", n)).collect();
        assert_eq!(names[0], name_suffix("web-7d4b9c8f5d", 0));
        assert_ne!(names[0], name_suffix("api-5f6b7c8d9e", 0));
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), 50);
        assert!(
            names
                .iter()
                .all(|n| n.len() == 5 && n.bytes().all(|b| ALPHANUMS.contains(&b)))
        );
    }
}
