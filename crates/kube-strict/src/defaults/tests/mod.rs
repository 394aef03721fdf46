//! Defaulting tests: minimal manifests against what a real 1.33 server returns for them
//! (server-assigned metadata such as uid and resourceVersion left out).

mod pods;
mod quantity;
mod services;
mod storage;
mod workloads;

use serde_json::Value;

/// Compares whole objects (key order ignored), printing both sides readably on mismatch.
#[track_caller]
pub(super) fn assert_json_eq(actual: &Value, expected: &Value) {
    assert!(
        actual == expected,
        "objects differ\n--- actual\n{}\n--- expected\n{}",
        serde_json::to_string_pretty(actual).unwrap_or_default(),
        serde_json::to_string_pretty(expected).unwrap_or_default()
    );
}

/// Runs `default_object` and checks it is idempotent, as decoding twice must be.
pub(super) fn defaulted(mut object: Value) -> Value {
    crate::defaults::default_object(&mut object);
    let mut again = object.clone();
    crate::defaults::default_object(&mut again);
    assert_json_eq(&again, &object);
    object
}
