//! Service defaults (`SetDefaults_Service`), the IP-family fields the service registry
//! fills in (single-stack IPv4 cluster), and deterministic stand-ins for the ClusterIP
//! and NodePort allocators.

use serde_json::{Value, json};

use super::apps::initial_status;
use super::json::{Object, child, default_ptr, default_str, elements, is_empty_map, str_field};

/// First and last NodePort of the default `--service-node-port-range`.
pub const NODE_PORT_RANGE: (u32, u32) = (30000, 32767);

pub(crate) fn default_service(service: &mut Object) {
    if let Some(spec) = child(service, "spec") {
        default_spec(spec);
    }
    initial_status(service, json!({"loadBalancer": {}}));
}

fn default_spec(spec: &mut Object) {
    default_str(spec, "sessionAffinity", "None");
    match str_field(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    for port in elements(spec, "ports") {
        default_str(port, "protocol", "TCP");
        let target_unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if target_unset {
            let port_number = port.get("port").cloned().unwrap_or(json!(0));
            port.insert("targetPort".into(), port_number);
        }
    }
    let service_type = str_field(spec, "type").to_string();
    let externally_accessible = service_type == "NodePort"
        || service_type == "LoadBalancer"
        || spec
            .get("externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|ips| !ips.is_empty());
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(
        service_type.as_str(),
        "ClusterIP" | "NodePort" | "LoadBalancer"
    ) {
        default_ptr(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if service_type == "LoadBalancer" {
        default_ptr(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if service_type != "ExternalName" {
        default_ip_families(spec);
    }
}

/// The registry's `initIPFamilyFields` on a single-stack IPv4 cluster: headless services
/// without a selector ask for every cluster family, everything else is single-stack.
fn default_ip_families(spec: &mut Object) {
    let families_given = spec
        .get("ipFamilies")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    let headless_without_selector =
        str_field(spec, "clusterIP") == "None" && is_empty_map(spec, "selector");
    if headless_without_selector {
        default_ptr(spec, "ipFamilyPolicy", json!("RequireDualStack"));
    }
    if !families_given {
        spec.insert("ipFamilies".into(), json!(["IPv4"]));
    }
    default_ptr(spec, "ipFamilyPolicy", json!("SingleStack"));
}

/// The ClusterIP allocator: `n` picks an address in 10.96.0.0/16 deterministically
/// (n = 0 is 10.96.0.1, the `kubernetes` service). Headless ("None") and explicitly
/// requested addresses are kept; `clusterIPs` mirrors `clusterIP`. ExternalName services
/// get nothing.
pub fn allocate_cluster_ip(service: &mut Value, n: u32) {
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if str_field(spec, "type") == "ExternalName" {
        return;
    }
    if str_field(spec, "clusterIP").is_empty() {
        let first_ip = spec
            .get("clusterIPs")
            .and_then(Value::as_array)
            .and_then(|ips| ips.first())
            .and_then(Value::as_str)
            .filter(|ip| !ip.is_empty())
            .map(str::to_string);
        let ip = first_ip.unwrap_or_else(|| {
            let offset = n % 65_534 + 1;
            format!("10.96.{}.{}", offset / 256, offset % 256)
        });
        spec.insert("clusterIP".into(), Value::from(ip));
    }
    let has_ips = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    if !has_ips {
        let ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

/// The NodePort allocator: every port of a NodePort or LoadBalancer service (unless
/// `allocateLoadBalancerNodePorts: false`) without a `nodePort` gets the lowest port of
/// the range not in `in_use` nor used by the service itself.
pub fn allocate_node_ports(service: &mut Value, in_use: &[u32]) {
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let service_type = str_field(spec, "type");
    let wants_ports = service_type == "NodePort"
        || (service_type == "LoadBalancer"
            && spec
                .get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool)
                != Some(false));
    if !wants_ports {
        return;
    }
    let mut taken: Vec<u32> = in_use.to_vec();
    taken.extend(
        elements(spec, "ports").filter_map(|p| p.get("nodePort")?.as_u64().map(|n| n as u32)),
    );
    for port in elements(spec, "ports") {
        let unset = port.get("nodePort").and_then(Value::as_u64).unwrap_or(0) == 0;
        if !unset {
            continue;
        }
        if let Some(free) = (NODE_PORT_RANGE.0..=NODE_PORT_RANGE.1).find(|p| !taken.contains(p)) {
            taken.push(free);
            port.insert("nodePort".into(), json!(free));
        }
    }
}

/// The service registry's update preparation (`dropTypeDependentFields`,
/// `patchAllocatedValues`, `normalizeClusterIPs`): fields a type change makes meaningless
/// are dropped when the user left them as they were, values the new object leaves out (a
/// PUT of the original manifest) are carried over, and a changed `clusterIP` drags an
/// unchanged `clusterIPs` along. Call after `default_object` and before `validate_update`,
/// then `allocate_cluster_ip`/`allocate_node_ports` for a service that now needs them.
pub fn preserve_service_allocations(old: &Value, new: &mut Value) {
    let (Some(old_spec), Some(new_spec)) = (
        old.get("spec").and_then(Value::as_object),
        new.get_mut("spec").and_then(Value::as_object_mut),
    ) else {
        return;
    };
    drop_type_dependent_fields(old_spec, new_spec);
    let old_ips = ip_list(old_spec);
    if needs_cluster_ip(old_spec) && needs_cluster_ip(new_spec) {
        if str_field(new_spec, "clusterIP").is_empty()
            && let Some(ip) = old_spec.get("clusterIP")
        {
            new_spec.insert("clusterIP".into(), ip.clone());
        }
        if ip_list(new_spec).is_empty() && !old_ips.is_empty() {
            new_spec.insert("clusterIPs".into(), json!(old_ips));
        }
    }
    let old_ip = str_field(old_spec, "clusterIP").to_string();
    let new_ip = str_field(new_spec, "clusterIP").to_string();
    if old_ip != new_ip {
        let same_ips = ip_list(new_spec) == old_ips;
        if !old_ip.is_empty() && new_ip.is_empty() {
            if same_ips {
                new_spec.remove("clusterIPs");
            }
        } else if same_ips {
            new_spec.insert("clusterIPs".into(), json!([new_ip]));
        }
    }

    if needs_node_port(old_spec) && needs_node_port(new_spec) {
        let node_ports = |spec: &Object| -> Vec<(String, u64)> {
            spec.get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .map(|p| {
                    let node_port = p.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
                    (str_field(p, "name").to_string(), node_port)
                })
                .collect()
        };
        let old_ports = node_ports(old_spec);
        let new_ports = node_ports(new_spec);
        let used: Vec<u64> = old_ports
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| *n != 0 && new_ports.iter().any(|(_, m)| m == n))
            .collect();
        for port in elements(new_spec, "ports") {
            if port.get("nodePort").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            let name = str_field(port, "name");
            let old_value = old_ports
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, v)| *v);
            if !used.contains(&old_value) && old_value != 0 {
                port.insert("nodePort".into(), json!(old_value));
            }
        }
    }
    let needs_health_check = |spec: &Object| {
        str_field(spec, "type") == "LoadBalancer"
            && str_field(spec, "externalTrafficPolicy") == "Local"
    };
    if needs_health_check(old_spec) && needs_health_check(new_spec) {
        let unset = new_spec
            .get("healthCheckNodePort")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            == 0;
        if let (true, Some(port)) = (unset, old_spec.get("healthCheckNodePort")) {
            new_spec.insert("healthCheckNodePort".into(), port.clone());
        }
    }
}

/// Clears what the old type needed and the new one does not, unless the user changed it
/// in the same request (then validation reports it).
fn drop_type_dependent_fields(old_spec: &Object, new_spec: &mut Object) {
    let same = |key: &str, new_spec: &Object| old_spec.get(key) == new_spec.get(key);
    if needs_cluster_ip(old_spec) && !needs_cluster_ip(new_spec) {
        if same("clusterIP", new_spec) && same("clusterIPs", new_spec) {
            new_spec.remove("clusterIP");
            new_spec.remove("clusterIPs");
        }
        if same("ipFamilies", new_spec) {
            new_spec.remove("ipFamilies");
        }
        if same("ipFamilyPolicy", new_spec) {
            new_spec.remove("ipFamilyPolicy");
        }
    }
    let node_ports = |spec: &Object| -> Vec<Option<u64>> {
        spec.get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| p.get("nodePort").and_then(Value::as_u64))
            .collect()
    };
    if needs_node_port(old_spec)
        && !needs_node_port(new_spec)
        && node_ports(old_spec) == node_ports(new_spec)
    {
        for port in elements(new_spec, "ports") {
            port.remove("nodePort");
        }
    }
    let was_load_balancer = str_field(old_spec, "type") == "LoadBalancer";
    if was_load_balancer && str_field(new_spec, "type") != "LoadBalancer" {
        if same("healthCheckNodePort", new_spec) {
            new_spec.remove("healthCheckNodePort");
        }
        if same("allocateLoadBalancerNodePorts", new_spec) {
            new_spec.remove("allocateLoadBalancerNodePorts");
        }
    }
    let externally_accessible = |spec: &Object| {
        matches!(str_field(spec, "type"), "NodePort" | "LoadBalancer")
            || spec
                .get("externalIPs")
                .and_then(Value::as_array)
                .is_some_and(|ips| !ips.is_empty())
    };
    if externally_accessible(old_spec)
        && !externally_accessible(new_spec)
        && same("externalTrafficPolicy", new_spec)
    {
        new_spec.remove("externalTrafficPolicy");
    }
    if str_field(new_spec, "type") == "ExternalName" && same("internalTrafficPolicy", new_spec) {
        new_spec.remove("internalTrafficPolicy");
    }
}

fn ip_list(spec: &Object) -> Vec<String> {
    spec.get("clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn needs_cluster_ip(spec: &Object) -> bool {
    matches!(
        str_field(spec, "type"),
        "" | "ClusterIP" | "NodePort" | "LoadBalancer"
    )
}

fn needs_node_port(spec: &Object) -> bool {
    match str_field(spec, "type") {
        "NodePort" => true,
        "LoadBalancer" => {
            spec.get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool)
                != Some(false)
        }
        _ => false,
    }
}
