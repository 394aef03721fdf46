//! Test harness: a real CNCF distribution registry (Debian's `docker-registry`) on a free
//! loopback port, with images pushed through the registry HTTP API as a client would.

use serde_json::json;
use sha2::{Digest as _, Sha256};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

use super::transport::http_client;

const BINARY: &str = "docker-registry";
const STARTUP: Duration = Duration::from_secs(15);

/// A running registry; killed when dropped.
pub(crate) struct Distribution {
    child: Child,
    port: u16,
    http: reqwest::Client,
    root: TempDir,
}

pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut digest = String::from("sha256:");
    for b in &Sha256::digest(bytes) {
        write!(digest, "{b:02x}").expect("writing to a String cannot fail");
    }
    digest
}

pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

impl Distribution {
    /// `None` when `docker-registry` is not installed.
    pub(crate) async fn start() -> Option<Self> {
        let installed = Command::new(BINARY)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            return None;
        }
        let root = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            root.path().join("data").display()
        );
        let config_path = root.path().join("config.yml");
        std::fs::write(&config_path, config).expect("write registry config");
        let log =
            std::fs::File::create(root.path().join("registry.log")).expect("create registry log");
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log handle"))
            .stderr(log)
            .spawn()
            .expect("spawn docker-registry");
        let http = http_client(Duration::from_secs(2), &crate::proxy::ProxyEnv::none())
            .expect("http client");
        let mut registry = Distribution {
            child,
            port,
            http,
            root,
        };
        registry.wait_ready().await;
        Some(registry)
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    async fn wait_ready(&mut self) {
        let url = format!("http://{}/v2/", self.host());
        let started = tokio::time::Instant::now();
        while started.elapsed() < STARTUP {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("docker-registry exited with {status}:\n{}", self.log());
            }
            if let Ok(response) = self.http.get(&url).send().await
                && response.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "docker-registry did not answer {url} within {STARTUP:?}:\n{}",
            self.log()
        );
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.root.path().join("registry.log")).unwrap_or_default()
    }

    /// Pushes a one-layer OCI image as `repository:tag` and returns the manifest digest the
    /// registry reported, after checking it is the sha256 of the bytes we sent.
    pub(crate) async fn push_image(&self, repository: &str, tag: &str) -> String {
        // An empty tar archive: two zero blocks. Uncompressed, so its diff_id is its digest.
        let layer = vec![0u8; 1024];
        let layer_digest = sha256_digest(&layer);
        let config = serde_json::to_vec(&json!({
            "created": "2025-05-01T10:00:00Z",
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": ["/app"],
                       "Labels": {"org.opencontainers.image.title": repository}},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
            "history": [{"created": "2025-05-01T10:00:00Z", "created_by": "COPY app /app"}]
        }))
        .unwrap();
        let config_digest = self.push_blob(repository, &config).await;
        self.push_blob(repository, &layer).await;
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest, "size": layer.len()}]
        }))
        .unwrap();
        let url = format!("http://{}/v2/{repository}/manifests/{tag}", self.host());
        let response = self
            .http
            .put(&url)
            .header("content-type", "application/vnd.oci.image.manifest.v1+json")
            .body(manifest.clone())
            .send()
            .await
            .expect("PUT manifest");
        assert_eq!(
            response.status().as_u16(),
            201,
            "PUT {url}: {:?}",
            response.text().await
        );
        let digest = response.headers()["docker-content-digest"]
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(
            digest,
            sha256_digest(&manifest),
            "registry digest of the manifest we pushed"
        );
        digest
    }

    /// Monolithic upload: POST opens a session, PUT with `?digest=` closes it with the bytes.
    async fn push_blob(&self, repository: &str, bytes: &[u8]) -> String {
        let digest = sha256_digest(bytes);
        let start = format!("http://{}/v2/{repository}/blobs/uploads/", self.host());
        let response = self
            .http
            .post(&start)
            .send()
            .await
            .expect("POST blob upload");
        assert_eq!(response.status().as_u16(), 202, "POST {start}");
        let location = response.headers()["location"].to_str().unwrap().to_string();
        let location = if location.starts_with('/') {
            format!("http://{}{location}", self.host())
        } else {
            location
        };
        let separator = if location.contains('?') { '&' } else { '?' };
        let put = format!("{location}{separator}digest={digest}");
        let response = self
            .http
            .put(&put)
            .header("content-type", "application/octet-stream")
            .body(bytes.to_vec())
            .send()
            .await
            .expect("PUT blob");
        assert_eq!(
            response.status().as_u16(),
            201,
            "PUT {put}: {:?}",
            response.text().await
        );
        digest
    }
}

impl Drop for Distribution {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
