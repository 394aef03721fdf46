//! Loading the manifests a command names, and refusing those that lack the `--selector`
//! labels (a deploy's resources must all carry them).

use super::error::RunError;
use crate::config::Config;
use crate::manifest::{self, Manifest, Problem};

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
