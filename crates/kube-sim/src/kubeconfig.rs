//! Kubeconfig files pointing kubectl and deploy-action at a simulated cluster.

use std::net::SocketAddr;

/// A kubeconfig for `http://addr` with context `kube-sim` (no auth: loopback only).
pub fn kubeconfig(addr: SocketAddr, namespace: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kube-sim
  cluster:
    server: http://{addr}
contexts:
- name: kube-sim
  context:
    cluster: kube-sim
    user: kube-sim
    namespace: {namespace}
current-context: kube-sim
users:
- name: kube-sim
  user: {{}}
"
    )
}

/// Write the kubeconfig atomically, so a reader never sees half a file.
///
/// # Errors
/// When the file cannot be written.
pub fn write_kubeconfig(
    path: &std::path::Path,
    addr: SocketAddr,
    namespace: &str,
) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, kubeconfig(addr, namespace))?;
    std::fs::rename(&tmp, path)
}
