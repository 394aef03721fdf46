//! Connecting to the cluster the user named (kubeconfig, context) and learning its default
//! namespace. Errors are worded as kubectl words them, in one sentence each: which file,
//! which context, which server, and the root cause, never a chain of wrappers that repeat
//! themselves, and never a credential from the kubeconfig.

use kube::config::{KubeConfigOptions, Kubeconfig};
use std::path::{Path, PathBuf};

/// A client and the namespace unqualified resources go to.
#[derive(Clone)]
pub struct Connection {
    pub client: kube::Client,
    pub default_namespace: String,
    /// The kubeconfig context in use, when known (names the check run).
    pub context: Option<String>,
    /// The API server's URL, for messages.
    pub server: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConnectError {
    #[error("cannot read kubeconfig {path}: {cause}")]
    ReadKubeconfig { path: String, cause: String },
    #[error("context {context:?} does not exist in {path} (contexts: {})", list(.contexts))]
    NoSuchContext {
        context: String,
        path: String,
        contexts: Vec<String>,
    },
    #[error("{path} sets no current-context: pass --context (contexts: {})", list(.contexts))]
    NoCurrentContext { path: String, contexts: Vec<String> },
    #[error("cannot use context {context:?} of {path}: {cause}")]
    Kubeconfig {
        context: String,
        path: String,
        cause: String,
    },
    #[error("no kubeconfig: set --kubeconfig or KUBECONFIG, or run inside a cluster")]
    NoKubeconfig,
    #[error("cannot use the in-cluster service account: {0}")]
    InCluster(String),
    #[error("cannot create a client for {server}: {cause}")]
    Client { server: String, cause: String },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The innermost cause of an error, as a person would say it: `No such file or directory`,
/// `connection refused`, without the `(os error N)` a wrapper repeats.
pub fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = error;
    while let Some(next) = inner.source() {
        inner = next;
    }
    let text = inner.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_owned(),
        _ => text,
    };
    // io errors start with a capital ("Connection refused"); mid-sentence they read lower.
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => first
            .to_lowercase()
            .chain(text[first.len_utf8()..].chars())
            .collect(),
        _ => text,
    }
}

/// Where the kubeconfig comes from, as kubectl looks: the flag, `$KUBECONFIG`, then
/// `~/.kube/config`. `None`: none of them, so only the in-cluster account is left.
fn kubeconfig_source(
    flag: Option<&Path>,
    env: Option<&str>,
    home: Option<&Path>,
) -> Option<(String, Option<PathBuf>)> {
    if let Some(path) = flag {
        return Some((path.display().to_string(), Some(path.to_owned())));
    }
    if let Some(paths) = env.filter(|v| !v.trim().is_empty()) {
        return Some((paths.to_owned(), None));
    }
    let default = home?.join(".kube").join("config");
    default
        .exists()
        .then(|| (default.display().to_string(), Some(default)))
}

fn context_names(kc: &Kubeconfig) -> Vec<String> {
    kc.contexts.iter().map(|c| c.name.clone()).collect()
}

/// Build a client from `--kubeconfig`/`--context`, else `$KUBECONFIG`, `~/.kube/config` or
/// the in-cluster service account.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    namespace: Option<&str>,
) -> Result<Connection, ConnectError> {
    let env = std::env::var("KUBECONFIG").ok();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let (config, context_name) =
        match kubeconfig_source(kubeconfig, env.as_deref(), home.as_deref()) {
            Some((label, path)) => {
                let kc = match &path {
                    Some(p) => Kubeconfig::read_from(p),
                    None => Kubeconfig::read(),
                }
                .map_err(|e| ConnectError::ReadKubeconfig {
                    path: label.clone(),
                    cause: root_cause(&e),
                })?;
                let contexts = context_names(&kc);
                let Some(chosen) = context.map(str::to_owned).or(kc.current_context.clone()) else {
                    return Err(ConnectError::NoCurrentContext {
                        path: label,
                        contexts,
                    });
                };
                if !contexts.contains(&chosen) {
                    return Err(ConnectError::NoSuchContext {
                        context: chosen,
                        path: label,
                        contexts,
                    });
                }
                let options = KubeConfigOptions {
                    context: Some(chosen.clone()),
                    ..KubeConfigOptions::default()
                };
                let config = kube::Config::from_custom_kubeconfig(kc, &options)
                    .await
                    .map_err(|e| ConnectError::Kubeconfig {
                        context: chosen.clone(),
                        path: label,
                        cause: root_cause(&e),
                    })?;
                (config, Some(chosen))
            }
            None if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
                let config = kube::Config::incluster()
                    .map_err(|e| ConnectError::InCluster(root_cause(&e)))?;
                (config, None)
            }
            None => return Err(ConnectError::NoKubeconfig),
        };
    let default_namespace =
        namespace.map_or_else(|| config.default_namespace.clone(), str::to_owned);
    let server = config.cluster_url.to_string();
    let server = server.trim_end_matches('/').to_owned();
    let client = kube::Client::try_from(config).map_err(|e| ConnectError::Client {
        server: server.clone(),
        cause: root_cause(&e),
    })?;
    Ok(Connection {
        client,
        default_namespace,
        context: context_name,
        server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = "apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: 'https://127.0.0.1:6443'}
contexts:
- name: staging
  context: {cluster: a, user: u}
- name: preview
  context: {cluster: a, user: u}
current-context: staging
users:
- name: u
  user: {token: not-a-real-token-0123456789}
";

    async fn error(text: Option<&str>, context: Option<&str>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        if let Some(text) = text {
            std::fs::write(&path, text).unwrap();
        }
        let err = connect(Some(&path), context, None)
            .await
            .err()
            .expect("an error");
        err.to_string()
            .replace(&dir.path().display().to_string(), "/tmp/dir")
    }

    #[tokio::test]
    async fn kubeconfig_errors_read_as_one_sentence_without_internals() {
        let cases = [
            error(Some(KUBECONFIG), Some("prod")).await,
            error(None, None).await,
            error(
                Some(&KUBECONFIG.replace("current-context: staging\n", "")),
                None,
            )
            .await,
            error(Some("apiVersion: v1\nkind: Config\nclusters: [oops"), None).await,
        ];
        let text = cases.join("\n");
        insta::assert_snapshot!("connect_errors", text);
        assert!(!text.contains("Some("), "{text}");
        assert!(!text.contains("not-a-real-token"), "{text}");
    }

    #[test]
    fn without_flag_env_or_home_config_only_the_cluster_is_left() {
        assert_eq!(kubeconfig_source(None, None, None), None);
        assert_eq!(
            kubeconfig_source(None, Some(""), Some(Path::new("/nonexistent"))),
            None
        );
        assert_eq!(
            kubeconfig_source(None, Some("/a:/b"), None),
            Some(("/a:/b".to_owned(), None))
        );
        assert_eq!(
            ConnectError::NoKubeconfig.to_string(),
            "no kubeconfig: set --kubeconfig or KUBECONFIG, or run inside a cluster"
        );
    }

    #[tokio::test]
    async fn a_good_context_connects_and_names_its_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, KUBECONFIG).unwrap();
        let conn = connect(Some(&path), Some("preview"), None).await.unwrap();
        assert_eq!(conn.context.as_deref(), Some("preview"));
        assert_eq!(conn.server, "https://127.0.0.1:6443");
        assert_eq!(conn.default_namespace, "default");
    }
}
