//! The image preflight: every distinct image of the manifests looked up in its registry
//! before anything is applied, so a missing image stops the deploy in seconds, at the
//! line that names it.

use super::context::Context;
use super::error::RunError;
use super::outcomes::{self, Judged};
use crate::cli::Preflight;
use crate::manifest::Manifest;
use crate::registry::{Credentials, Lookup, Registry};
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::{ContainerRef, Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, Verdict};
use std::collections::{BTreeMap, BTreeSet};

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
            let container = ContainerRef {
                pod: String::new(),
                container: line.container.clone(),
                image: Some(line.image.clone()),
            };
            let judged = Judged::new(Verdict::Failed, Some(reason), message);
            report.failures.push(outcomes::outcome(
                m,
                judged.blaming(Some(container)),
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

/// The preflight as a step of a deploy (`--image-preflight` not `off`): the outcome that
/// stops the run before anything is applied, if an image is missing.
pub async fn stop_before_apply(
    ctx: &mut Context<'_>,
    manifests: &[Manifest],
) -> Result<Option<RunOutcome>, RunError> {
    let mode = ctx.config.image_preflight;
    if mode == Preflight::Off {
        return Ok(None);
    }
    let access = ctx.access;
    let report = preflight(
        manifests,
        &access.registry,
        access.credentials.as_ref(),
        mode,
    )
    .await;
    ctx.event(RunEvent::ImagesChecked(report.checked));
    for w in &report.warnings {
        ctx.event(RunEvent::Warning(w.clone()));
    }
    if !report.unconfirmed.is_empty() {
        return Err(RunError::Unconfirmed(report.unconfirmed));
    }
    if report.failures.is_empty() {
        return Ok(None);
    }
    Ok(Some(RunOutcome::new(false, ctx.seconds(), report.failures)))
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
