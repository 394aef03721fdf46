//! Defaults for the small core kinds (Namespace, Secret) and the policy/autoscaling kinds
//! whose server-side shape a deploy tool reads back (PodDisruptionBudget, HPA).

use serde_json::{Value, json};

use super::apps::initial_status;
use super::json::{Object, child, default_ptr, default_str, existing, str_field};

/// Namespace: the `kubernetes.io/metadata.name` label (`SetDefaults_Namespace`), the
/// `kubernetes` finalizer (registry `PrepareForCreate`) and `status.phase: Active`.
pub(crate) fn default_namespace(namespace: &mut Object) {
    if let Some(meta) = child(namespace, "metadata") {
        let name = str_field(meta, "name").to_string();
        if !name.is_empty()
            && let Some(labels) = child(meta, "labels")
        {
            labels.insert("kubernetes.io/metadata.name".into(), Value::from(name));
        }
    }
    if let Some(spec) = child(namespace, "spec") {
        default_ptr(spec, "finalizers", json!(["kubernetes"]));
    }
    if let Some(status) = child(namespace, "status") {
        default_str(status, "phase", "Active");
    }
}

/// Secret: `type: Opaque`, and `stringData` folded into base64 `data` as the v1
/// conversion does (stringData wins over data; the server never returns stringData).
pub(crate) fn default_secret(secret: &mut Object) {
    default_str(secret, "type", "Opaque");
    let Some(Value::Object(string_data)) = secret.remove("stringData") else {
        return;
    };
    if let Some(data) = child(secret, "data") {
        for (key, value) in string_data {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, Value::from(base64(text.as_bytes())));
        }
    }
}

/// Standard base64 with padding, as Go encodes `[]byte` fields.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// PodDisruptionBudget: nothing in spec is defaulted; its status counters have no
/// omitempty, so a new PDB reads back with zeros.
pub(crate) fn default_pod_disruption_budget(pdb: &mut Object) {
    initial_status(
        pdb,
        json!({
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "disruptionsAllowed": 0,
            "expectedPods": 0,
        }),
    );
}

/// autoscaling/v2 HPA: `minReplicas: 1`, the 80% CPU metric when none is given, and, only
/// when `behavior` is present, its unset rules filled from the controller's defaults.
pub(crate) fn default_hpa_v2(hpa: &mut Object) {
    if let Some(spec) = child(hpa, "spec") {
        default_ptr(spec, "minReplicas", json!(1));
        let no_metrics = spec
            .get("metrics")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if no_metrics {
            spec.insert(
                "metrics".into(),
                json!([{
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80},
                    },
                }]),
            );
        }
        if let Some(behavior) = existing(spec, "behavior") {
            scaling_rules(
                behavior,
                "scaleUp",
                Some(0),
                json!([
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15},
                ]),
            );
            scaling_rules(
                behavior,
                "scaleDown",
                // The controller's --horizontal-pod-autoscaler-downscale-stabilization
                // applies instead, so the defaulter leaves the window unset.
                None,
                json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
            );
        }
    }
    initial_status(hpa, json!({"currentMetrics": null, "desiredReplicas": 0}));
}

/// `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`.
fn scaling_rules(behavior: &mut Object, key: &str, window: Option<i64>, policies: Value) {
    if let Some(rules) = child(behavior, key) {
        if let Some(window) = window {
            default_ptr(rules, "stabilizationWindowSeconds", json!(window));
        }
        default_ptr(rules, "selectPolicy", json!("Max"));
        default_ptr(rules, "policies", policies);
    }
}

/// autoscaling/v1 HPA: only `minReplicas` is defaulted in that version.
pub(crate) fn default_hpa_v1(hpa: &mut Object) {
    if let Some(spec) = child(hpa, "spec") {
        default_ptr(spec, "minReplicas", json!(1));
    }
    initial_status(hpa, json!({"currentReplicas": 0, "desiredReplicas": 0}));
}
