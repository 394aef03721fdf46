//! Checks that need to know what the cluster serves (kinds and their scope), kept pure by
//! taking a lookup function, so they run the same against kube-sim, a real discovery
//! cache or a test table.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::document::Manifest;
use super::error::Problem;
use super::validate::{as_written, duplicates};
use crate::pointer::Pointer;

/// Whether objects of a kind live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Scope {
    Namespaced,
    Cluster,
}

/// Kinds defined by CustomResourceDefinitions among the manifests, which are applied
/// before the objects that use them and so count as known.
#[derive(Debug, Default)]
struct LocalKinds {
    /// (apiVersion, kind) -> scope
    served: HashMap<(String, String), Scope>,
    /// (group, kind) -> versions, to explain a version mismatch.
    versions: HashMap<(String, String), Vec<String>>,
}

impl LocalKinds {
    fn from_manifests(manifests: &[Manifest]) -> LocalKinds {
        let mut local = LocalKinds::default();
        let crds = manifests.iter().filter(|m| {
            m.kind == "CustomResourceDefinition" && m.group() == "apiextensions.k8s.io"
        });
        for crd in crds {
            let text = |p: &str| crd.object.at(p).and_then(Value::as_str);
            let (Some(group), Some(kind)) = (text("/spec/group"), text("/spec/names/kind")) else {
                continue;
            };
            let scope = match text("/spec/scope") {
                Some("Cluster") => Scope::Cluster,
                _ => Scope::Namespaced,
            };
            // v1 lists versions; v1beta1 may have only `spec.version`.
            let mut versions: Vec<String> = crd
                .object
                .at("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.get("name")?.as_str().map(str::to_string))
                .collect();
            versions.extend(text("/spec/version").map(str::to_string));
            for version in &versions {
                let key = (format!("{group}/{version}"), kind.to_string());
                local.served.insert(key, scope);
            }
            local
                .versions
                .entry((group.to_string(), kind.to_string()))
                .or_default()
                .extend(versions);
        }
        local
    }
}

fn scope_of(
    m: &Manifest,
    local: &LocalKinds,
    lookup: &impl Fn(&str, &str) -> Option<Scope>,
) -> Option<Scope> {
    let key = (m.api_version.clone(), m.kind.clone());
    local
        .served
        .get(&key)
        .copied()
        .or_else(|| lookup(&m.api_version, &m.kind))
}

/// Problems that depend on the cluster: unknown kinds, namespaces on cluster-scoped
/// objects, and duplicates that only appear once the default namespace is filled in.
/// Manifests lacking apiVersion or kind are skipped (static validation reports them).
pub fn validate_against(
    manifests: &[Manifest],
    default_namespace: &str,
    lookup: impl Fn(&str, &str) -> Option<Scope>,
) -> Vec<Problem> {
    let local = LocalKinds::from_manifests(manifests);
    let mut problems = Vec::new();
    let mut scopes = Vec::with_capacity(manifests.len());
    for m in manifests {
        if m.api_version.is_empty() || m.kind.is_empty() {
            scopes.push(None);
            continue;
        }
        let scope = scope_of(m, &local, &lookup);
        scopes.push(scope);
        match scope {
            None => problems.push(unknown_kind(m, &local)),
            Some(Scope::Cluster) if m.namespace.is_some() => problems.push(
                Problem::new(
                    &m.file,
                    Some(m.line_near("/metadata/namespace")),
                    format!("{} is cluster-scoped but sets metadata.namespace", m.kind),
                )
                .with_hint("remove metadata.namespace; cluster-scoped objects have none"),
            ),
            Some(_) => {}
        }
    }
    // Only pairs that static validation could not see: same object once the default
    // namespace is filled in, but written differently.
    let resolved = |m: &Manifest, scope: Option<Scope>| match scope {
        Some(Scope::Namespaced) => m
            .namespace
            .clone()
            .unwrap_or_else(|| default_namespace.to_string()),
        Some(Scope::Cluster) => String::new(),
        // Unknown kinds compare as written, which static validation already covered.
        None => m.namespace.clone().unwrap_or_default(),
    };
    let new_duplicates = duplicates(
        manifests
            .iter()
            .zip(scopes)
            .map(|(m, s)| (m, resolved(m, s))),
    );
    let static_duplicates = duplicates(as_written(manifests));
    problems.extend(new_duplicates.into_iter().filter(|p| {
        !static_duplicates
            .iter()
            .any(|s| s.file == p.file && s.line == p.line)
    }));
    problems
}

fn unknown_kind(m: &Manifest, local: &LocalKinds) -> Problem {
    let problem = Problem::new(
        &m.file,
        Some(m.line_near("/kind")),
        format!("unknown kind {} in {}", m.kind, m.api_version),
    );
    let local_versions = local.versions.get(&(m.group().to_string(), m.kind.clone()));
    match local_versions {
        Some(versions) => problem.with_hint(format!(
            "the CustomResourceDefinition in these manifests serves {} only",
            versions
                .iter()
                .map(|v| format!("{}/{v}", m.group()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => {
            problem.with_hint("is the CRD installed? CRDs in the same manifests are applied first")
        }
    }
}

/// Gives a namespaced object without a namespace the default one (in `namespace` and in
/// the object's metadata); cluster-scoped objects are left alone.
pub fn resolve_namespace(manifest: &mut Manifest, scope: Scope, default_namespace: &str) {
    if scope == Scope::Namespaced && manifest.namespace.is_none() {
        manifest.set_namespace(default_namespace);
    }
}

/// `resolve_namespace` for all manifests, knowing the kinds of CRDs among them; objects of
/// unknown kinds are left alone.
pub fn resolve_namespaces(
    manifests: &mut [Manifest],
    default_namespace: &str,
    lookup: impl Fn(&str, &str) -> Option<Scope>,
) {
    let local = LocalKinds::from_manifests(manifests);
    for m in manifests.iter_mut() {
        if let Some(scope) = scope_of(m, &local, &lookup) {
            resolve_namespace(m, scope, default_namespace);
        }
    }
}
