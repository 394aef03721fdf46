//! kubectl 1.33 against kube-sim served over TLS with bearer tokens and RBAC: the library's
//! server on a loopback port and the `kube-sim serve` binary. What kubectl says about
//! certificates, 401s, 403s and `auth can-i` is what it says to a real cluster.

use super::kubectl::kubectl;
use kube_sim::{Kubeconfig, Scenario, ServeOptions, Served, Sim, TokenSpec};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A secured cluster served over HTTPS, and a kubeconfig per user.
struct Secured {
    sim: Sim,
    served: Served,
    kubectl: PathBuf,
    dir: tempfile::TempDir,
}

fn skip() {
    #[expect(
        clippy::print_stderr,
        reason = "a skipped fidelity test must say so loudly"
    )]
    {
        eprintln!("SKIPPED: no kubectl on this machine; kube-sim TLS/auth fidelity is unchecked");
    }
}

impl Secured {
    async fn start() -> Option<Secured> {
        let Some(kubectl) = kubectl() else {
            skip();
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let token_file = dir.path().join("rotor.token");
        std::fs::write(&token_file, "rotor-1\n").expect("token file");
        let scenario = Scenario::builder()
            .token(TokenSpec::token(
                "admin-token",
                "admin",
                &["system:masters"],
            ))
            .token(TokenSpec::token("ci-token", "ci", &["devs"]))
            .token(TokenSpec::token(
                "deployer-token",
                "system:serviceaccount:shop:deployer",
                &[],
            ))
            .token(TokenSpec::token_file(&token_file, "rotor", &[]))
            .rbac()
            .build();
        let mut sim = Sim::start(scenario);
        let served = sim
            .serve_with(ServeOptions::new("127.0.0.1:0").tls())
            .await
            .expect("serve TLS");
        Some(Secured {
            sim,
            served,
            kubectl,
            dir,
        })
    }

    /// A kubeconfig file authenticating with `token`.
    fn kubeconfig(&self, name: &str, config: Kubeconfig) -> PathBuf {
        let path = self.dir.path().join(name);
        config.namespace("shop").write(&path).expect("kubeconfig");
        path
    }

    fn user(&self, token: &str) -> PathBuf {
        self.kubeconfig(token, self.served.kubeconfig().token(token))
    }

    async fn run(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
        run(&self.kubectl, kubeconfig, args, stdin).await
    }

    async fn ok(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(kubeconfig, args, stdin).await;
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }
}

async fn run(kubectl: &Path, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let mut pipe = child.stdin.take().expect("stdin");
    if let Some(input) = stdin {
        pipe.write_all(input.as_bytes()).await.expect("stdin");
    }
    drop(pipe);
    child.wait_with_output().await.expect("kubectl output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const GRANTS: &str = "apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules:
- {apiGroups: [\"\"], resources: [pods, pods/log], verbs: [get, list, watch]}
- {apiGroups: [\"\"], resources: [configmaps], resourceNames: [settings], verbs: [get, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ci-reads, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: ci}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: deployer}
rules:
- {apiGroups: [apps], resources: [deployments, deployments/scale], verbs: ['*']}
- {apiGroups: [\"\"], resources: [nodes], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployers, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: deployer}
subjects:
- {kind: ServiceAccount, name: deployer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: devs-deploy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: deployer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: devs}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_over_tls_with_tokens_sees_401s_and_403s_as_from_a_real_cluster() {
    let Some(s) = Secured::start().await else {
        return;
    };
    assert!(
        s.served.url().starts_with("https://127.0.0.1:"),
        "{}",
        s.served.url()
    );
    let admin = s.user("admin-token");
    let ci = s.user("ci-token");
    s.ok(&admin, &["apply", "-f", "-"], Some(GRANTS)).await;
    s.ok(
        &admin,
        &["run", "web", "--image=registry.local/web:1"],
        None,
    )
    .await;
    let pods = s.ok(&admin, &["get", "pods", "-o", "name"], None).await;
    assert_eq!(pods.trim(), "pod/web");
    assert_eq!(
        s.ok(&ci, &["get", "pods", "-o", "name"], None).await.trim(),
        "pod/web"
    );

    // A certificate from another CA is refused by kubectl, so the CA really is checked.
    let other = kube_sim::tls::ServingCerts::generate(&[]).expect("certs");
    let untrusted = s.kubeconfig(
        "untrusted",
        Kubeconfig::new(&s.served.url())
            .certificate_authority(&other.ca_pem)
            .token("admin-token"),
    );
    let out = s.run(&untrusted, &["get", "pods"], None).await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("certificate signed by unknown authority"),
        "{}",
        stderr(&out)
    );

    // A wrong token: 401, which kubectl reports as a missing login.
    let wrong = s.user("not-a-token");
    let out = s.run(&wrong, &["get", "pods"], None).await;
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out).trim(),
        "error: You must be logged in to the server (Unauthorized)"
    );

    // Forbidden: kubectl prints the API server's message.
    for (args, message) in [
        (
            &["get", "pods", "-n", "default"][..],
            r#"Error from server (Forbidden): pods is forbidden: User "ci" cannot list resource "pods" in API group "" in the namespace "default""#,
        ),
        (
            &["delete", "pod", "web"][..],
            r#"Error from server (Forbidden): pods "web" is forbidden: User "ci" cannot delete resource "pods" in API group "" in the namespace "shop""#,
        ),
        (
            &["get", "namespaces"][..],
            r#"Error from server (Forbidden): namespaces is forbidden: User "ci" cannot list resource "namespaces" in API group "" at the cluster scope"#,
        ),
        (
            &["get", "configmap", "other"][..],
            r#"Error from server (Forbidden): configmaps "other" is forbidden: User "ci" cannot get resource "configmaps" in API group "" in the namespace "shop""#,
        ),
    ] {
        let out = s.run(&ci, args, None).await;
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(stderr(&out).trim(), message, "{args:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_can_i_agrees_with_the_bindings() {
    let Some(s) = Secured::start().await else {
        return;
    };
    let admin = s.user("admin-token");
    s.ok(&admin, &["apply", "-f", "-"], Some(GRANTS)).await;
    let ci = s.user("ci-token");
    let deployer = s.user("deployer-token");
    let cases: &[(&Path, &[&str], bool)] = &[
        (&ci, &["get", "pods"], true),
        (&ci, &["watch", "pods"], true),
        (&ci, &["get", "pods", "--subresource=log"], true),
        (&ci, &["delete", "pods"], false),
        (&ci, &["get", "pods", "-n", "default"], false),
        (&ci, &["get", "configmaps/settings"], true),
        (&ci, &["update", "configmaps/settings"], true),
        (&ci, &["get", "configmaps/other"], false),
        (&ci, &["list", "configmaps"], false),
        // Through group devs' ClusterRoleBinding: everywhere.
        (&ci, &["patch", "deployments.apps", "-n", "default"], true),
        (
            &ci,
            &["update", "deployments.apps", "--subresource=scale"],
            true,
        ),
        (
            &ci,
            &["update", "deployments.apps", "--subresource=status"],
            false,
        ),
        (&ci, &["list", "nodes"], true),
        (&ci, &["get", "nodes"], false),
        (&ci, &["get", "/apis"], true),
        (&ci, &["get", "/logs"], false),
        // The service account, through a RoleBinding to the ClusterRole: in shop only.
        (&deployer, &["create", "deployments.apps"], true),
        (
            &deployer,
            &["create", "deployments.apps", "-n", "default"],
            false,
        ),
        (&deployer, &["get", "pods"], false),
        (&admin, &["delete", "nodes"], true),
    ];
    for (kubeconfig, args, allowed) in cases {
        let mut full = vec!["auth", "can-i"];
        full.extend_from_slice(args);
        let out = s.run(kubeconfig, &full, None).await;
        let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let expected = if *allowed { "yes" } else { "no" };
        assert_eq!(
            answer,
            expected,
            "can-i {args:?} as {}",
            kubeconfig.display()
        );
        assert_eq!(
            out.status.success(),
            *allowed,
            "exit code of can-i {args:?}"
        );
    }

    // Revoking the binding takes effect at the next request.
    s.ok(&admin, &["delete", "rolebinding", "ci-reads"], None)
        .await;
    let out = s.run(&ci, &["auth", "can-i", "get", "pods"], None).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");

    // `can-i --list` reads the rules from a SelfSubjectRulesReview.
    let list = s.ok(&deployer, &["auth", "can-i", "--list"], None).await;
    assert!(
        list.lines()
            .any(|l| l.starts_with("deployments.apps ") && l.trim_end().ends_with("[*]")),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_file_refuses_the_old_token() {
    let Some(s) = Secured::start().await else {
        return;
    };
    let file = s.dir.path().join("rotor.token");
    let old = s.user("rotor-1");
    let by_file = s.kubeconfig("by-file", s.served.kubeconfig().token_file(&file));
    s.ok(&old, &["get", "--raw", "/version"], None).await;
    s.ok(&by_file, &["get", "--raw", "/version"], None).await;

    std::fs::write(&file, "rotor-2\n").expect("rotate");
    let out = s.run(&old, &["get", "--raw", "/version"], None).await;
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out).trim(),
        "error: You must be logged in to the server (Unauthorized)"
    );
    // kubectl reads tokenFile afresh, so the same kubeconfig goes on working.
    s.ok(&by_file, &["get", "--raw", "/version"], None).await;

    // A static token revoked at runtime.
    let ci = s.user("ci-token");
    s.ok(&ci, &["get", "--raw", "/version"], None).await;
    assert!(s.sim.revoke_token("ci-token"));
    let out = s.run(&ci, &["get", "--raw", "/version"], None).await;
    assert!(stderr(&out).contains("(Unauthorized)"), "{}", stderr(&out));
}

/// The binary: `kube-sim serve --tls --token ... --rbac --kubeconfig` and kubectl with the
/// kubeconfig it writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_tls_tokens_and_rbac() {
    let Some(kubectl) = kubectl() else {
        skip();
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let token_file = dir.path().join("ci.token");
    std::fs::write(&token_file, "ci-1").expect("token");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_kube-sim"))
        .args([
            "serve",
            "--tls",
            "--rbac",
            "--token",
            "admin-token,admin,system:masters",
        ])
        .arg("--token-file")
        .arg(format!("{},ci", token_file.display()))
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kube-sim runs");
    // The binary prints its URL once the kubeconfig is written.
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let first = lines.next_line().await.expect("read").expect("a line");
    assert!(
        first.starts_with("kube-sim serving Kubernetes 1.33 at https://127.0.0.1:"),
        "{first}"
    );
    let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig written");
    assert!(text.contains("certificate-authority-data: "), "{text}");
    assert!(
        text.contains(&format!("tokenFile: \"{}\"", token_file.display())),
        "{text}"
    );

    // The kubeconfig's user is ci (the token file): authenticated, not authorized.
    let out = run(&kubectl, &kubeconfig, &["get", "pods"], None).await;
    assert_eq!(
        stderr(&out).trim(),
        r#"Error from server (Forbidden): pods is forbidden: User "ci" cannot list resource "pods" in API group "" in the namespace "default""#
    );
    let out = run(
        &kubectl,
        &kubeconfig,
        &[
            "auth",
            "can-i",
            "create",
            "selfsubjectaccessreviews.authorization.k8s.io",
        ],
        None,
    )
    .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "yes");
    // The same server and CA with the admin's token: system:masters may do anything.
    let admin = dir.path().join("admin");
    let tokened = text.replace(
        &format!("tokenFile: \"{}\"", token_file.display()),
        "token: admin-token",
    );
    std::fs::write(&admin, tokened).expect("admin kubeconfig");
    let out = run(&kubectl, &admin, &["get", "nodes", "-o", "name"], None).await;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        3,
        "{}",
        stderr(&out)
    );
    std::fs::write(&token_file, "ci-2").expect("rotate");
    let out = run(&kubectl, &kubeconfig, &["get", "pods"], None).await;
    assert!(
        stderr(&out).contains("pods is forbidden"),
        "a rotated file still authenticates: {}",
        stderr(&out)
    );
    child.kill().await.expect("stop kube-sim");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_as_impersonates_only_when_rbac_allows_and_whoami_says_who() {
    let Some(s) = Secured::start().await else {
        return;
    };
    let admin = s.user("admin-token");
    let ci = s.user("ci-token");
    s.ok(&admin, &["apply", "-f", "-"], Some(GRANTS)).await;
    let whoami = s.ok(&ci, &["auth", "whoami"], None).await;
    assert_eq!(
        whoami.lines().map(str::trim_end).collect::<Vec<_>>(),
        [
            "ATTRIBUTE   VALUE",
            "Username    ci",
            "Groups      [devs system:authenticated]"
        ]
    );
    // system:masters may impersonate anyone; the request is then authorized as them.
    let as_ci = |verb: &'static str| ["auth", "can-i", verb, "pods", "--as=ci"];
    assert_eq!(s.ok(&admin, &as_ci("list"), None).await.trim(), "yes");
    let out = s.run(&admin, &as_ci("delete"), None).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");
    let sa = s
        .ok(
            &admin,
            &[
                "auth",
                "whoami",
                "--as=system:serviceaccount:shop:deployer",
                "-o",
                "json",
            ],
            None,
        )
        .await;
    let sa: serde_json::Value = serde_json::from_str(&sa).expect("json");
    assert_eq!(
        sa["status"]["userInfo"]["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:shop",
            "system:authenticated"
        ])
    );

    // ci may not impersonate until a role lets it, and only whom the role names.
    let out = s.run(&ci, &["get", "pods", "--as=admin"], None).await;
    assert_eq!(
        stderr(&out).trim(),
        r#"Error from server (Forbidden): users "admin" is forbidden: User "ci" cannot impersonate resource "users" in API group "" at the cluster scope"#
    );
    let out = s
        .run(
            &ci,
            &[
                "get",
                "deployments",
                "--as=system:serviceaccount:shop:deployer",
            ],
            None,
        )
        .await;
    assert_eq!(
        stderr(&out).trim(),
        r#"Error from server (Forbidden): serviceaccounts "deployer" is forbidden: User "ci" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "shop""#
    );
    s.ok(
        &admin,
        &[
            "create",
            "role",
            "impersonate-deployer",
            "--verb=impersonate",
            "--resource=serviceaccounts",
            "--resource-name=deployer",
        ],
        None,
    )
    .await;
    s.ok(
        &admin,
        &[
            "create",
            "rolebinding",
            "ci-impersonates",
            "--role=impersonate-deployer",
            "--user=ci",
        ],
        None,
    )
    .await;
    let sa_can = [
        "auth",
        "can-i",
        "create",
        "deployments.apps",
        "--as=system:serviceaccount:shop:deployer",
    ];
    assert_eq!(s.ok(&ci, &sa_can, None).await.trim(), "yes");
    let out = s
        .run(
            &ci,
            &["get", "pods", "--as=system:serviceaccount:shop:other"],
            None,
        )
        .await;
    assert!(
        stderr(&out).contains(r#"serviceaccounts "other" is forbidden"#),
        "{}",
        stderr(&out)
    );
}
