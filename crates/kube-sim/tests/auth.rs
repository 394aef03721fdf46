//! Authentication and RBAC through the router and a kube-rs client in-process: the exact
//! 401 and 403 bodies, token rotation and revocation, grants that start and end with their
//! bindings. (kubectl's view of the same is in `kubectl_auth.rs`.)

use axum::body::{Body, to_bytes};
use http::{Request, StatusCode, header};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_sim::{Scenario, Sim, TokenSpec};
use serde_json::{Value, json};
use std::time::Duration;
use tower::ServiceExt;

const UNAUTHORIZED: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;

fn secured() -> Scenario {
    Scenario::builder()
        .token(TokenSpec::token(
            "admin-token",
            "admin",
            &["system:masters"],
        ))
        .token(TokenSpec::token("ci-token", "ci", &["devs"]))
        .rbac()
        .build()
}

/// One raw request through the router: status and body.
async fn raw(sim: &Sim, method: &str, path: &str, token: Option<&str>) -> (StatusCode, String) {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let resp = kube_sim::server::router(sim.server.clone())
        .oneshot(req.body(Body::empty()).expect("request"))
        .await
        .expect("router answers");
    let status = resp.status();
    let body = to_bytes(resp.into_body(), 1 << 20).await.expect("body");
    (status, String::from_utf8(body.to_vec()).expect("utf-8"))
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other}"),
    }
}

fn role_and_binding(ns: &str, user: &str, resources: &[&str], verbs: &[&str]) -> (Value, Value) {
    (
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "reader", "namespace": ns},
               "rules": [{"apiGroups": [""], "resources": resources, "verbs": verbs}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "reader", "namespace": ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}),
    )
}

#[tokio::test(start_paused = true)]
async fn requests_without_a_valid_token_get_the_api_servers_401() {
    let sim = Sim::start(secured());
    for token in [None, Some("wrong"), Some("")] {
        let (status, body) = raw(&sim, "GET", "/api/v1/namespaces/default/pods", token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(body, UNAUTHORIZED, "{token:?}");
    }
    // Authentication comes before routing: an unknown path is a 401 too, discovery as well.
    assert_eq!(raw(&sim, "GET", "/nope", None).await.1, UNAUTHORIZED);
    assert_eq!(
        raw(&sim, "GET", "/apis", Some("wrong")).await.1,
        UNAUTHORIZED
    );
    // kube-sim's own debug endpoints are not the API.
    assert_eq!(
        raw(&sim, "GET", "/debug/requests", None).await.0,
        StatusCode::OK
    );

    let e = api_error(
        Api::<Pod>::namespaced(sim.client_with_token("wrong"), "default")
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.code, e.reason.as_str(), e.message.as_str()),
        (401, "Unauthorized", "Unauthorized")
    );

    // The in-process client is the loopback superuser, so existing tests keep working.
    let pods = Api::<Pod>::namespaced(sim.client(), "default");
    assert!(pods.list(&ListParams::default()).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn forbidden_requests_get_the_api_servers_403_bodies() {
    let sim = Sim::start(secured());
    let cases = [
        (
            "/api/v1/namespaces/shop/pods",
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"ci\" cannot list resource \"pods\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}"#,
        ),
        (
            "/api/v1/namespaces/shop/pods/web",
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web\" is forbidden: User \"ci\" cannot get resource \"pods\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","details":{"name":"web","kind":"pods"},"code":403}"#,
        ),
        (
            "/api/v1/namespaces/shop/pods/web/log",
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web\" is forbidden: User \"ci\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","details":{"name":"web","kind":"pods"},"code":403}"#,
        ),
        (
            "/apis/apps/v1/deployments?watch=true",
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps is forbidden: User \"ci\" cannot watch resource \"deployments\" in API group \"apps\" at the cluster scope","reason":"Forbidden","details":{"group":"apps","kind":"deployments"},"code":403}"#,
        ),
        (
            "/logs",
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"ci\" cannot get path \"/logs\"","reason":"Forbidden","details":{},"code":403}"#,
        ),
    ];
    for (path, expected) in cases {
        let (status, body) = raw(&sim, "GET", path, Some("ci-token")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(body, expected, "{path}");
    }
    // Discovery, /version and OpenAPI are every authenticated user's.
    for path in [
        "/api",
        "/apis",
        "/api/v1",
        "/apis/apps/v1",
        "/version",
        "/openapi/v3",
    ] {
        assert_eq!(
            raw(&sim, "GET", path, Some("ci-token")).await.0,
            StatusCode::OK,
            "{path}"
        );
    }
    // system:masters bypasses RBAC: an unknown path is a plain 404 for the admin.
    assert_eq!(
        raw(&sim, "GET", "/logs", Some("admin-token")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(start_paused = true)]
async fn a_role_binding_grants_until_it_is_deleted() {
    let sim = Sim::start(secured());
    sim.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
        .expect("namespace");
    let as_ci = Api::<ConfigMap>::namespaced(sim.client_with_token("ci-token"), "shop");
    let e = api_error(as_ci.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));

    let (role, binding) =
        role_and_binding("shop", "ci", &["configmaps"], &["get", "list", "create"]);
    sim.create(role).expect("role");
    sim.create(binding).expect("binding");
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "settings"}})).unwrap();
    as_ci
        .create(&PostParams::default(), &cm)
        .await
        .expect("granted create");
    assert_eq!(
        as_ci
            .list(&ListParams::default())
            .await
            .expect("granted list")
            .items
            .len(),
        1
    );
    // Granted in shop only; and delete was never granted.
    let elsewhere = Api::<ConfigMap>::namespaced(sim.client_with_token("ci-token"), "default");
    assert_eq!(
        api_error(elsewhere.list(&ListParams::default()).await.unwrap_err()).code,
        403
    );
    let e = api_error(
        as_ci
            .delete("settings", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        e.message,
        r#"configmaps "settings" is forbidden: User "ci" cannot delete resource "configmaps" in API group "" in the namespace "shop""#
    );

    sim.delete(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "shop",
        "reader",
    )
    .expect("revoke");
    assert_eq!(
        api_error(as_ci.list(&ListParams::default()).await.unwrap_err()).code,
        403
    );
}

#[tokio::test(start_paused = true)]
async fn tokens_rotate_by_file_and_are_revoked_at_runtime_or_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("token");
    std::fs::write(&file, "first\n").expect("write token");
    let sim = Sim::start(
        Scenario::builder()
            .token(TokenSpec::token_file(&file, "rotor", &["system:masters"]))
            .token(
                TokenSpec::token("short-lived", "ci", &["system:masters"])
                    .until(Duration::from_secs(30)),
            )
            .build(),
    );
    let path = "/api/v1/namespaces/default/configmaps";
    assert_eq!(
        raw(&sim, "GET", path, Some("first")).await.0,
        StatusCode::OK
    );
    std::fs::write(&file, "second\n").expect("rotate");
    assert_eq!(
        raw(&sim, "GET", path, Some("first")).await,
        (StatusCode::UNAUTHORIZED, UNAUTHORIZED.to_owned())
    );
    assert_eq!(
        raw(&sim, "GET", path, Some("second")).await.0,
        StatusCode::OK
    );

    sim.add_token(&TokenSpec::token("added", "late", &["system:masters"]));
    assert_eq!(
        raw(&sim, "GET", path, Some("added")).await.0,
        StatusCode::OK
    );
    assert!(sim.revoke_token("added"));
    assert_eq!(
        raw(&sim, "GET", path, Some("added")).await.0,
        StatusCode::UNAUTHORIZED
    );

    assert_eq!(
        raw(&sim, "GET", path, Some("short-lived")).await.0,
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(
        raw(&sim, "GET", path, Some("short-lived")).await.0,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test(start_paused = true)]
async fn self_subject_access_reviews_answer_from_the_bindings() {
    let sim = Sim::start(secured());
    let (role, binding) = role_and_binding("shop", "ci", &["pods", "pods/log"], &["get"]);
    sim.create(role).expect("role");
    sim.create(binding).expect("binding");
    let review = |attrs: Value| {
        let sim = &sim;
        async move {
            let body = json!({"apiVersion": "authorization.k8s.io/v1",
                              "kind": "SelfSubjectAccessReview", "spec": attrs});
            let req = Request::post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
                .header(header::AUTHORIZATION, "Bearer ci-token")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .expect("request");
            let resp = kube_sim::server::router(sim.server.clone())
                .oneshot(req)
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::CREATED);
            let body = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
            serde_json::from_slice::<Value>(&body).unwrap()["status"].clone()
        }
    };
    let logs = review(
        json!({"resourceAttributes": {"namespace": "shop", "verb": "get",
                                                    "resource": "pods", "subresource": "log"}}),
    )
    .await;
    assert_eq!(
        logs,
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"reader/shop\" of Role \"reader\" to User \"ci\""})
    );
    let delete = review(
        json!({"resourceAttributes": {"namespace": "shop", "verb": "delete", "resource": "pods"}}),
    )
    .await;
    assert_eq!(delete, json!({"allowed": false}));
    let version =
        review(json!({"nonResourceAttributes": {"path": "/version", "verb": "get"}})).await;
    assert_eq!(version["allowed"], true);
}

/// What deploy-action does: read the kubeconfig kube-sim writes and talk HTTPS with
/// kube-rs (rustls, ring), verifying the server by the CA it carries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_connects_over_tls_from_the_written_kubeconfig() {
    let mut sim = Sim::start(secured());
    let served = sim
        .serve_with(kube_sim::ServeOptions::new("127.0.0.1:0").tls())
        .await
        .expect("serve TLS");
    let client_for = |token: &str| {
        let text = served
            .kubeconfig()
            .namespace("default")
            .token(token)
            .render();
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).expect("kubeconfig parses");
        async move {
            let config = kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .expect("config");
            kube::Client::try_from(config).expect("client")
        }
    };
    let admin = client_for("admin-token").await;
    let version = admin.apiserver_version().await.expect("version over TLS");
    assert_eq!(version.minor, "33");
    let pods = Api::<Pod>::namespaced(admin, "default");
    assert!(
        pods.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );

    let ci = Api::<Pod>::namespaced(client_for("ci-token").await, "default");
    let e = api_error(ci.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            403,
            r#"pods is forbidden: User "ci" cannot list resource "pods" in API group "" in the namespace "default""#
        )
    );
    let wrong = Api::<Pod>::namespaced(client_for("wrong").await, "default");
    assert_eq!(
        api_error(wrong.list(&ListParams::default()).await.unwrap_err()).code,
        401
    );
}
