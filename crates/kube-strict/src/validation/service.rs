//! Service validation (`ValidateService`) plus the NodePort range check the allocator
//! makes on create.

use serde_json::Value;

use super::container::validate_protocol;
use super::error::Cause;
use super::gofmt::{go_quote, int_or_string_struct};
use super::meta::validate_labels;
use super::names::{dns1123_label, dns1123_subdomain, port_number, qualified_name};
use super::path::Path;
use super::probes::validate_port_num_or_name;
use crate::defaults::NODE_PORT_RANGE;

pub(crate) fn validate_service(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    let service_type = str_of(spec, "type");
    let headless = str_of(spec, "clusterIP") == "None";
    let ports: &[Value] = spec
        .get("ports")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if ports.is_empty() && !headless && service_type != "ExternalName" {
        errs.push(Cause::required(&path.child("ports"), ""));
    }
    let first_ip = || {
        spec.get("clusterIPs")
            .and_then(Value::as_array)
            .and_then(|ips| ips.first())
            .and_then(Value::as_str)
            .unwrap_or("None")
            .to_string()
    };
    match service_type {
        "LoadBalancer" | "NodePort" if headless => errs.push(Cause::invalid(
            &path.child("clusterIPs").index(0),
            &go_quote(&first_ip()),
            &format!("may not be set to 'None' for {service_type} services"),
        )),
        "ExternalName" => {
            let has_ips = spec
                .get("clusterIPs")
                .and_then(Value::as_array)
                .is_some_and(|ips| !ips.is_empty());
            if has_ips {
                errs.push(Cause::forbidden(
                    &path.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            let has_families = spec
                .get("ipFamilies")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty());
            if has_families {
                errs.push(Cause::forbidden(
                    &path.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.get("ipFamilyPolicy").is_some_and(|p| !p.is_null()) {
                errs.push(Cause::forbidden(
                    &path.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let cname = str_of(spec, "externalName").trim_end_matches('.');
            if cname.is_empty() {
                errs.push(Cause::required(&path.child("externalName"), ""));
            } else {
                for msg in dns1123_subdomain(cname) {
                    errs.push(Cause::invalid(
                        &path.child("externalName"),
                        &go_quote(cname),
                        &msg,
                    ));
                }
            }
        }
        _ => {}
    }
    if service_type == "LoadBalancer" {
        for (i, port) in ports.iter().enumerate() {
            if port.get("port").and_then(Value::as_i64) == Some(10250) {
                errs.push(Cause::invalid(
                    &path.child("ports").index(i),
                    "10250",
                    "may not expose port 10250 externally since it is used by kubelet",
                ));
            }
        }
    }

    let mut names: Vec<String> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        validate_service_port(
            port,
            ports.len() > 1,
            &mut names,
            &path.child("ports").index(i),
            errs,
        );
    }
    validate_labels(spec.get("selector"), &path.child("selector"), errs);
    match str_of(spec, "sessionAffinity") {
        "" => errs.push(Cause::required(&path.child("sessionAffinity"), "")),
        "None" | "ClientIP" => {}
        other => errs.push(Cause::not_supported(
            &path.child("sessionAffinity"),
            &go_quote(other),
            &["ClientIP", "None"],
        )),
    }
    match service_type {
        "" => errs.push(Cause::required(&path.child("type"), "")),
        "ClusterIP" | "ExternalName" | "LoadBalancer" | "NodePort" => {}
        other => errs.push(Cause::not_supported(
            &path.child("type"),
            &go_quote(other),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        )),
    }
    for (i, port) in ports.iter().enumerate() {
        let node_port = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        if node_port == 0 {
            continue;
        }
        let node_port_path = path.child("ports").index(i).child("nodePort");
        if service_type == "ClusterIP" {
            errs.push(Cause::forbidden(
                &node_port_path,
                "may not be used when `type` is 'ClusterIP'",
            ));
        } else if !(i64::from(NODE_PORT_RANGE.0)..=i64::from(NODE_PORT_RANGE.1))
            .contains(&node_port)
        {
            errs.push(Cause::invalid(
                &node_port_path,
                &node_port.to_string(),
                &format!(
                    "provided port is not in the valid range. The range of valid ports is {}-{}",
                    NODE_PORT_RANGE.0, NODE_PORT_RANGE.1
                ),
            ));
        }
        let clash = ports[..i].iter().any(|p| {
            p.get("nodePort").and_then(Value::as_i64) == Some(node_port)
                && str_of(p, "protocol") == str_of(port, "protocol")
        });
        if clash {
            errs.push(Cause::duplicate(&node_port_path, &node_port.to_string()));
        }
    }
    for (i, port) in ports.iter().enumerate() {
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        let protocol = str_of(port, "protocol");
        let clash = ports[..i].iter().any(|p| {
            p.get("port").and_then(Value::as_i64).unwrap_or(0) == number
                && str_of(p, "protocol") == protocol
        });
        if clash {
            // Go prints the (protocol, port) key as a whole ServicePort struct.
            let key = format!(
                "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{number}, TargetPort:{}, NodePort:0}}",
                go_quote(protocol),
                int_or_string_struct(None),
            );
            errs.push(Cause::duplicate(&path.child("ports").index(i), &key));
        }
    }
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn validate_service_port(
    port: &Value,
    require_name: bool,
    names: &mut Vec<String>,
    path: &Path,
    errs: &mut Vec<Cause>,
) {
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(Cause::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        for msg in dns1123_label(name) {
            errs.push(Cause::invalid(&path.child("name"), &go_quote(name), &msg));
        }
        if names.iter().any(|n| n == name) {
            errs.push(Cause::duplicate(&path.child("name"), &go_quote(name)));
        } else {
            names.push(name.to_string());
        }
    }
    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
    for msg in port_number(number) {
        errs.push(Cause::invalid(
            &path.child("port"),
            &number.to_string(),
            &msg,
        ));
    }
    validate_protocol(port, &path.child("protocol"), errs);
    validate_port_num_or_name(port.get("targetPort"), &path.child("targetPort"), errs);
    if let Some(app_protocol) = port.get("appProtocol").and_then(Value::as_str) {
        for msg in qualified_name(app_protocol) {
            errs.push(Cause::invalid(
                &path.child("appProtocol"),
                &go_quote(app_protocol),
                &msg,
            ));
        }
    }
}
