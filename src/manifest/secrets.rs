//! The values a deploy must never print: every Secret's data (decoded) and stringData in
//! the manifests, and literal `env` values whose names look secret (PASSWORD, TOKEN, KEY,
//! SECRET). A container that logs one of them, or an admission message that quotes one,
//! is masked by the renderers and, under GitHub Actions, by `::add-mask::`.

use super::Manifest;
use base64::Engine as _;
use serde_json::Value;

/// Shorter values are not masked: masking `1` or `yes` would hide every occurrence of
/// them in the whole log, which makes the output useless without protecting anything.
pub const MIN_SECRET_LEN: usize = 4;

const SECRET_NAME_PARTS: [&str; 5] = ["PASSWORD", "PASSWD", "TOKEN", "KEY", "SECRET"];

/// Whether a name (an env var, a data key) looks like it holds a secret: it contains
/// PASSWORD, PASSWD, TOKEN, KEY or SECRET in any case.
pub fn name_looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|p| upper.contains(p))
}

/// Every sensitive value in `manifests`, deduplicated, longest first.
pub fn values(manifests: &[Manifest]) -> Vec<String> {
    let mut out = Vec::new();
    for m in manifests {
        if m.kind == "Secret" && m.api_version == "v1" {
            if let Some(data) = m.object.get("data").and_then(Value::as_object) {
                for v in data.values().filter_map(Value::as_str) {
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(v.trim())
                        .ok()
                        .and_then(|b| String::from_utf8(b).ok());
                    out.extend(decoded);
                }
            }
            if let Some(data) = m.object.get("stringData").and_then(Value::as_object) {
                out.extend(data.values().filter_map(Value::as_str).map(str::to_owned));
            }
        }
        env_values(&m.object, &mut out);
    }
    out.retain(|v| v.trim().chars().count() >= MIN_SECRET_LEN);
    out.sort_by_key(|v| std::cmp::Reverse(v.len()));
    out.dedup();
    out
}

/// Literal env values with a secret-looking name, anywhere in a pod template or pod.
fn env_values(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(env) = map.get("env").and_then(Value::as_array) {
                for var in env {
                    let name = var.get("name").and_then(Value::as_str).unwrap_or_default();
                    if name_looks_secret(name)
                        && let Some(v) = var.get("value").and_then(Value::as_str)
                    {
                        out.push(v.to_owned());
                    }
                }
            }
            for v in map.values() {
                env_values(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| env_values(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::manifest::load_str;

    #[test]
    fn secret_data_string_data_and_secret_looking_env_values_are_collected() {
        let stream = "apiVersion: v1
kind: Secret
metadata: {name: db}
data:
  password: aHVudGVyMi1kYg==
  port: NTQzMg==
  flag: eWVz
stringData:
  url: postgres://app:hunter2-db@db:5432/shop
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1
          env:
            - {name: API_TOKEN, value: tok-0123456789}
            - {name: LOG_LEVEL, value: debug-verbose}
            - {name: SIGNING_KEY, valueFrom: {secretKeyRef: {name: db, key: password}}}
";
        let values = super::values(&load_str("app.yaml", stream).unwrap());
        assert_eq!(
            values,
            [
                "postgres://app:hunter2-db@db:5432/shop",
                "tok-0123456789",
                "hunter2-db",
                "5432",
            ]
        );
    }
}
