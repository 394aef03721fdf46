//! Ingresses: an address depends on a controller that may not report one at all, so being
//! stored is success; an address, when there, is only mentioned.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use serde_json::Value;

pub fn assess(obj: &Value) -> Assessment {
    let address = obj
        .at("/status/loadBalancer/ingress/0")
        .and_then(|i| i.get("hostname").or_else(|| i.get("ip")))
        .and_then(Value::as_str);
    match address {
        Some(a) => Assessment::succeeded(format!("created, address {a}")),
        None => Assessment::succeeded("created"),
    }
}
