//! Connecting to the cluster the user named (kubeconfig, context) and learning its default
//! namespace. Errors are worded as kubectl words them, in one sentence each: which file,
//! which context, which server, and the root cause, never a chain of wrappers that repeat
//! themselves, and never a credential from the kubeconfig.

use super::credentials::{Credentials, Fetched, TokenSource};
use crate::proxy::{Proxy, ProxyEnv, ProxyUrlError, Routes};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// A kubeconfig that is not YAML: where, and what is wrong, never the text around it
    /// (it may be a credential).
    #[error("cannot read kubeconfig {path}:{line}:{column}: {what}")]
    KubeconfigSyntax {
        path: String,
        line: u64,
        column: u64,
        what: String,
    },
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
    /// No token from the token file or exec plugin: `getting credentials: exec: executable
    /// aws-iam-authenticator not found`, with what to do.
    #[error("cannot use {place}: {cause}{}", hint_line(.hint.as_deref()))]
    Credentials {
        place: String,
        cause: String,
        hint: Option<String>,
    },
    #[error(transparent)]
    Proxy(#[from] ProxyUrlError),
    #[error("cannot create a client for {server}: {cause}")]
    Client { server: String, cause: String },
}

fn hint_line(hint: Option<&str>) -> String {
    hint.map(|h| format!("\n  hint: {h}")).unwrap_or_default()
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

/// A kubeconfig parse error as `path:line:column: what`, without the snippet of the file
/// kube's parser adds (the lines around the error may hold a token).
fn syntax_error(path: &str, error: &serde_saphyr::Error) -> ConnectError {
    let bare = error.without_snippet();
    let text = bare.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    // "line 3 column 11: unclosed bracket '['": the position is said once, in front.
    let what = match text.split_once(": ") {
        Some((at, rest)) if at.starts_with("line ") => rest,
        _ => text,
    };
    let what = what.lines().next().unwrap_or_default();
    // "... at line 3, column 11": said in front already.
    let what = match what.rfind(" at line ") {
        Some(at) if what[at..].contains(", column ") => &what[..at],
        _ => what,
    };
    let what = scrub_quoted(what);
    let (line, column) = error
        .location()
        .map_or((0, 0), |at| (at.line(), at.column()));
    ConnectError::KubeconfigSyntax {
        path: path.to_owned(),
        line,
        column,
        what,
    }
}

/// A parser message with the values it quotes elided: `invalid type: string "…", expected a
/// map`. A quoted single character (`unclosed bracket '['`, ``expected `,` ``) is syntax,
/// kept.
pub(crate) fn scrub_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(['"', '`', '\'']) {
        let quote = rest[at..].chars().next().expect("found");
        out.push_str(&rest[..=at]);
        let after = &rest[at + 1..];
        match after.find(quote) {
            Some(end) if after[..end].chars().count() <= 1 => {
                out.push_str(&after[..=end]);
                rest = &after[end + 1..];
            }
            Some(end) => {
                out.push('…');
                out.push(quote);
                rest = &after[end + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Read one kubeconfig file, its errors naming it.
fn read_one(path: &Path) -> Result<Kubeconfig, ConnectError> {
    let shown = path.display().to_string();
    Kubeconfig::read_from(path).map_err(|e| match &e {
        KubeconfigError::Parse(parse) => syntax_error(&shown, parse),
        _ => ConnectError::ReadKubeconfig {
            path: shown.clone(),
            cause: root_cause(&e),
        },
    })
}

/// The files `$KUBECONFIG` names, merged as kubectl merges them (the first to set a value
/// wins).
fn read_env_list(paths: &str) -> Result<Kubeconfig, ConnectError> {
    let mut merged = Kubeconfig::default();
    for path in std::env::split_paths(paths).filter(|p| !p.as_os_str().is_empty()) {
        let next = read_one(&path)?;
        merged = merged
            .merge(next)
            .map_err(|e| ConnectError::ReadKubeconfig {
                path: path.display().to_string(),
                cause: root_cause(&e),
            })?;
    }
    Ok(merged)
}

/// The `proxy-url` of the cluster `context` uses, removed from every cluster (kube would
/// otherwise act on it: the proxy is chosen in [`crate::proxy`]).
fn take_proxy_url(kc: &mut Kubeconfig, context: &str) -> Option<(String, String)> {
    let cluster_name = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone());
    let mut chosen = None;
    for named in &mut kc.clusters {
        if let Some(cluster) = named.cluster.as_mut()
            && let Some(url) = cluster.proxy_url.take()
            && Some(&named.name) == cluster_name.as_ref()
            && !url.trim().is_empty()
        {
            chosen = Some((named.name.clone(), url));
        }
    }
    chosen
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
    let proxies = ProxyEnv::from_env()?;
    let (mut config, context_name, place, routes) =
        match kubeconfig_source(kubeconfig, env.as_deref(), home.as_deref()) {
            Some((label, path)) => {
                let mut kc = match &path {
                    Some(p) => read_one(p)?,
                    None => read_env_list(&label)?,
                };
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
                let routes = match take_proxy_url(&mut kc, &chosen) {
                    Some((cluster, url)) => Routes::Always(Proxy::parse(
                        &url,
                        &format!("the proxy-url of cluster {cluster:?} in {label}"),
                    )?),
                    None => Routes::Env(Box::new(proxies)),
                };
                let options = KubeConfigOptions {
                    context: Some(chosen.clone()),
                    ..KubeConfigOptions::default()
                };
                let config = kube::Config::from_custom_kubeconfig(kc, &options)
                    .await
                    .map_err(|e| ConnectError::Kubeconfig {
                        context: chosen.clone(),
                        path: label.clone(),
                        cause: root_cause(&e),
                    })?;
                let place = format!("context {chosen:?} of {label}");
                (config, Some(chosen), place, routes)
            }
            None if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
                let config = kube::Config::incluster()
                    .map_err(|e| ConnectError::InCluster(root_cause(&e)))?;
                let place = "the in-cluster service account".to_owned();
                (config, None, place, Routes::Env(Box::new(proxies)))
            }
            None => return Err(ConnectError::NoKubeconfig),
        };
    let default_namespace =
        namespace.map_or_else(|| config.default_namespace.clone(), str::to_owned);
    let server = config.cluster_url.to_string();
    let server = server.trim_end_matches('/').to_owned();
    config.proxy_url = None;
    let credentials = credentials(&mut config, &place).await?;
    let client = super::transport::client(&config, routes, credentials).map_err(|e| {
        ConnectError::Client {
            server: server.clone(),
            cause: root_cause(&e),
        }
    })?;
    Ok(Connection {
        client,
        default_namespace,
        context: context_name,
        server,
    })
}

/// The token source that changes during a run (token file, exec plugin), asked once now so
/// that a missing plugin stops the run before anything is applied. An exec plugin that
/// answers with a client certificate has it put into the TLS configuration instead.
async fn credentials(
    config: &mut kube::Config,
    place: &str,
) -> Result<Option<Arc<Credentials>>, ConnectError> {
    let Some(source) = TokenSource::take_from(&mut config.auth_info) else {
        return Ok(None);
    };
    let credentials = Credentials::new(source);
    match credentials.prime().await {
        Ok(Fetched::Token { .. }) => Ok(Some(Arc::new(credentials))),
        Ok(Fetched::Certificate { certificate, key }) => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD;
            config.auth_info.client_certificate_data = Some(b64.encode(certificate));
            config.auth_info.client_key_data = Some(b64.encode(key).into());
            Ok(None)
        }
        Err(e) => Err(ConnectError::Credentials {
            place: place.to_owned(),
            hint: e.hint(),
            cause: e.to_string(),
        }),
    }
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
            // A syntax error on the line after a credential: kube's parser would print both.
            error(
                Some("apiVersion: v1\nkind: Config\nusers: [\n  {name: u, user: {token: not-a-real-token-0123456789}\n"),
                None,
            )
            .await,
            // A credential where the schema wants a list: its value is not quoted back.
            error(
                Some("apiVersion: v1\nkind: Config\nusers: not-a-real-token-0123456789\n"),
                None,
            )
            .await,
            error(Some(&KUBECONFIG.replace(
                "user: {token: not-a-real-token-0123456789}",
                "user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws-iam-authenticator-not-installed, installHint: 'brew install aws-iam-authenticator'}}",
            )), None)
            .await,
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
