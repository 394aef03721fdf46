//! Resource quantities (`500m`, `128Mi`, `1e3`) as plain numbers, and a pod's effective
//! requests, which is what the scheduler compares with a node's allocatable resources.

use serde_json::Value;
use std::collections::BTreeMap;

/// The value of a Kubernetes quantity in base units (cores, bytes, pods); `None` if malformed.
pub fn parse(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        s if s.starts_with(['e', 'E']) => 10f64.powi(s[1..].parse().ok()?),
        _ => return None,
    };
    Some(number * scale)
}

/// Resource name to amount.
pub type Amounts = BTreeMap<String, f64>;

/// One container's requests (limits stand in for missing requests, as API defaulting does).
fn container_requests(c: &Value) -> Amounts {
    let mut out = Amounts::new();
    let res = &c["resources"];
    for source in [&res["limits"], &res["requests"]] {
        if let Some(map) = source.as_object() {
            for (name, q) in map {
                if let Some(v) = q.as_str().and_then(parse).or_else(|| q.as_f64()) {
                    out.insert(name.clone(), v);
                }
            }
        }
    }
    out
}

/// The pod's effective requests: the larger of the sum over containers (plus sidecars) and
/// any single init container, plus overhead.
pub fn pod_requests(pod: &Value) -> Amounts {
    let spec = &pod["spec"];
    let list = |k: &str| spec[k].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut total = Amounts::new();
    for c in list("containers") {
        add(&mut total, &container_requests(c));
    }
    let mut init_peak = Amounts::new();
    let mut sidecars = Amounts::new();
    for c in list("initContainers") {
        let req = container_requests(c);
        if c["restartPolicy"] == "Always" {
            add(&mut sidecars, &req);
            continue;
        }
        let mut with_sidecars = sidecars.clone();
        add(&mut with_sidecars, &req);
        for (k, v) in with_sidecars {
            let e = init_peak.entry(k).or_insert(0.0);
            *e = e.max(v);
        }
    }
    add(&mut total, &sidecars);
    for (k, v) in init_peak {
        let e = total.entry(k).or_insert(0.0);
        *e = e.max(v);
    }
    if let Some(map) = spec["overhead"].as_object() {
        for (k, q) in map {
            *total.entry(k.clone()).or_insert(0.0) += q.as_str().and_then(parse).unwrap_or(0.0);
        }
    }
    total
}

pub fn add(into: &mut Amounts, more: &Amounts) {
    for (k, v) in more {
        *into.entry(k.clone()).or_insert(0.0) += v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_parse_with_decimal_and_binary_suffixes() {
        let cases = [
            ("500m", 0.5),
            ("2", 2.0),
            ("1.5", 1.5),
            ("128Mi", 134_217_728.0),
            ("1G", 1e9),
            ("1e3", 1000.0),
            ("4Ki", 4096.0),
        ];
        for (q, want) in cases {
            assert_eq!(parse(q), Some(want), "{q}");
        }
        assert_eq!(parse("lots"), None);
    }

    #[test]
    #[expect(
        clippy::float_cmp,
        reason = "2 and 2^27 are exact in binary: equality is what is meant"
    )]
    fn pod_requests_take_the_init_peak_and_default_requests_to_limits() {
        let pod = json!({"spec": {
        "initContainers": [{"name": "migrate", "resources": {"requests": {"cpu": "2"}}}],
        "containers": [
            {"name": "web", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}},
            {"name": "proxy", "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}}}
        ]}});
        let r = pod_requests(&pod);
        assert_eq!(r["cpu"], 2.0);
        assert_eq!(r["memory"], 134_217_728.0);
    }
}
