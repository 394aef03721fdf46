//! `check`: no cluster. The manifests were validated as they loaded; here every image is
//! looked up in its registry, and each manifest gets its verdict: valid with its images
//! found, failed on a missing image, or unfinished when a registry would not say.

use super::access::RegistryAccess;
use super::error::RunError;
use super::outcomes::{self, Judged};
use super::preflight::{self, PreflightReport};
use crate::cli::Preflight;
use crate::config::Config;
use crate::manifest::Manifest;
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::{ContainerRef, ImageTally, Notice, Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, Verdict};
use tokio::time::Instant;

/// `check`: local validation plus the image preflight; no cluster. `unchecked`: the
/// warnings of the offline validation `pipeline::load` ran.
pub async fn check(
    config: &Config,
    manifests: &[Manifest],
    unchecked: Vec<Notice>,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let start = Instant::now();
    observer.event(
        start.elapsed(),
        RunEvent::Loaded {
            resources: manifests.len(),
        },
    );
    observer.event(
        start.elapsed(),
        RunEvent::Note(format!(
            "kinds checked against Kubernetes {}'s built-in API and the CRDs in the manifests{}",
            crate::manifest::builtin::KUBERNETES_VERSION,
            if config.schemas.is_empty() {
                ""
            } else {
                " and --schemas"
            }
        )),
    );
    for n in &unchecked {
        observer.event(
            start.elapsed(),
            RunEvent::Warning(format!(
                "{}:{}: {}",
                n.source.file, n.source.line, n.message
            )),
        );
    }
    let mode = config.image_preflight;
    let report = preflight::preflight(
        manifests,
        &access.registry,
        access.credentials.as_ref(),
        mode,
    )
    .await;
    if mode != Preflight::Off {
        observer.event(start.elapsed(), RunEvent::ImagesChecked(report.checked));
    }
    for w in &report.warnings {
        observer.event(start.elapsed(), RunEvent::Warning(w.clone()));
    }
    if !report.unconfirmed.is_empty() {
        return Err(RunError::Unconfirmed(report.unconfirmed));
    }
    let distinct: std::collections::BTreeSet<&str> = manifests
        .iter()
        .flat_map(|m| m.images.iter().map(|i| i.image.as_str()))
        .collect();
    let tally = ImageTally {
        images: distinct.len(),
        missing: report.missing,
        unconfirmed: report.doubtful.len(),
        looked_up: mode != Preflight::Off,
    };
    let outcomes = manifests
        .iter()
        .map(|m| check_outcome(m, &report, tally.looked_up))
        .collect();
    // Not a dry run of the apply: nothing was sent to a cluster, so the summary must not
    // claim server validation; it speaks of images instead.
    let mut run =
        RunOutcome::new(false, start.elapsed().as_secs_f64(), outcomes).with_images(tally);
    run.notices = unchecked;
    Ok(run)
}

/// One manifest's `check` outcome: failed on a missing image, unfinished (`not_validated`)
/// when its registry would not confirm an image, else valid with its images found.
fn check_outcome(m: &Manifest, report: &PreflightReport, looked_up: bool) -> Outcome {
    if let Some(failed) = report.failures.iter().find(|o| o.resource == m.id()) {
        return failed.clone();
    }
    let mut images: Vec<&str> = m.images.iter().map(|i| i.image.as_str()).collect();
    images.dedup();
    let doubtful: Vec<String> = images
        .iter()
        .filter_map(|i| report.doubtful.get(*i).map(|why| format!("{i} ({why})")))
        .collect();
    let judged = if !doubtful.is_empty() {
        Judged::new(
            Verdict::Unfinished,
            Some(Reason::NotValidated),
            format!(
                "manifest valid; the registry could not confirm {}: the nodes may still pull it",
                doubtful.join(", ")
            ),
        )
    } else if images.is_empty() {
        Judged::new(Verdict::Succeeded, None, "manifest valid")
    } else if !looked_up {
        Judged::new(
            Verdict::Succeeded,
            None,
            "manifest valid; images not looked up (--image-preflight off)",
        )
    } else {
        Judged::new(
            Verdict::Succeeded,
            None,
            format!("manifest valid; found {}", images.join(", ")),
        )
    };
    let container = m
        .images
        .iter()
        .find(|i| report.doubtful.contains_key(&i.image))
        .map(|i| ContainerRef {
            pod: String::new(),
            container: i.container.clone(),
            image: Some(i.image.clone()),
        });
    outcomes::outcome(m, judged.blaming(container), 0.0, Vec::new())
}
