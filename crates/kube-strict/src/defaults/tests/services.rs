//! Service defaults and the ClusterIP/NodePort stand-ins.

use serde_json::json;

use super::{assert_json_eq, defaulted};
use crate::defaults::{allocate_cluster_ip, allocate_node_ports, preserve_service_allocations};

#[test]
fn minimal_clusterip_service_reads_back_like_kubectl_get() {
    let mut service = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }));
    allocate_cluster_ip(&mut service, 5);
    let expected = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "clusterIP": "10.96.0.6",
            "clusterIPs": ["10.96.0.6"],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "selector": {"app": "web"},
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    });
    assert_json_eq(&service, &expected);
}

#[test]
fn cluster_ip_allocation_is_deterministic_and_keeps_requests() {
    #[track_caller]
    fn case(spec: &serde_json::Value, n: u32, ip: &serde_json::Value, ips: &serde_json::Value) {
        let mut service = json!({"spec": spec});
        allocate_cluster_ip(&mut service, n);
        assert_eq!(service["spec"]["clusterIP"], *ip);
        assert_eq!(service["spec"]["clusterIPs"], *ips);
    }
    case(&json!({}), 0, &json!("10.96.0.1"), &json!(["10.96.0.1"]));
    case(
        &json!({}),
        300,
        &json!("10.96.1.45"),
        &json!(["10.96.1.45"]),
    );
    case(
        &json!({"clusterIP": "None"}),
        3,
        &json!("None"),
        &json!(["None"]),
    );
    case(
        &json!({"clusterIP": "10.96.200.7"}),
        3,
        &json!("10.96.200.7"),
        &json!(["10.96.200.7"]),
    );
    case(
        &json!({"type": "ExternalName", "externalName": "db.example.com"}),
        3,
        &serde_json::Value::Null,
        &serde_json::Value::Null,
    );
}

#[test]
fn headless_external_name_and_load_balancer_shapes() {
    let headless = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "db"},
        "spec": {"clusterIP": "None", "ports": [{"port": 5432, "name": "pg"}]},
    }));
    assert_eq!(
        headless["spec"]["ipFamilyPolicy"],
        json!("RequireDualStack")
    );
    assert_json_eq(&headless["spec"]["ipFamilies"], &json!(["IPv4"]));

    let external = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "db"},
        "spec": {"type": "ExternalName", "externalName": "db.example.com"},
    }));
    assert_json_eq(
        &external["spec"],
        &json!({"externalName": "db.example.com", "sessionAffinity": "None", "type": "ExternalName"}),
    );

    let mut lb = defaulted(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "edge"},
        "spec": {
            "type": "LoadBalancer",
            "sessionAffinity": "ClientIP",
            "selector": {"app": "edge"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "https", "port": 443}],
        },
    }));
    allocate_node_ports(&mut lb, &[30000, 30002]);
    let spec = &lb["spec"];
    assert_eq!(spec["allocateLoadBalancerNodePorts"], json!(true));
    assert_eq!(spec["externalTrafficPolicy"], json!("Cluster"));
    assert_json_eq(
        &spec["sessionAffinityConfig"],
        &json!({"clientIP": {"timeoutSeconds": 10800}}),
    );
    assert_eq!(spec["ports"][0]["targetPort"], json!("http"));
    assert_eq!(spec["ports"][0]["nodePort"], json!(30001));
    assert_eq!(spec["ports"][1]["nodePort"], json!(30003));
}

#[test]
fn updates_carry_allocations_over_and_follow_a_changed_cluster_ip() {
    let old = json!({"spec": {
        "type": "NodePort",
        "clusterIP": "10.96.0.20",
        "clusterIPs": ["10.96.0.20"],
        "ports": [{"name": "http", "port": 80, "nodePort": 31080}],
    }});
    let mut replaced =
        json!({"spec": {"type": "NodePort", "ports": [{"name": "http", "port": 8080}]}});
    preserve_service_allocations(&old, &mut replaced);
    assert_eq!(replaced["spec"]["clusterIP"], json!("10.96.0.20"));
    assert_eq!(replaced["spec"]["clusterIPs"], json!(["10.96.0.20"]));
    assert_eq!(replaced["spec"]["ports"][0]["nodePort"], json!(31080));

    let mut moved = json!({"spec": {
        "type": "NodePort",
        "clusterIP": "10.96.0.99",
        "clusterIPs": ["10.96.0.20"],
        "ports": [{"name": "http", "port": 80, "nodePort": 31080}],
    }});
    preserve_service_allocations(&old, &mut moved);
    assert_eq!(moved["spec"]["clusterIPs"], json!(["10.96.0.99"]));
}
