//! The runner's own look at the registry, in two places: the preflight (every image of the
//! manifests, before anything is applied) and during the watch (each image a node is
//! failing to pull, so a node's "not found" is weighed against the registry's answer).

use super::outcomes;
use crate::manifest::Manifest;
use crate::registry::{Credentials, Lookup, Registry};
use crate::rules::{ObjectKey, RegistryView, Snapshot, Touched};
use crate::vocab::outcome::{ContainerRef, Outcome, ResourceId};
use crate::vocab::verdict::{Reason, Verdict};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::mpsc;

/// `--image-preflight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Preflight {
    /// Look up every image first; a definite "not found" stops the deploy, other problems warn.
    Auto,
    /// Never contact registries from the runner (no preflight, no lookups while watching).
    Off,
    /// Like auto, but an image that cannot be confirmed (denied, unreachable) stops the deploy.
    Require,
}

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

/// Registry credentials found in the manifests themselves (dockerconfigjson Secrets).
pub fn credentials_in(manifests: &[Manifest]) -> Option<Credentials> {
    let mut found: Option<Credentials> = None;
    for m in manifests
        .iter()
        .filter(|m| m.kind == "Secret" && m.group().is_empty())
    {
        if let Ok(c) = Credentials::from_secret(&m.object) {
            match &mut found {
                Some(f) => f.merge(c),
                None => found = Some(c),
            }
        }
    }
    found
}

/// The preflight's findings.
#[derive(Debug, Default)]
pub struct PreflightReport {
    /// Resources that cannot deploy: an image the registry says does not exist (or, with
    /// `require`, could not be confirmed).
    pub failures: Vec<Outcome>,
    /// Images that could not be checked, for a warning.
    pub warnings: Vec<String>,
    /// How many distinct images were looked up.
    pub checked: usize,
    /// With `require`: images whose registry could not be reached ("image: why").
    pub unconfirmed: Vec<String>,
    /// Images the registry would not confirm (denied, unreachable), with why.
    pub doubtful: BTreeMap<String, String>,
    /// Distinct images the registry says do not exist, or are not valid references.
    pub missing: usize,
}

/// Look up every distinct image of the manifests in parallel.
pub async fn preflight(
    manifests: &[Manifest],
    registry: &Registry,
    creds: Option<&Credentials>,
    mode: Preflight,
) -> PreflightReport {
    let images: Vec<String> = manifests
        .iter()
        .flat_map(|m| m.images.iter().map(|i| i.image.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if mode == Preflight::Off || images.is_empty() {
        return PreflightReport::default();
    }
    let answers = registry.lookup_all(&images, creds).await;
    judge_preflight(manifests, &answers, mode)
}

/// Pure: what the lookups mean for each manifest.
pub fn judge_preflight(
    manifests: &[Manifest],
    answers: &BTreeMap<String, Lookup>,
    mode: Preflight,
) -> PreflightReport {
    let mut report = PreflightReport {
        checked: answers.len(),
        unconfirmed: if mode == Preflight::Require {
            unconfirmed(answers)
        } else {
            Vec::new()
        },
        ..PreflightReport::default()
    };
    for (image, lookup) in answers {
        match lookup {
            Lookup::Exists { .. } => {}
            Lookup::Missing { .. } | Lookup::Invalid { .. } => report.missing += 1,
            Lookup::Denied { detail } | Lookup::Unreachable { detail } => {
                report.doubtful.insert(image.clone(), detail.clone());
                if mode == Preflight::Auto {
                    report.warnings.push(format!(
                        "could not confirm image {image}: {detail} (the nodes may still pull it)"
                    ));
                }
            }
        }
    }
    for m in manifests {
        for line in &m.images {
            let Some(lookup) = answers.get(&line.image) else {
                continue;
            };
            let (reason, message) = match (lookup, mode) {
                (Lookup::Missing { detail }, _) => (
                    Reason::ImageNotFound,
                    format!(
                        "image \"{}\" not found in its registry ({detail}); nothing was applied",
                        line.image
                    ),
                ),
                (Lookup::Invalid { detail }, _) => (
                    Reason::InvalidImageName,
                    format!(
                        "image \"{}\" is not a valid reference: {detail}; nothing was applied",
                        line.image
                    ),
                ),
                (Lookup::Denied { detail }, Preflight::Require) => (
                    Reason::ImageUnauthorized,
                    format!(
                        "the registry denied access to image \"{}\" ({detail}); --image-preflight require: nothing was applied",
                        line.image
                    ),
                ),
                _ => continue,
            };
            let id = ResourceId {
                api_version: m.api_version.clone(),
                kind: m.kind.clone(),
                namespace: m.namespace.clone(),
                name: m.name.clone(),
            };
            let container = ContainerRef {
                pod: String::new(),
                container: line.container.clone(),
                image: Some(line.image.clone()),
            };
            report.failures.push(outcomes::outcome(
                id,
                m,
                Verdict::Failed,
                Some(reason),
                message,
                Some(container),
                0.0,
                Vec::new(),
            ));
        }
    }
    report
}

/// Images the manifests' preflight could not confirm in `require` mode because the
/// registry was unreachable: these stop the run as a configuration problem.
pub fn unconfirmed(answers: &BTreeMap<String, Lookup>) -> Vec<String> {
    answers
        .iter()
        .filter_map(|(image, l)| match l {
            Lookup::Unreachable { detail } => Some(format!("{image}: {detail}")),
            _ => None,
        })
        .collect()
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
    pod.pointer("/spec/imagePullSecrets")
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
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let secrets = pull_secrets(pod);
        for field in ["initContainerStatuses", "containerStatuses"] {
            for status in pod
                .pointer(&format!("/status/{field}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let reason = status
                    .pointer("/state/waiting/reason")
                    .and_then(Value::as_str);
                if !matches!(reason, Some("ErrImagePull" | "ImagePullBackOff")) {
                    continue;
                }
                let name = status["name"].as_str().unwrap_or_default();
                let spec_image = ["initContainers", "containers"]
                    .iter()
                    .flat_map(|f| {
                        pod.pointer(&format!("/spec/{f}"))
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
    use crate::manifest::load_str;

    const TWO: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.local/shop/web:missing
        - name: sidecar
          image: registry.local/shop/proxy:1
";

    fn answers(web: Lookup, proxy: Lookup) -> BTreeMap<String, Lookup> {
        BTreeMap::from([
            ("registry.local/shop/web:missing".to_owned(), web),
            ("registry.local/shop/proxy:1".to_owned(), proxy),
        ])
    }

    #[test]
    fn long_error_chains_are_cut_to_what_was_asked_and_what_went_wrong() {
        let chain = "HEAD https://registry.local/v2/shop/worker/manifests/7.1.0: failed to connect: error sending request for url (https://registry.local/v2/shop/worker/manifests/7.1.0): client error (Connect): dns error: Name or service not known";
        assert_eq!(
            view_of(&Lookup::Unreachable { detail: chain.into() }),
            RegistryView::Unknown("HEAD https://registry.local/v2/shop/worker/manifests/7.1.0: Name or service not known".into())
        );
        assert_eq!(brief("HTTP 503: busy"), "HTTP 503: busy");
    }

    #[test]
    fn a_missing_image_fails_its_resource_at_the_image_line() {
        let m = load_str("web.yaml", TWO).unwrap();
        let r = judge_preflight(
            &m,
            &answers(
                Lookup::Missing {
                    detail: "MANIFEST_UNKNOWN".into(),
                },
                Lookup::Exists { digest: None },
            ),
            Preflight::Auto,
        );
        assert_eq!(r.failures.len(), 1);
        let f = &r.failures[0];
        assert_eq!(f.reason, Some(Reason::ImageNotFound));
        assert_eq!(f.annotation_source.as_ref().map(|s| s.line), Some(11));
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn auth_and_network_trouble_only_warn_in_auto_and_fail_in_require() {
        let m = load_str("web.yaml", TWO).unwrap();
        let a = answers(
            Lookup::Denied {
                detail: "401".into(),
            },
            Lookup::Unreachable {
                detail: "no such host".into(),
            },
        );
        let auto = judge_preflight(&m, &a, Preflight::Auto);
        assert!(auto.failures.is_empty());
        assert_eq!(auto.warnings.len(), 2);
        let require = judge_preflight(&m, &a, Preflight::Require);
        assert_eq!(
            require
                .failures
                .iter()
                .map(|f| f.reason)
                .collect::<Vec<_>>(),
            [Some(Reason::ImageUnauthorized)]
        );
        assert_eq!(
            require.unconfirmed,
            ["registry.local/shop/proxy:1: no such host"]
        );
        assert!(
            auto.unconfirmed.is_empty(),
            "auto only warns about unreachable registries"
        );
    }
}
