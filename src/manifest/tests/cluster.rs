//! Validation against the kinds a cluster serves, and namespace defaulting.

use serde_json::json;

use super::super::{Scope, resolve_namespace, resolve_namespaces, validate_against};
use super::fixtures::{CRD_AND_CR, KUSTOMIZE};
use super::load_stdin;

/// What a plain cluster without cert-manager serves.
fn builtin(api_version: &str, kind: &str) -> Option<Scope> {
    match (api_version, kind) {
        ("v1", "Namespace" | "PersistentVolume")
        | ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        | ("rbac.authorization.k8s.io/v1", "ClusterRole") => Some(Scope::Cluster),
        ("v1", "ConfigMap" | "Service" | "Secret" | "Pod") | ("apps/v1", "Deployment") => {
            Some(Scope::Namespaced)
        }
        _ => None,
    }
}

#[test]
fn known_stream_has_no_problems() {
    let manifests = load_stdin(KUSTOMIZE);
    assert_eq!(validate_against(&manifests, "default", builtin), vec![]);
}

#[test]
fn kinds_from_crds_in_the_same_stream_are_known() {
    let manifests = load_stdin(CRD_AND_CR);
    assert_eq!(validate_against(&manifests, "default", builtin), vec![]);

    // Without the CRD the Certificate is unknown.
    let alone = &manifests[1..];
    let rendered: Vec<String> = validate_against(alone, "default", builtin)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        rendered,
        vec![
            "<stdin>:21: unknown kind Certificate in cert-manager.io/v1\n  hint: is the CRD installed? CRDs in the same manifests are applied first"
        ]
    );

    // A version the CRD does not serve.
    let text = CRD_AND_CR.replace(
        "apiVersion: cert-manager.io/v1\n",
        "apiVersion: cert-manager.io/v1alpha2\n",
    );
    let found = validate_against(&load_stdin(&text), "default", builtin);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].line, found[0].message.as_str()),
        (
            Some(21),
            "unknown kind Certificate in cert-manager.io/v1alpha2"
        )
    );
    assert_eq!(
        found[0].hint.as_deref(),
        Some("the CustomResourceDefinition in these manifests serves cert-manager.io/v1 only")
    );
}

#[test]
fn cluster_scoped_objects_must_not_set_a_namespace() {
    let text = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shop-reader
  namespace: shop
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch"]
"#;
    let rendered: Vec<String> = validate_against(&load_stdin(text), "default", builtin)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        rendered,
        vec![
            "<stdin>:5: ClusterRole is cluster-scoped but sets metadata.namespace\n  hint: remove metadata.namespace; cluster-scoped objects have none"
        ]
    );
}

#[test]
fn duplicates_appear_once_the_default_namespace_is_known() {
    let text = r"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  ENV: staging
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  ENV: production
";
    let manifests = load_stdin(text);
    assert_eq!(validate_against(&manifests, "default", builtin), vec![]);
    let rendered: Vec<String> = validate_against(&manifests, "shop", builtin)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        rendered,
        vec![
            "<stdin>:8: duplicate resource ConfigMap/settings in namespace shop (also defined at <stdin>:1)\n  hint: each object may appear only once; remove or rename one of them"
        ]
    );
}

#[test]
fn namespaces_are_filled_in_for_namespaced_kinds_only() {
    let text = r"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: payments
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: unknown
";
    let mut manifests = load_stdin(text);
    resolve_namespaces(&mut manifests, "shop", builtin);
    let namespaces: Vec<Option<&str>> = manifests.iter().map(|m| m.namespace.as_deref()).collect();
    assert_eq!(namespaces, vec![None, Some("shop"), Some("payments"), None]);
    assert_eq!(
        manifests[1].object["metadata"],
        json!({"name": "settings", "namespace": "shop"})
    );
    assert_eq!(manifests[0].object["metadata"], json!({"name": "shop"}));

    let mut single = manifests[3].clone();
    resolve_namespace(&mut single, Scope::Namespaced, "default");
    assert_eq!(single.namespace.as_deref(), Some("default"));
}
