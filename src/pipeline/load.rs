//! Loading the manifests a command names, and refusing those that lack the `--selector`
//! labels (a deploy's resources must all carry them); loading its `--rules` files.

use super::error::RunError;
use crate::config::Config;
use crate::manifest::{self, Manifest, Problem};
use crate::pointer::Pointer;
use crate::rules::health::{load::load as load_rules_file, rule::HealthRules};
use crate::vocab::outcome::Notice;
use std::sync::Arc;

/// Workloads whose timeout is no longer than their stability window could never succeed
/// ("2/2 available" would be reported timed out): refused, at the annotation that set the
/// shorter time, or once for the flags.
fn settle_problems(config: &Config, manifests: &[Manifest]) -> Vec<Problem> {
    use crate::rules::annotations::timeout::{KRANE_TIMEOUT_ANNOTATION, TIMEOUT_ANNOTATION};
    use crate::rules::settle::{SETTLE_ANNOTATION, window};
    use crate::rules::{Target, deadline_for};
    let mut problems = Vec::new();
    let mut flags_only = false;
    for m in manifests {
        let Some(target) = Target::from_manifest(&m.object) else {
            continue;
        };
        let settle = window(&target, &m.object, config.settle);
        let deadline = deadline_for(&m.id(), &target.annotations, config.timeout);
        if settle.is_zero() || deadline > settle {
            continue;
        }
        let annotation = [
            TIMEOUT_ANNOTATION,
            KRANE_TIMEOUT_ANNOTATION,
            SETTLE_ANNOTATION,
        ]
        .into_iter()
        .find(|a| target.annotations.contains_key(*a));
        let Some(annotation) = annotation else {
            flags_only = true;
            continue;
        };
        let pointer = format!(
            "/metadata/annotations/{}",
            manifest::escape_pointer(annotation)
        );
        problems.push(
            Problem::new(
                &m.file,
                Some(m.line_of(&pointer).unwrap_or(m.line)),
                format!(
                    "{} may take {}s but must run {}s without a restart to succeed: it could only time out",
                    m.display_name(),
                    deadline.as_secs(),
                    settle.as_secs()
                ),
            )
            .with_hint("make deploy-action.io/timeout longer than the stability window, or lower deploy-action.io/settle"),
        );
    }
    if flags_only {
        problems.push(
            Problem::new(
                "",
                None,
                format!(
                    "--timeout {}s is not longer than --settle {}s: no workload could succeed",
                    config.timeout.as_secs(),
                    config.settle.as_secs()
                ),
            )
            .with_hint("make --timeout longer than --settle, or lower --settle (0 turns it off)"),
        );
    }
    problems
}

/// Reads the `--rules` files into the config, refusing every problem in them at once.
pub fn load_rules(mut config: Config) -> Result<Config, RunError> {
    let mut rules = HealthRules::default();
    let mut problems = Vec::new();
    for path in &config.rules {
        match load_rules_file(path) {
            Ok(r) => rules.extend(r),
            Err(p) => problems.extend(p),
        }
    }
    if !problems.is_empty() {
        return Err(RunError::Rules(problems));
    }
    config.health_rules = Arc::new(rules);
    Ok(config)
}

/// The CRDs of `check --schemas` (anything else there is ignored), loaded as manifests are.
fn schema_crds(config: &Config) -> Result<Vec<Manifest>, RunError> {
    if config.schemas.is_empty() {
        return Ok(Vec::new());
    }
    let paths: Vec<String> = config
        .schemas
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut crds = manifest::load(&paths, None)?;
    crds.retain(|m| m.defines().is_some());
    Ok(crds)
}

/// Load the manifests named by the config (stdin given as text), with the warnings `check`'s
/// offline validation found (none for the other commands, which ask the server).
pub fn load(
    config: &Config,
    stdin: Option<&str>,
) -> Result<(Vec<Manifest>, Vec<Notice>), RunError> {
    let manifests = manifest::load(&config.files, stdin)?;
    let mut unchecked = Vec::new();
    if config.mode == crate::config::Mode::Check {
        // No cluster to ask which kinds exist: Kubernetes' own list and the CRDs in the
        // manifests and `--schemas`.
        let (problems, notices) = manifest::offline::kinds(&manifests, &schema_crds(config)?);
        if !problems.is_empty() {
            return Err(RunError::Load(manifest::LoadError::Invalid(problems)));
        }
        unchecked = notices;
    }
    let too_short = settle_problems(config, &manifests);
    if !too_short.is_empty() {
        return Err(RunError::Invalid(too_short));
    }
    let problems: Vec<Problem> = manifests
        .iter()
        .filter(|_| !config.selector.is_empty())
        .filter_map(|m| {
            let missing: Vec<String> = config
                .selector
                .iter()
                .filter(|(k, v)| {
                    m.object
                        .at(&format!("/metadata/labels/{}", manifest::escape_pointer(k)))
                        .and_then(|x| x.as_str())
                        != Some(v.as_str())
                })
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            (!missing.is_empty()).then(|| {
                Problem::new(
                    &m.file,
                    Some(m.line),
                    format!(
                        "{} lacks the --selector labels {}",
                        m.display_name(),
                        missing.join(",")
                    ),
                )
                .with_hint("every resource of a deploy must carry the selector's labels")
            })
        })
        .collect();
    if problems.is_empty() {
        Ok((manifests, unchecked))
    } else {
        Err(RunError::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(timeout: u64, settle: u64) -> Config {
        let (timeout, settle) = (format!("{timeout}s"), format!("{settle}s"));
        let args = [
            "deploy-action",
            "deploy",
            "-f",
            "-",
            "--timeout",
            &timeout,
            "--settle",
            &settle,
        ];
        Config::from_command(&crate::cli::Cli::try_parse_from(args).unwrap().command).unwrap()
    }

    const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    deploy-action.io/timeout: 8s
spec:
  template: {spec: {containers: [{name: web, image: nginx}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
";

    #[test]
    fn a_timeout_within_the_stability_window_is_refused_where_it_is_set() {
        let err = load(&config(300, 10), Some(WEB)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<stdin>:6: Deployment/web may take 8s but must run 10s without a restart to succeed: it could only time out\n  hint: make deploy-action.io/timeout longer than the stability window, or lower deploy-action.io/settle"
        );
        assert!(load(&config(300, 5), Some(WEB)).is_ok());
        // From the flags alone: said once.
        let plain = WEB.replace("  annotations:\n    deploy-action.io/timeout: 8s\n", "");
        let err = load(&config(10, 10), Some(&plain)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--timeout 10s is not longer than --settle 10s: no workload could succeed\n  hint: make --timeout longer than --settle, or lower --settle (0 turns it off)"
        );
        // Nothing settles: nothing to refuse.
        assert!(load(&config(10, 0), Some(&plain)).is_ok());
    }
}
