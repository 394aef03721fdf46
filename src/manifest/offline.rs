//! What `check` can say without a cluster, beyond what every command validates: built-in
//! kinds against Kubernetes' own list (a removed version, a kind at the wrong version, a
//! misspelt kind with the near name), custom kinds against the CRDs in the same manifests
//! or given by `--schemas` (their version, then their schema: `custom`; one with no CRD is
//! said to be unchecked, never passed silently), and the shapes the API server refuses
//! (`shape`). A deploy asks the server instead, in its dry run.

use super::builtin::{self, Lookup};
use super::document::Manifest;
use super::error::Problem;
use crate::pointer::Pointer;
use crate::vocab::outcome::{Notice, SourceSpan};
use std::collections::BTreeSet;

/// A kind a CRD defines: its group, kind and served versions, the CRD object, and whether
/// it came with the manifests or from `--schemas`.
struct Defined<'a> {
    group: String,
    kind: String,
    versions: Vec<String>,
    crd: &'a Manifest,
    from: &'static str,
}

/// The CRDs among the manifests, then those of `--schemas` (the manifests' win).
fn defined<'a>(manifests: &'a [Manifest], schemas: &'a [Manifest]) -> Vec<Defined<'a>> {
    let from = |ms: &'a [Manifest], from| ms.iter().map(move |m| (m, from));
    from(manifests, "the manifests")
        .chain(from(schemas, "--schemas"))
        .filter(|(m, _)| m.kind == "CustomResourceDefinition")
        .filter_map(|(m, from)| {
            let spec = m.object.get("spec")?;
            Some(Defined {
                crd: m,
                from,
                group: spec.get("group")?.as_str()?.to_owned(),
                kind: spec.at("/names/kind")?.as_str()?.to_owned(),
                versions: spec
                    .get("versions")?
                    .as_array()?
                    .iter()
                    .filter_map(|v| v.get("name")?.as_str().map(str::to_owned))
                    .collect(),
            })
        })
        .collect()
}

/// Problems with the manifests' kinds (and custom resources' fields), and a notice per
/// custom kind no CRD here defines and per unknown field. `schemas`: `--schemas`' CRDs.
pub fn kinds(manifests: &[Manifest], schemas: &[Manifest]) -> (Vec<Problem>, Vec<Notice>) {
    let crds = defined(manifests, schemas);
    let mut problems = Vec::new();
    let mut notices = Vec::new();
    let mut unchecked = BTreeSet::new();
    for m in manifests {
        if m.api_version.is_empty() || m.kind.is_empty() {
            continue; // validation says what is missing
        }
        super::shape::check(m, &mut problems);
        super::refusals::check(m, &mut problems);
        let at = |message: String| Problem::new(&m.file, Some(m.line_near("/kind")), message);
        match builtin::lookup(&m.api_version, &m.kind) {
            Lookup::Builtin => {
                if let Some(warning) = builtin::deprecated(&m.api_version, &m.kind) {
                    notices.push(Notice {
                        source: SourceSpan {
                            file: m.file.clone(),
                            line: m.line_near("/apiVersion"),
                        },
                        message: format!("{}: {warning}", m.display_name()),
                    });
                }
            }
            Lookup::Removed { removed, instead } => problems.push(
                at(format!(
                    "{} {} was removed in Kubernetes {removed}",
                    m.api_version, m.kind
                ))
                .with_hint(format!("use apiVersion {instead}")),
            ),
            Lookup::OtherVersions(versions) => problems.push(
                at(format!("{} serves no kind {}", m.api_version, m.kind)).with_hint(format!(
                    "{} is served as {}",
                    m.kind,
                    versions.join(" or ")
                )),
            ),
            Lookup::Unknown { near } => {
                let hint = match near {
                    Some(near) => format!("did you mean {near}?"),
                    None => format!(
                        "{} is a Kubernetes API group: a custom kind needs a group of its own",
                        if m.api_version.contains('/') {
                            m.api_version.split('/').next().unwrap_or_default()
                        } else {
                            "the core group"
                        }
                    ),
                };
                problems.push(
                    at(format!("unknown kind {} in {}", m.kind, m.api_version)).with_hint(hint),
                );
            }
            Lookup::Custom => {
                let (group, version) = m.api_version.split_once('/').unwrap_or(("", ""));
                match crds.iter().find(|d| d.group == group && d.kind == m.kind) {
                    Some(d) if d.versions.iter().any(|v| v == version) => {
                        super::custom::check(m, d.crd, version, &mut problems, &mut notices);
                    }
                    Some(d) => problems.push(
                        at(format!(
                            "the CRD in {} serves {} {} at {}, not {version}",
                            d.from,
                            group,
                            m.kind,
                            d.versions.join(", ")
                        ))
                        .with_hint("use a version the CRD lists"),
                    ),
                    None => {
                        if unchecked.insert((m.api_version.clone(), m.kind.clone())) {
                            notices.push(Notice {
                                source: SourceSpan {
                                    file: m.file.clone(),
                                    line: m.line,
                                },
                                message: format!(
                                    "{} {}: no CRD in the manifests defines it, so check cannot \
                                     tell whether the kind exists (its operator's CRD is \
                                     installed separately)",
                                    m.api_version, m.kind
                                ),
                            });
                        }
                    }
                }
            }
        }
    }
    (problems, notices)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn run(yaml: &str) -> (Vec<String>, Vec<String>) {
        run_with(yaml, &[])
    }

    /// The problems and notices of `yaml` as `app.yaml`, with `schemas`' CRDs, as printed.
    pub(crate) fn run_with(yaml: &str, schemas: &[Manifest]) -> (Vec<String>, Vec<String>) {
        let manifests = load_str("app.yaml", yaml).unwrap();
        let (problems, notices) = kinds(&manifests, schemas);
        (
            problems.iter().map(ToString::to_string).collect(),
            notices
                .iter()
                .map(|n| format!("{}:{}: {}", n.source.file, n.source.line, n.message))
                .collect(),
        )
    }

    #[test]
    fn a_deprecated_api_is_a_warning_in_the_servers_words() {
        let manifests = load_str(
            "app.yaml",
            "apiVersion: v1\nkind: Endpoints\nmetadata: {name: legacy}\nsubsets: []\n",
        )
        .unwrap();
        let (problems, notices) = kinds(&manifests, &[]);
        assert!(problems.is_empty(), "{problems:?}");
        let notices: Vec<String> = notices
            .iter()
            .map(|n| format!("{}:{}: {}", n.source.file, n.source.line, n.message))
            .collect();
        assert_eq!(
            notices,
            [
                "app.yaml:1: Endpoints/legacy: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
            ]
        );
    }

    #[test]
    fn misspelt_removed_and_misplaced_kinds_are_problems_with_hints() {
        let (problems, notices) = run("apiVersion: apps/v1
kind: Deploymnet
metadata: {name: web}
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: web}
---
apiVersion: v1
kind: Deployment
metadata: {name: api}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ok}
spec:
  selector: {matchLabels: {app: ok}}
  template: {metadata: {labels: {app: ok}}, spec: {containers: [{name: ok, image: ok:1}]}}
");
        assert_eq!(
            problems,
            [
                "app.yaml:2: unknown kind Deploymnet in apps/v1\n  hint: did you mean Deployment?",
                "app.yaml:6: extensions/v1beta1 Ingress was removed in Kubernetes 1.22\n  hint: use apiVersion networking.k8s.io/v1",
                "app.yaml:10: v1 serves no kind Deployment\n  hint: Deployment is served as apps/v1",
            ]
        );
        assert!(notices.is_empty());
    }

    #[test]
    fn custom_kinds_are_checked_against_the_crds_in_the_manifests_or_said_unchecked() {
        let (problems, notices) = run("apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: acme.io/v1
kind: Widget
metadata: {name: a}
---
apiVersion: acme.io/v2
kind: Widget
metadata: {name: b}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: c}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: d}
");
        assert_eq!(
            problems,
            [
                "app.yaml:15: the CRD in the manifests serves acme.io Widget at v1, not v2\n  hint: use a version the CRD lists"
            ]
        );
        assert_eq!(
            notices,
            [
                "app.yaml:18: cert-manager.io/v1 Certificate: no CRD in the manifests defines it, so check cannot tell whether the kind exists (its operator's CRD is installed separately)"
            ]
        );
    }
}
