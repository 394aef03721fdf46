//! Container validation (`validateContainerCommon` and the probe checks): the errors a
//! deploy most often trips over — missing image, bad names, ports, resources, mounts.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::go_quote;
use super::names::{dns1123_label, env_var_name, port_name, port_number};
use super::path::Path;
use super::probes::validate_probes;
use super::resources::validate_resources;

/// Which kind of container list is being checked (their rules differ slightly).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContainerKind {
    Regular,
    Init,
}

pub(crate) fn validate_container(
    container: &Value,
    kind: ContainerKind,
    volumes: &[String],
    path: &Path,
    errs: &mut Vec<Cause>,
) {
    let name = str_of(container, "name");
    if name.is_empty() {
        errs.push(Cause::required(&path.child("name"), ""));
    } else {
        for msg in dns1123_label(name) {
            errs.push(Cause::invalid(&path.child("name"), &go_quote(name), &msg));
        }
    }
    if str_of(container, "image").is_empty() {
        errs.push(Cause::required(&path.child("image"), ""));
    }
    match str_of(container, "terminationMessagePolicy") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(Cause::required(&path.child("terminationMessagePolicy"), "")),
        other => errs.push(Cause::not_supported(
            &path.child("terminationMessagePolicy"),
            &go_quote(other),
            &["File", "FallbackToLogsOnError"],
        )),
    }
    validate_ports(container.get("ports"), &path.child("ports"), errs);
    validate_env(container.get("env"), &path.child("env"), errs);
    validate_mounts(
        container.get("volumeMounts"),
        volumes,
        &path.child("volumeMounts"),
        errs,
    );
    match str_of(container, "imagePullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.push(Cause::required(&path.child("imagePullPolicy"), "")),
        other => errs.push(Cause::not_supported(
            &path.child("imagePullPolicy"),
            &go_quote(other),
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    validate_resources(container.get("resources"), &path.child("resources"), errs);

    let sidecar = str_of(container, "restartPolicy") == "Always";
    match kind {
        ContainerKind::Regular => {
            validate_probes(container, path, errs);
            if container.get("restartPolicy").is_some_and(|v| !v.is_null()) {
                errs.push(Cause::forbidden(
                    &path.child("restartPolicy"),
                    "may not be set for non-init containers",
                ));
            }
        }
        ContainerKind::Init if sidecar => validate_probes(container, path, errs),
        ContainerKind::Init => {
            for field in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if container.get(field).is_some_and(|v| !v.is_null()) {
                    errs.push(Cause::forbidden(
                        &path.child(field),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn validate_ports(ports: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let idx = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let msgs = port_name(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    errs.push(Cause::invalid(&idx.child("name"), &go_quote(name), &msg));
                }
            } else if names.contains(&name) {
                errs.push(Cause::duplicate(&idx.child("name"), &go_quote(name)));
            } else {
                names.push(name);
            }
        }
        let container_port = port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if container_port == 0 {
            errs.push(Cause::required(&idx.child("containerPort"), ""));
        } else {
            for msg in port_number(container_port) {
                errs.push(Cause::invalid(
                    &idx.child("containerPort"),
                    &container_port.to_string(),
                    &msg,
                ));
            }
        }
        let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if host_port != 0 {
            for msg in port_number(host_port) {
                errs.push(Cause::invalid(
                    &idx.child("hostPort"),
                    &host_port.to_string(),
                    &msg,
                ));
            }
        }
        validate_protocol(port, &idx.child("protocol"), errs);
    }
}

pub(crate) fn validate_protocol(port: &Value, path: &Path, errs: &mut Vec<Cause>) {
    match str_of(port, "protocol") {
        "TCP" | "UDP" | "SCTP" => {}
        "" => errs.push(Cause::required(path, "")),
        other => errs.push(Cause::not_supported(
            path,
            &go_quote(other),
            &["SCTP", "TCP", "UDP"],
        )),
    }
}

fn validate_env(env: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    for (i, var) in env
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let idx = path.index(i);
        let name = str_of(var, "name");
        if name.is_empty() {
            errs.push(Cause::required(&idx.child("name"), ""));
        } else {
            for msg in env_var_name(name) {
                errs.push(Cause::invalid(&idx.child("name"), &go_quote(name), &msg));
            }
        }
        let Some(from) = var.get("valueFrom").and_then(Value::as_object) else {
            continue;
        };
        let from_path = idx.child("valueFrom");
        let sources: Vec<&str> = [
            "fieldRef",
            "resourceFieldRef",
            "configMapKeyRef",
            "secretKeyRef",
        ]
        .into_iter()
        .filter(|k| from.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
        match sources.len() {
            0 => errs.push(Cause::invalid(
                &from_path,
                "\"\"",
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            )),
            1 => {}
            _ => errs.push(Cause::invalid(
                &from_path,
                "\"\"",
                "may not have more than one field specified at a time",
            )),
        }
        for source in ["configMapKeyRef", "secretKeyRef"] {
            if let Some(selector) = from.get(source).filter(|v| v.is_object()) {
                let source_path = from_path.child(source);
                if str_of(selector, "key").is_empty() {
                    errs.push(Cause::required(&source_path.child("key"), ""));
                }
                if str_of(selector, "name").is_empty() {
                    errs.push(Cause::required(&source_path.child("name"), ""));
                }
            }
        }
        if !str_of(var, "value").is_empty() {
            errs.push(Cause::invalid(
                &from_path,
                "\"\"",
                "may not be specified when `value` is not empty",
            ));
        }
    }
}

fn validate_mounts(mounts: Option<&Value>, volumes: &[String], path: &Path, errs: &mut Vec<Cause>) {
    let mut mount_points: Vec<&str> = Vec::new();
    for (i, mount) in mounts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let idx = path.index(i);
        let name = str_of(mount, "name");
        if name.is_empty() {
            errs.push(Cause::required(&idx.child("name"), ""));
        }
        if !volumes.iter().any(|v| v == name) {
            errs.push(Cause::not_found(&idx.child("name"), &go_quote(name)));
        }
        let mount_path = str_of(mount, "mountPath");
        if mount_path.is_empty() {
            errs.push(Cause::required(&idx.child("mountPath"), ""));
        }
        if mount_points.contains(&mount_path) {
            errs.push(Cause::invalid(
                &idx.child("mountPath"),
                &go_quote(mount_path),
                "must be unique",
            ));
        }
        mount_points.push(mount_path);
    }
}
