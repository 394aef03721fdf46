//! ConfigMap, Secret and PersistentVolumeClaim validation.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::{go_quote, quantity};
use super::names::{config_map_key, dns1123_subdomain};
use super::path::Path;
use super::selector::validate_label_selector;
use crate::defaults::quantity::Quantity;

/// ConfigMaps and Secrets share etcd's object size budget.
const MAX_DATA_SIZE: usize = 1024 * 1024;

pub(crate) fn validate_config_map(config_map: &Value, errs: &mut Vec<Cause>) {
    let data = config_map.get("data").and_then(Value::as_object);
    let binary = config_map.get("binaryData").and_then(Value::as_object);
    let mut total = 0;
    for (key, value) in data.into_iter().flatten() {
        let path = Path::root("data").key(key);
        for msg in config_map_key(key) {
            errs.push(Cause::invalid(&path, &go_quote(key), &msg));
        }
        if binary.is_some_and(|b| b.contains_key(key)) {
            errs.push(Cause::invalid(
                &path,
                &go_quote(key),
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary.into_iter().flatten() {
        for msg in config_map_key(key) {
            errs.push(Cause::invalid(
                &Path::root("binaryData").key(key),
                &go_quote(key),
                &msg,
            ));
        }
        total += decoded_len(value);
    }
    if total > MAX_DATA_SIZE {
        // Go passes an empty path: the error concerns the whole object.
        errs.push(Cause::too_long(&Path::root(""), MAX_DATA_SIZE));
    }
}

/// Bytes a base64 `[]byte` field decodes to.
fn decoded_len(value: &Value) -> usize {
    let text = value.as_str().unwrap_or("");
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (text.len() / 4 * 3).saturating_sub(padding)
}

pub(crate) fn validate_secret(secret: &Value, errs: &mut Vec<Cause>) {
    let data_path = Path::root("data");
    let data = secret.get("data").and_then(Value::as_object);
    let mut total = 0;
    for (key, value) in data.into_iter().flatten() {
        for msg in config_map_key(key) {
            errs.push(Cause::invalid(&data_path.key(key), &go_quote(key), &msg));
        }
        total += decoded_len(value);
    }
    if total > MAX_DATA_SIZE {
        errs.push(Cause::too_long(&data_path, MAX_DATA_SIZE));
    }
    let has = |key: &str| data.is_some_and(|d| d.contains_key(key));
    let non_empty = |key: &str| {
        data.and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    match secret.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let annotated = secret
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if !annotated {
                errs.push(Cause::required(
                    &Path::root("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" if !has(".dockercfg") => {
            errs.push(Cause::required(&data_path.key(".dockercfg"), ""));
        }
        "kubernetes.io/dockerconfigjson" if !has(".dockerconfigjson") => {
            errs.push(Cause::required(&data_path.key(".dockerconfigjson"), ""));
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errs.push(Cause::required(&data_path.key("username"), ""));
            errs.push(Cause::required(&data_path.key("password"), ""));
        }
        "kubernetes.io/ssh-auth" if !non_empty("ssh-privatekey") => {
            errs.push(Cause::required(&data_path.key("ssh-privatekey"), ""));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errs.push(Cause::required(&data_path.key(key), ""));
                }
            }
        }
        _ => {}
    }
}

pub(crate) fn validate_claim_spec(spec: &Value, path: &Path, errs: &mut Vec<Cause>) {
    const MODES: [&str; 4] = [
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let modes: &[Value] = spec
        .get("accessModes")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if modes.is_empty() {
        errs.push(Cause::required(
            &path.child("accessModes"),
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = spec.get("selector").filter(|s| s.is_object()) {
        validate_label_selector(selector, &path.child("selector"), errs);
    }
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !MODES.contains(&mode) {
            errs.push(Cause::not_supported(
                &path.child("accessModes"),
                &go_quote(mode),
                &MODES,
            ));
        }
    }
    let storage_path = path.child("resources").key("storage");
    match spec
        .get("resources")
        .and_then(|r| r.get("requests"))
        .and_then(|r| r.get("storage"))
    {
        None => errs.push(Cause::required(&storage_path, "")),
        Some(value) => {
            if let Some(Ok(q)) = Quantity::from_json(value)
                && (q.is_zero() || q.is_negative())
            {
                errs.push(Cause::invalid(
                    &storage_path,
                    &quantity(value),
                    "must be greater than zero",
                ));
            }
        }
    }
    if let Some(class) = spec
        .get("storageClassName")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    {
        for msg in dns1123_subdomain(class) {
            errs.push(Cause::invalid(
                &path.child("storageClassName"),
                &go_quote(class),
                &msg,
            ));
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str)
        && mode != "Block"
        && mode != "Filesystem"
    {
        errs.push(Cause::not_supported(
            &path.child("volumeMode"),
            &go_quote(mode),
            &["Block", "Filesystem"],
        ));
    }
}
