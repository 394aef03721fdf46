//! The connection edge against kube-sim over TCP: proxies (a kubeconfig's proxy-url,
//! HTTPS_PROXY/HTTP_PROXY, NO_PROXY), a token file rotated mid-run, a missing exec plugin.
//! Real sockets and real time; nothing here waits on a clock.

use crate::cli::assert_exit;
use crate::forward_proxy::{Carried, ForwardProxy, TokenFront};
use deploy_action::proxy::{ProxyConnector, ProxyEnv, Routes};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube_sim::{Scenario, Sim};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Output;
use std::time::Duration;
use tower::ServiceExt as _;

const BIN: &str = env!("CARGO_BIN_EXE_deploy-action");

const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

fn kubeconfig(server: &str, cluster_extra: &str, user: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: {server}{cluster_extra}
contexts:
- name: sim
  context: {{cluster: sim, user: deployer, namespace: default}}
current-context: sim
users:
- name: deployer
  user: {user}
"
    )
}

async fn sim() -> (Sim, SocketAddr) {
    let mut sim = Sim::start(Scenario::builder().build());
    let addr = sim.serve("127.0.0.1:0").await.expect("bind");
    (sim, addr)
}

/// `deploy-action deploy` of one ConfigMap with `kubeconfig`, under `env` and no other proxy
/// variable.
async fn deploy(dir: &Path, kubeconfig: &str, env: &[(&str, String)]) -> Output {
    std::fs::write(dir.join("kubeconfig"), kubeconfig).unwrap();
    std::fs::write(
        dir.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["deploy", "-f", "cm.yaml", "--kubeconfig", "kubeconfig"])
        .args(["--timeout", "60s", "--settle", "0s"])
        .current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NO_COLOR", "1");
    for name in PROXY_VARS {
        cmd.env_remove(name);
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().await.expect("deploy-action runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_behind_a_kubeconfig_proxy_url_is_reached_through_it() {
    let (_sim, addr) = sim().await;
    let proxy = ForwardProxy::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(
        &format!("http://{addr}"),
        &format!("\n    proxy-url: http://deployer:s3cret@{}", proxy.addr),
        "{}",
    );
    // NO_PROXY does not apply to a kubeconfig's proxy-url (kubectl's rule), nor does the
    // loopback exception.
    let out = deploy(dir.path(), &config, &[("NO_PROXY", "*".to_owned())]).await;
    assert_exit(&out, 0);
    let carried = proxy.carried();
    assert!(!carried.is_empty(), "nothing went through the proxy");
    let prefix = format!("http://{addr}/");
    for c in &carried {
        assert!(
            c.request.split(' ').nth(1).unwrap().starts_with(&prefix),
            "{carried:?}"
        );
        // deployer:s3cret, on every request forwarded as plain HTTP.
        assert_eq!(
            c.proxy_authorization.as_deref(),
            Some("Basic ZGVwbG95ZXI6czNjcmV0")
        );
    }
    let printed = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(!printed.contains("s3cret"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_proxy_from_the_environment_carries_requests_to_a_named_server() {
    let (_sim, addr) = sim().await;
    let proxy = ForwardProxy::start().await;
    // A name only the proxy can resolve: reaching it at all proves the route.
    proxy.resolve("kube.example.test", addr);
    let dir = tempfile::tempdir().unwrap();
    let server = format!("http://kube.example.test:{}", addr.port());
    let env = [
        ("http_proxy", proxy.url()),
        // For https destinations only: not used for this http server.
        ("HTTPS_PROXY", "http://127.0.0.1:9".to_owned()),
        (
            "NO_PROXY",
            "localhost,127.0.0.1,.cluster.local,10.0.0.0/8".to_owned(),
        ),
    ];
    let out = deploy(dir.path(), &kubeconfig(&server, "", "{}"), &env).await;
    assert_exit(&out, 0);
    let carried = proxy.carried();
    assert!(
        carried
            .iter()
            .any(|c| c.request.starts_with(&format!("GET {server}/"))),
        "{carried:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_proxy_covering_the_server_sends_it_direct_as_kubectl_does() {
    let (_sim, addr) = sim().await;
    let proxy = ForwardProxy::start().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("HTTPS_PROXY", proxy.url()),
        ("HTTP_PROXY", proxy.url()),
        ("NO_PROXY", "127.0.0.1".to_owned()),
    ];
    let out = deploy(
        dir.path(),
        &kubeconfig(&format!("http://{addr}"), "", "{}"),
        &env,
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(proxy.carried(), []);
}

/// The connector alone, for an https destination: a `CONNECT` tunnel carrying the proxy's
/// credentials; what runs inside (TLS, for a real server) is the client's business, so
/// plain HTTP to the sim shows the tunnel works. NO_PROXY then sends the same name direct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_destinations_are_tunnelled_with_connect_unless_no_proxy_names_them() {
    let (_sim, addr) = sim().await;
    let proxy = ForwardProxy::start().await;
    proxy.resolve("kube.example.test", addr);
    let proxy_url = format!("http://deployer:s3cret@{}", proxy.addr);
    let env = |no_proxy: Option<&str>| {
        let proxy_url = proxy_url.clone();
        let no_proxy = no_proxy.map(str::to_owned);
        ProxyEnv::from_vars(move |name| match name {
            "HTTPS_PROXY" => Some(proxy_url.clone()),
            "NO_PROXY" => no_proxy.clone(),
            _ => None,
        })
        .unwrap()
    };
    let connector = ProxyConnector::new(Routes::Env(Box::new(env(None))));
    let stream = connector
        .oneshot("https://kube.example.test:6443".parse().unwrap())
        .await
        .expect("tunnelled");
    let (mut send, connection) = hyper::client::conn::http1::handshake(stream).await.unwrap();
    tokio::spawn(connection);
    let request = http::Request::get("/version")
        .header("host", "kube.example.test")
        .body(kube::client::Body::empty())
        .unwrap();
    let response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        proxy.carried(),
        [Carried {
            request: "CONNECT kube.example.test:6443".to_owned(),
            // deployer:s3cret
            proxy_authorization: Some("Basic ZGVwbG95ZXI6czNjcmV0".to_owned()),
        }]
    );

    let direct = ProxyConnector::new(Routes::Env(Box::new(env(Some("example.test:6443")))));
    let result = direct
        .oneshot("https://kube.example.test:6443".parse().unwrap())
        .await;
    // Direct, so the name does not resolve on this machine; the proxy saw nothing more.
    assert!(result.is_err());
    assert_eq!(proxy.carried().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_file_is_picked_up_at_the_first_401() {
    let (_sim, addr) = sim().await;
    let front = TokenFront::start(addr, "token-one").await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "token-one\n").unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(
        &path,
        kubeconfig(
            &format!("http://{}", front.addr),
            "",
            &format!("{{tokenFile: {}}}", token.display()),
        ),
    )
    .unwrap();
    let conn = deploy_action::cluster::connect(Some(&path), None, None)
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(conn.client.clone());
    namespaces.list(&ListParams::default()).await.unwrap();
    assert_eq!(front.counts(), (0, 1));

    // The token rotates: the server takes only the new one from now on.
    std::fs::write(&token, "token-two\n").unwrap();
    front.rotate("token-two");
    for _ in 0..3 {
        namespaces.list(&ListParams::default()).await.unwrap();
    }
    // One 401, the file read again, that request sent again; no other request refused.
    assert_eq!(front.counts(), (1, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_exec_plugin_is_named_with_its_install_hint() {
    let (_sim, addr) = sim().await;
    let dir = tempfile::tempdir().unwrap();
    let user = "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, \
                command: aws-iam-authenticator-not-installed, args: [token, -i, prod], \
                installHint: 'Install it: https://docs.aws.amazon.com/eks/latest/userguide/install-aws-iam-authenticator.html'}}";
    let out = deploy(
        dir.path(),
        &kubeconfig(&format!("http://{addr}"), "", user),
        &[],
    )
    .await;
    assert_exit(&out, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "cannot use context \"sim\" of kubeconfig: getting credentials: exec: \
             executable aws-iam-authenticator-not-installed not found\n  hint: Install it: \
             https://docs.aws.amazon.com/eks/latest/userguide/install-aws-iam-authenticator.html"
        ),
        "{stderr}"
    );
}

/// Proxies named by HTTP_PROXY for one test, in-process.
fn http_proxy(proxy: &ForwardProxy, no_proxy: &str) -> ProxyEnv {
    let url = proxy.url();
    let no_proxy = no_proxy.to_owned();
    ProxyEnv::from_vars(move |name| match name {
        "HTTP_PROXY" => Some(url.clone()),
        "NO_PROXY" => Some(no_proxy.clone()),
        _ => None,
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_lookups_go_through_the_proxy_unless_no_proxy_names_the_registry() {
    use deploy_action::registry::{Lookup, Registry, RegistryOptions};
    use wiremock::matchers::path;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("docker-content-digest", "sha256:0123")
                .insert_header("content-type", "application/vnd.oci.image.index.v1+json"),
        )
        .mount(&server)
        .await;
    let proxy = ForwardProxy::start().await;
    proxy.resolve("registry.example.test", *server.address());
    let host = format!("registry.example.test:{}", server.address().port());
    let registry = |no_proxy: &str| {
        Registry::new(&RegistryOptions {
            insecure_registries: vec![host.clone()],
            proxies: Some(http_proxy(&proxy, no_proxy)),
            max_retries: 0,
            ..RegistryOptions::default()
        })
        .unwrap()
    };
    let image = format!("{host}/shop/web:1.0");
    let found = registry("localhost,.cluster.local")
        .lookup(&image, None)
        .await;
    assert!(matches!(found, Lookup::Exists { .. }), "{found:?}");
    let carried = proxy.carried();
    assert!(!carried.is_empty());
    assert!(
        carried.iter().all(|c| c
            .request
            .contains(&format!("http://{host}/v2/shop/web/manifests/1.0"))),
        "{carried:?}"
    );

    // NO_PROXY names the registry: direct, where its name does not resolve.
    let direct = registry("example.test").lookup(&image, None).await;
    assert!(matches!(direct, Lookup::Unreachable { .. }), "{direct:?}");
    assert_eq!(proxy.carried().len(), carried.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_is_reached_through_the_proxy_with_its_token_intact() {
    use deploy_action::github::{ClientOptions, GithubClient};
    use deploy_action::render::github::context::Repository;
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/shop/commits/abc123/check-runs"))
        .and(header("authorization", "Bearer ghs_not_a_real_token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"total_count": 0, "check_runs": []})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let proxy = ForwardProxy::start().await;
    proxy.resolve("github.example.test", *server.address());
    let api = format!("http://github.example.test:{}", server.address().port());
    let options = ClientOptions {
        proxies: Some(http_proxy(&proxy, "")),
        ..ClientOptions::new(&api)
    };
    let repository = Repository {
        owner: "acme".into(),
        name: "shop".into(),
    };
    let client = GithubClient::with_options(repository, "ghs_not_a_real_token", options).unwrap();
    let found = client.find_check_run("abc123", "deploy", "id").await;
    assert_eq!(found, Ok(None));
    let carried = proxy.carried();
    assert_eq!(carried.len(), 1, "{carried:?}");
    assert!(
        carried[0].request.starts_with(&format!(
            "GET {api}/repos/acme/shop/commits/abc123/check-runs?"
        )),
        "{carried:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deploy_over_tls_goes_on_when_its_token_file_rotates_mid_run() {
    use kube_sim::scenario::ImageBehaviour;
    use kube_sim::{ServeOptions, TokenSpec};
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "token-one\n").unwrap();
    // kube-sim reads the same file: once it is rewritten, only the new token is taken.
    // Every watch of pods ends after two events, so watches start again after the rotation
    // and meet the 401 an old token gets.
    let drop_watches = kube_sim::scenario::Fault {
        matcher: kube_sim::scenario::FaultMatch {
            verb: Some("watch".into()),
            resource: Some("pods".into()),
            ..Default::default()
        },
        drop_after_events: Some(2),
        ..Default::default()
    };
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_secs(3)))
            .token(TokenSpec::token_file(&token, "ci", &["system:masters"]))
            .fault(drop_watches)
            .build(),
    );
    let served = sim
        .serve_with(ServeOptions::new("127.0.0.1:0").tls())
        .await
        .unwrap();
    served
        .kubeconfig()
        .token_file(&token)
        .write(&dir.path().join("kubeconfig"))
        .unwrap();
    std::fs::write(
        dir.path().join("web.yaml"),
        crate::support::deployment("web", "registry.local/shop/web:1", ""),
    )
    .unwrap();
    let rotate = {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            std::fs::write(&token, "token-two\n").unwrap();
        })
    };
    let out = tokio::process::Command::new(BIN)
        .args(["deploy", "-f", "web.yaml", "--kubeconfig", "kubeconfig"])
        .args([
            "--timeout",
            "60s",
            "--settle",
            "2s",
            "--image-preflight",
            "off",
        ])
        .current_dir(dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env("NO_COLOR", "1")
        .output()
        .await
        .unwrap();
    rotate.await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The first 401 re-read the file; no warning of a refused watch reached the log.
    assert!(!stderr.contains("Unauthorized"), "{stderr}");
}
