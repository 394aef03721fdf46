//! LoadBalancer Services get an ingress IP as on kind with cloud-provider-kind.

use crate::controllers::workloads::testkit::{event_lines, sim, wait};
use crate::store::{DeleteOptions, ObjectKey};
use serde_json::json;

fn lb(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "shop"},
        "spec": {"type": "LoadBalancer", "selector": {"app": name},
                 "ports": [{"name": "https", "port": 443, "targetPort": 8443, "nodePort": 31443}]}})
}

#[tokio::test(start_paused = true)]
async fn load_balancers_get_an_ingress_ip_after_a_second() {
    let sim = sim(1);
    sim.create(lb("gateway")).unwrap();
    sim.create(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "internal", "namespace": "shop"},
        "spec": {"type": "ClusterIP", "ports": [{"port": 80}]}})).unwrap();
    wait(0.5).await;
    let svc = sim.get("v1", "Service", "shop", "gateway").unwrap();
    assert!(svc["status"]["loadBalancer"]["ingress"].is_null(), "{svc}");
    assert_eq!(
        svc["metadata"]["finalizers"],
        json!(["service.kubernetes.io/load-balancer-cleanup"])
    );
    wait(1.0).await;
    let svc = sim.get("v1", "Service", "shop", "gateway").unwrap();
    assert_eq!(
        svc["status"]["loadBalancer"],
        json!({"ingress": [{"ip": "172.18.255.1", "ipMode": "VIP"}]})
    );
    assert_eq!(
        event_lines(&sim, "shop", "gateway"),
        [
            "Normal EnsuringLoadBalancer: Ensuring load balancer",
            "Normal EnsuredLoadBalancer: Ensured load balancer",
        ]
    );
    let internal = sim.get("v1", "Service", "shop", "internal").unwrap();
    assert!(
        internal["status"]["loadBalancer"]["ingress"].is_null(),
        "{internal}"
    );

    sim.create(lb("admin")).unwrap();
    wait(2.0).await;
    assert_eq!(
        sim.get("v1", "Service", "shop", "admin").unwrap()["status"]["loadBalancer"]["ingress"][0]
            ["ip"],
        "172.18.255.2"
    );

    // Deleting waits for the balancer to be torn down, then the Service goes.
    sim.store
        .delete(
            &ObjectKey::new("", "services", "shop", "gateway"),
            DeleteOptions::default(),
        )
        .unwrap();
    assert!(sim.get("v1", "Service", "shop", "gateway").is_some());
    wait(1.0).await;
    assert!(sim.get("v1", "Service", "shop", "gateway").is_none());
    let lines = event_lines(&sim, "shop", "gateway");
    assert_eq!(
        lines[2..],
        [
            "Normal DeletingLoadBalancer: Deleting load balancer",
            "Normal DeletedLoadBalancer: Deleted load balancer"
        ]
    );
}
