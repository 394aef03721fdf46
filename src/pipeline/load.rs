//! Loading the manifests a command names, and refusing those that lack the `--selector`
//! labels (a deploy's resources must all carry them); loading its `--rules` files.

use super::error::RunError;
use crate::config::Config;
use crate::manifest::{self, Manifest, Problem};
use crate::rules::health::{load::load as load_rules_file, rule::HealthRules};
use std::sync::Arc;

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

/// Load the manifests named by the config (stdin given as text).
pub fn load(config: &Config, stdin: Option<&str>) -> Result<Vec<Manifest>, RunError> {
    let manifests = manifest::load(&config.files, stdin)?;
    let problems: Vec<Problem> = manifests
        .iter()
        .filter(|_| !config.selector.is_empty())
        .filter_map(|m| {
            let missing: Vec<String> = config
                .selector
                .iter()
                .filter(|(k, v)| {
                    m.object
                        .pointer(&format!("/metadata/labels/{}", manifest::escape_pointer(k)))
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
        Ok(manifests)
    } else {
        Err(RunError::Invalid(problems))
    }
}
