//! How long each resource may take: krane's per-kind defaults, a per-resource annotation,
//! and the global `--timeout` as a cap, so one slow kind cannot outlast the whole run.

use crate::rules::error::RulesError;
use crate::rules::kinds;
use crate::rules::snapshot::group_of;
use crate::rules::target::Target;
use crate::vocab::duration::parse_span;
use crate::vocab::outcome::ResourceId;
use std::collections::BTreeMap;
use std::time::Duration;

/// Our annotation; wins over krane's when both are set.
pub const TIMEOUT_ANNOTATION: &str = "deploy-action.io/timeout";
/// krane's annotation, honoured so existing manifests keep their meaning.
pub const KRANE_TIMEOUT_ANNOTATION: &str = "krane.shopify.io/timeout-override";

const MIN_OVERRIDE: Duration = Duration::from_secs(1);
const MAX_OVERRIDE: Duration = Duration::from_secs(24 * 60 * 60);

/// The deadline for one resource: the annotated timeout (ours, else krane's) or its kind's
/// default (krane 3.9's per-kind `TIMEOUT`, in the kind's row of `rules::kinds`), never
/// beyond `global`. An unreadable annotation is ignored here; `timeout_override` reports it
/// so input validation can refuse the manifest first.
pub fn deadline_for(
    id: &ResourceId,
    annotations: &BTreeMap<String, String>,
    global: Duration,
) -> Duration {
    let own = override_from(annotations).ok().flatten();
    let kind = kinds::of(group_of(&id.api_version), &id.kind);
    own.unwrap_or(kind.timeout).min(global)
}

/// The annotated timeout of a target, if any, or why it cannot be read.
pub fn timeout_override(target: &Target) -> Result<Option<Duration>, RulesError> {
    override_from(&target.annotations)
}

fn override_from(annotations: &BTreeMap<String, String>) -> Result<Option<Duration>, RulesError> {
    let Some((annotation, value)) = [TIMEOUT_ANNOTATION, KRANE_TIMEOUT_ANNOTATION]
        .iter()
        .find_map(|k| annotations.get_key_value(*k))
    else {
        return Ok(None);
    };
    parse_annotation_duration(value)
        .filter(|d| (MIN_OVERRIDE..=MAX_OVERRIDE).contains(d))
        .map(Some)
        .ok_or_else(|| RulesError::InvalidTimeout {
            annotation: annotation.clone(),
            value: value.clone(),
        })
}

/// Accepts jiff's friendly format (`45s`, `3m`, `1h30m`) and, like krane, ISO 8601
/// (`PT0.25H`, `P1D`); units largest first.
pub fn parse_annotation_duration(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value == "0" {
        return Some(Duration::ZERO);
    }
    parse_span(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLOBAL: Duration = Duration::from_secs(3600);

    /// `kind` is the built-in kind of that name, else a custom resource's.
    #[track_caller]
    fn case(kind: &str, annotations: &[(&str, &str)], global: Duration, expected_secs: u64) {
        let annotations = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let group = kinds::KINDS
            .iter()
            .find(|k| k.kind == kind)
            .map_or("example.com", |k| k.group);
        let api_version = if group.is_empty() {
            "v1".to_owned()
        } else {
            format!("{group}/v1")
        };
        let id = Target::new(&api_version, kind, Some("shop"), "x").id;
        assert_eq!(
            deadline_for(&id, &annotations, global),
            Duration::from_secs(expected_secs)
        );
    }

    #[test]
    fn kinds_get_krane_defaults() {
        case("Pod", &[], GLOBAL, 600);
        case("Deployment", &[], GLOBAL, 420);
        case("StatefulSet", &[], GLOBAL, 600);
        case("DaemonSet", &[], GLOBAL, 300);
        case("Job", &[], GLOBAL, 600);
        case("Service", &[], GLOBAL, 420);
        case("ConfigMap", &[], GLOBAL, 30);
        case("Secret", &[], GLOBAL, 30);
        case("ClusterRoleBinding", &[], GLOBAL, 30);
        case("Certificate", &[], GLOBAL, 300);
    }

    #[test]
    fn the_global_timeout_caps_every_kind() {
        case("Pod", &[], Duration::from_secs(300), 300);
        case("ConfigMap", &[], Duration::from_secs(300), 30);
        case(
            "Deployment",
            &[(TIMEOUT_ANNOTATION, "20m")],
            Duration::from_secs(900),
            900,
        );
    }

    #[test]
    fn annotations_override_ours_first_and_iso8601_is_understood() {
        case(
            "Deployment",
            &[(KRANE_TIMEOUT_ANNOTATION, "45s")],
            GLOBAL,
            45,
        );
        case(
            "Deployment",
            &[(KRANE_TIMEOUT_ANNOTATION, "PT0.25H")],
            GLOBAL,
            900,
        );
        case(
            "Deployment",
            &[(KRANE_TIMEOUT_ANNOTATION, "P1D")],
            Duration::from_secs(200_000),
            86_400,
        );
        case(
            "Deployment",
            &[
                (TIMEOUT_ANNOTATION, "1h30m"),
                (KRANE_TIMEOUT_ANNOTATION, "45s"),
            ],
            Duration::from_secs(99_999),
            5400,
        );
        case("ConfigMap", &[(TIMEOUT_ANNOTATION, "2m")], GLOBAL, 120);
    }

    #[test]
    fn unreadable_or_out_of_range_annotations_fall_back_and_are_reported() {
        case("Deployment", &[(TIMEOUT_ANNOTATION, "soon")], GLOBAL, 420);
        case(
            "Deployment",
            &[(TIMEOUT_ANNOTATION, "25h")],
            Duration::from_secs(200_000),
            420,
        );
        case("Deployment", &[(TIMEOUT_ANNOTATION, "0s")], GLOBAL, 420);
        let target = Target::new("apps/v1", "Deployment", Some("shop"), "web")
            .with_annotation(KRANE_TIMEOUT_ANNOTATION, "soon");
        let err = timeout_override(&target).unwrap_err();
        assert!(
            err.to_string()
                .contains("krane.shopify.io/timeout-override=\"soon\""),
            "{err}"
        );
        let ok = Target::new("apps/v1", "Deployment", Some("shop"), "web")
            .with_annotation(TIMEOUT_ANNOTATION, "90s");
        assert_eq!(
            timeout_override(&ok).unwrap(),
            Some(Duration::from_secs(90))
        );
    }
}
