//! Probe validation: exactly one handler, valid ports and schemes, non-negative timings,
//! and `successThreshold: 1` where only one success makes sense.

use serde_json::Value;

use super::error::Cause;
use super::gofmt::{go_quote, scalar};
use super::meta::non_negative;
use super::names::{port_name, port_number};
use super::path::Path;

pub(crate) fn validate_probes(container: &Value, path: &Path, errs: &mut Vec<Cause>) {
    for field in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = container.get(field).filter(|p| p.is_object()) else {
            continue;
        };
        let probe_path = path.child(field);
        validate_handler(probe, &probe_path, errs);
        for number in [
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
        ] {
            non_negative(probe.get(number), &probe_path.child(number), errs);
        }
        if let Some(grace) = probe
            .get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
        {
            if field == "readinessProbe" {
                errs.push(Cause::invalid(
                    &probe_path.child("terminationGracePeriodSeconds"),
                    &grace.to_string(),
                    "must not be set for readinessProbes",
                ));
            } else if grace <= 0 {
                errs.push(Cause::invalid(
                    &probe_path.child("terminationGracePeriodSeconds"),
                    &grace.to_string(),
                    "must be greater than 0",
                ));
            }
        }
        let success = probe
            .get("successThreshold")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if field != "readinessProbe" && success != 1 {
            errs.push(Cause::invalid(
                &probe_path.child("successThreshold"),
                &success.to_string(),
                "must be 1",
            ));
        }
    }
}

/// `validateHandler`: exactly one of exec, httpGet, tcpSocket, grpc, sleep.
fn validate_handler(probe: &Value, path: &Path, errs: &mut Vec<Cause>) {
    let mut handlers = 0;
    for kind in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        let Some(handler) = probe.get(kind).filter(|h| !h.is_null()) else {
            continue;
        };
        let handler_path = path.child(kind);
        if handlers > 0 {
            errs.push(Cause::forbidden(
                &handler_path,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        handlers += 1;
        match kind {
            "exec" => {
                let empty = handler
                    .get("command")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if empty {
                    errs.push(Cause::required(&handler_path.child("command"), ""));
                }
            }
            "httpGet" => {
                if str_of(handler, "path").is_empty() {
                    errs.push(Cause::required(&handler_path.child("path"), ""));
                }
                validate_port_num_or_name(handler.get("port"), &handler_path.child("port"), errs);
                let scheme = str_of(handler, "scheme");
                if scheme != "HTTP" && scheme != "HTTPS" {
                    errs.push(Cause::not_supported(
                        &handler_path.child("scheme"),
                        &go_quote(scheme),
                        &["HTTP", "HTTPS"],
                    ));
                }
            }
            "tcpSocket" => {
                validate_port_num_or_name(handler.get("port"), &handler_path.child("port"), errs);
            }
            "grpc" => {
                let port = handler.get("port").and_then(Value::as_i64).unwrap_or(0);
                for msg in port_number(port) {
                    errs.push(Cause::invalid(
                        &handler_path.child("port"),
                        &port.to_string(),
                        &msg,
                    ));
                }
            }
            _ => {}
        }
    }
    if handlers == 0 {
        errs.push(Cause::required(path, "must specify a handler type"));
    }
}

/// `ValidatePortNumOrName` for an IntOrString port.
pub(crate) fn validate_port_num_or_name(port: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    match port {
        Some(Value::String(name)) => {
            for msg in port_name(name) {
                errs.push(Cause::invalid(path, &go_quote(name), &msg));
            }
        }
        other => {
            let number = other.and_then(Value::as_i64).unwrap_or(0);
            for msg in port_number(number) {
                errs.push(Cause::invalid(
                    path,
                    &scalar(Some(&Value::from(number))),
                    &msg,
                ));
            }
        }
    }
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}
