//! What the cluster serves (discovery), reduced to the lookups a deploy needs: is this
//! apiVersion/kind known, is it namespaced, and which ApiResource addresses it.

use crate::manifest::Scope;
use kube::discovery::{ApiResource, Discovery, Scope as KubeScope};
use std::collections::HashMap;

/// (group, version, kind).
type Gvk = (String, String, String);

/// The kinds the cluster serves, from one discovery run.
pub struct Served {
    /// Boxed, as a `Served` travels inside the apply stage's answer.
    discovery: Box<Discovery>,
    /// (group, version, kind) to its resource and whether it is namespaced, built once:
    /// `Discovery::resolve_gvk` clones every resource of the group version on each call,
    /// which for thousands of manifests was a fifth of a deploy's CPU.
    kinds: HashMap<Gvk, (ApiResource, bool)>,
}

impl Served {
    /// Run discovery: aggregated discovery (two requests) where the server offers it,
    /// else the legacy documents (one request per API group and version).
    pub async fn discover(client: &kube::Client) -> Result<Served, kube::Error> {
        let discovery = match Discovery::new(client.clone()).run_aggregated().await {
            Ok(d) => d,
            Err(kube::Error::Api(_) | kube::Error::SerdeError(_)) => {
                Discovery::new(client.clone()).run().await?
            }
            Err(e) => return Err(e),
        };
        Ok(Served::new(discovery))
    }

    fn new(discovery: Discovery) -> Served {
        let mut kinds = HashMap::new();
        for group in discovery.groups() {
            for version in group.versions() {
                // The first resource of a kind wins, as in `Discovery::resolve_gvk`.
                for (ar, caps) in group.versioned_resources(version) {
                    let namespaced = caps.scope == KubeScope::Namespaced;
                    kinds
                        .entry((ar.group.clone(), ar.version.clone(), ar.kind.clone()))
                        .or_insert((ar, namespaced));
                }
            }
        }
        Served {
            discovery: Box::new(discovery),
            kinds,
        }
    }

    fn key(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        (group.to_owned(), version.to_owned(), kind.to_owned())
    }

    pub fn resolve(&self, api_version: &str, kind: &str) -> Option<(ApiResource, bool)> {
        self.kinds.get(&Self::key(api_version, kind)).cloned()
    }

    /// A kind by group alone, at the group's preferred version (the ApplySet parent lists
    /// kinds without versions).
    pub fn resolve_group_kind(&self, group: &str, kind: &str) -> Option<(ApiResource, bool)> {
        let (ar, caps) = self.discovery.get(group)?.recommended_kind(kind)?;
        Some((ar, caps.scope == KubeScope::Namespaced))
    }

    /// A resource by group and plural (`deployments` in `apps`).
    pub fn resolve_resource(&self, group: &str, plural: &str) -> Option<(ApiResource, bool)> {
        self.discovery
            .get(group)?
            .recommended_resources()
            .into_iter()
            .find(|(ar, _)| ar.plural == plural)
            .map(|(ar, caps)| (ar, caps.scope == KubeScope::Namespaced))
    }

    /// Where a manifest's object is addressed: its resource, and its namespace when the
    /// kind is namespaced (`None` for a cluster-scoped one, whatever the manifest says).
    pub fn address<'m>(
        &self,
        m: &'m crate::manifest::Manifest,
    ) -> Option<(ApiResource, Option<&'m str>)> {
        let (ar, namespaced) = self.resolve(&m.api_version, &m.kind)?;
        Some((ar, m.namespace.as_deref().filter(|_| namespaced)))
    }

    /// The scope lookup the manifest validator takes.
    pub fn scope(&self, api_version: &str, kind: &str) -> Option<Scope> {
        self.resolve(api_version, kind).map(|(_, namespaced)| {
            if namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            }
        })
    }
}
