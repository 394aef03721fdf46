//! The runner's own look at the registry while it watches: each image a node is failing
//! to pull is looked up, so a node's "not found" is weighed against the registry's answer
//! (the preflight, before anything is applied, is in `preflight.rs`).

use crate::pointer::Pointer;
use crate::registry::{Credentials, Lookup, Registry};
use crate::rules::{ObjectKey, RegistryView, Snapshot, Touched};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::mpsc;

/// What the runner's lookup means for the rules.
pub fn view_of(lookup: &Lookup) -> RegistryView {
    match lookup {
        Lookup::Exists { .. } => RegistryView::Exists,
        Lookup::Missing { .. } => RegistryView::Missing,
        Lookup::Denied { .. } => RegistryView::Denied,
        Lookup::Unreachable { detail } | Lookup::Invalid { detail } => {
            RegistryView::Unknown(brief(detail))
        }
    }
}

/// An HTTP client's error chain (`HEAD url: failed to connect: error sending request ...:
/// dns error: ...: Name or service not known`) cut to its first and last links, which say
/// what was asked and what went wrong.
fn brief(detail: &str) -> String {
    let links: Vec<&str> = detail.split(": ").collect();
    match links.as_slice() {
        [first, .., last] if links.len() > 2 => format!("{first}: {last}"),
        _ => detail.to_owned(),
    }
}

/// Lookups while watching: one per image a node is failing to pull, with the pod's
/// imagePullSecrets when they can be read.
pub struct Lookups {
    registry: Arc<Registry>,
    client: kube::Client,
    base: Option<Credentials>,
    requested: BTreeSet<String>,
    secrets: HashMap<(String, Vec<String>), Option<Credentials>>,
}

impl Lookups {
    pub fn new(registry: Arc<Registry>, client: kube::Client, base: Option<Credentials>) -> Self {
        Lookups {
            registry,
            client,
            base,
            requested: BTreeSet::new(),
            secrets: HashMap::new(),
        }
    }

    /// Whether a lookup for `image` was started and has not answered yet.
    pub fn in_flight(&self, image: &str, snapshot: &Snapshot) -> bool {
        self.requested.contains(image) && snapshot.registry_view(image).is_none()
    }

    /// Start lookups for images in pull trouble that have none yet, among the pods of
    /// `touched` (what changed since the last call: a pod's trouble is news only then).
    pub async fn request(
        &mut self,
        snapshot: &Snapshot,
        touched: &Touched,
        tx: &mpsc::Sender<(String, RegistryView)>,
    ) {
        let pods = touched
            .keys()
            .filter(|k| k.group().is_empty() && k.kind() == "Pod")
            .filter_map(|k| snapshot.get_raw(k));
        for (image, namespace, secrets) in images_in_trouble(pods) {
            self.start(image, &namespace, secrets, tx).await;
        }
    }

    /// Start a lookup for `image` as pulled by `pod`, unless one was started already.
    pub async fn request_image(
        &mut self,
        image: &str,
        namespace: &str,
        snapshot: &Snapshot,
        pod: &str,
        tx: &mpsc::Sender<(String, RegistryView)>,
    ) {
        let secrets = snapshot
            .get_raw(&ObjectKey::new("v1", "Pod", Some(namespace), pod))
            .map(|p| pull_secrets(&p))
            .unwrap_or_default();
        self.start(image.to_owned(), namespace, secrets, tx).await;
    }

    async fn start(
        &mut self,
        image: String,
        namespace: &str,
        secrets: Vec<String>,
        tx: &mpsc::Sender<(String, RegistryView)>,
    ) {
        if !self.requested.insert(image.clone()) {
            return;
        }
        let creds = self.credentials(namespace, secrets).await;
        let registry = self.registry.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let lookup = registry.lookup(&image, creds.as_ref()).await;
            let _ = tx.send((image, view_of(&lookup))).await;
        });
    }

    async fn credentials(&mut self, namespace: &str, names: Vec<String>) -> Option<Credentials> {
        let key = (namespace.to_owned(), names);
        if let Some(c) = self.secrets.get(&key) {
            return c.clone();
        }
        let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(self.client.clone(), namespace);
        let mut creds = self.base.clone();
        for name in &key.1 {
            // Secrets we may not read stay unknown: the lookup then goes anonymous.
            let Ok(secret) = api.get(name).await else {
                continue;
            };
            let Ok(value) = serde_json::to_value(secret) else {
                continue;
            };
            if let Ok(c) = Credentials::from_secret(&value) {
                match &mut creds {
                    Some(existing) => existing.merge(c),
                    None => creds = Some(c),
                }
            }
        }
        self.secrets.insert(key, creds.clone());
        creds
    }
}

fn pull_secrets(pod: &Value) -> Vec<String> {
    pod.at("/spec/imagePullSecrets")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// (image, namespace, imagePullSecrets) of every container waiting on a failing pull.
fn images_in_trouble(pods: impl Iterator<Item = Value>) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for pod in pods {
        let pod = &pod;
        let ns = pod
            .at("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let secrets = pull_secrets(pod);
        for field in ["initContainerStatuses", "containerStatuses"] {
            for status in pod
                .at(&format!("/status/{field}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let reason = status.at("/state/waiting/reason").and_then(Value::as_str);
                if !matches!(reason, Some("ErrImagePull" | "ImagePullBackOff")) {
                    continue;
                }
                let name = status["name"].as_str().unwrap_or_default();
                let spec_image = ["initContainers", "containers"]
                    .iter()
                    .flat_map(|f| {
                        pod.at(&format!("/spec/{f}"))
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                    })
                    .find(|c| c["name"] == name)
                    .and_then(|c| c["image"].as_str().map(str::to_owned));
                if let Some(image) = spec_image {
                    out.push((image, ns.to_owned(), secrets.clone()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_error_chains_are_cut_to_what_was_asked_and_what_went_wrong() {
        let chain = "HEAD https://registry.local/v2/shop/worker/manifests/7.1.0: failed to connect: error sending request for url (https://registry.local/v2/shop/worker/manifests/7.1.0): client error (Connect): dns error: Name or service not known";
        assert_eq!(
            view_of(&Lookup::Unreachable { detail: chain.into() }),
            RegistryView::Unknown("HEAD https://registry.local/v2/shop/worker/manifests/7.1.0: Name or service not known".into())
        );
        assert_eq!(brief("HTTP 503: busy"), "HTTP 503: busy");
    }
}
