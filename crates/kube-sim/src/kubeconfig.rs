//! Kubeconfig files pointing kubectl and deploy-action at a simulated cluster: plain HTTP
//! without credentials, or HTTPS with the cluster's CA and a bearer token (written out, or
//! a `tokenFile` the client reads again when it rotates).

use base64::Engine;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// How the kubeconfig's user authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    None,
    Token(String),
    TokenFile(PathBuf),
}

/// A kubeconfig with one cluster, user and context, all named `kube-sim`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubeconfig {
    server: String,
    ca_pem: Option<String>,
    namespace: String,
    credential: Credential,
}

impl Kubeconfig {
    /// For the server at `url` (`http://127.0.0.1:PORT`), namespace `default`, no
    /// credentials.
    pub fn new(url: &str) -> Self {
        Kubeconfig {
            server: url.to_owned(),
            ca_pem: None,
            namespace: "default".into(),
            credential: Credential::None,
        }
    }

    /// Trust this CA (PEM), written as `certificate-authority-data`.
    pub fn certificate_authority(mut self, ca_pem: &str) -> Self {
        self.ca_pem = Some(ca_pem.to_owned());
        self
    }

    /// The context's namespace.
    pub fn namespace(mut self, namespace: &str) -> Self {
        namespace.clone_into(&mut self.namespace);
        self
    }

    /// Authenticate with this bearer token (`user.token`).
    pub fn token(mut self, token: &str) -> Self {
        self.credential = Credential::Token(token.to_owned());
        self
    }

    /// Authenticate with the token in this file (`user.tokenFile`; clients re-read it).
    pub fn token_file(mut self, path: &Path) -> Self {
        self.credential = Credential::TokenFile(path.to_owned());
        self
    }

    /// The kubeconfig's YAML.
    pub fn render(&self) -> String {
        let mut cluster = format!("    server: {}\n", self.server);
        if let Some(ca) = &self.ca_pem {
            let data = base64::engine::general_purpose::STANDARD.encode(ca);
            cluster.push_str(&format!("    certificate-authority-data: {data}\n"));
        }
        let user = match &self.credential {
            Credential::None => "  user: {}\n".to_owned(),
            Credential::Token(t) => format!("  user:\n    token: {}\n", quote(t)),
            Credential::TokenFile(p) => {
                format!(
                    "  user:\n    tokenFile: {}\n",
                    quote(&p.display().to_string())
                )
            }
        };
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: kube-sim
  cluster:
{cluster}contexts:
- name: kube-sim
  context:
    cluster: kube-sim
    user: kube-sim
    namespace: {namespace}
current-context: kube-sim
users:
- name: kube-sim
{user}",
            namespace = self.namespace
        )
    }

    /// Write the kubeconfig atomically, so a reader never sees half a file.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, self.render())?;
        std::fs::rename(&tmp, path)
    }
}

/// A YAML double-quoted string (a token or path may hold any character).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A kubeconfig for `http://addr` with context `kube-sim` (no auth: loopback only).
pub fn kubeconfig(addr: SocketAddr, namespace: &str) -> String {
    Kubeconfig::new(&format!("http://{addr}"))
        .namespace(namespace)
        .render()
}

/// Write the kubeconfig for `http://addr` atomically, so a reader never sees half a file.
///
/// # Errors
/// When the file cannot be written.
pub fn write_kubeconfig(path: &Path, addr: SocketAddr, namespace: &str) -> std::io::Result<()> {
    Kubeconfig::new(&format!("http://{addr}"))
        .namespace(namespace)
        .write(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_kubeconfig_carries_the_ca_and_the_token() {
        let text = Kubeconfig::new("https://127.0.0.1:6443")
            .certificate_authority("-----BEGIN CERTIFICATE-----\n")
            .namespace("shop")
            .token("s3cr\"et")
            .render();
        let v: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        let cluster = &v["clusters"][0]["cluster"];
        assert_eq!(cluster["server"], "https://127.0.0.1:6443");
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster["certificate-authority-data"].as_str().unwrap())
            .unwrap();
        assert_eq!(ca, b"-----BEGIN CERTIFICATE-----\n");
        assert_eq!(v["users"][0]["user"]["token"], "s3cr\"et");
        assert_eq!(v["contexts"][0]["context"]["namespace"], "shop");

        let file = Kubeconfig::new("https://127.0.0.1:6443")
            .token_file(Path::new("/tmp/t"))
            .render();
        let v: serde_json::Value = serde_yaml_ng::from_str(&file).unwrap();
        assert_eq!(v["users"][0]["user"]["tokenFile"], "/tmp/t");
    }

    #[test]
    fn the_plain_kubeconfig_is_unchanged() {
        let text = kubeconfig("127.0.0.1:8080".parse().unwrap(), "default");
        assert!(
            text.contains("    server: http://127.0.0.1:8080\n"),
            "{text}"
        );
        assert!(text.ends_with("- name: kube-sim\n  user: {}\n"), "{text}");
    }
}
