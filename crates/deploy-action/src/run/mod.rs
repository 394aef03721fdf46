//! A whole run: load and validate the manifests, connect, validate against the cluster,
//! apply in phases (or dry-run, or nothing for `watch`), then judge every resource.
//! Reports progress to an [`Observer`]; prints nothing itself.

mod applying;
mod evidence;
mod judging;
pub mod scopes;

use crate::cluster::{Connection, Kinds};
use crate::config::{Config, Mode};
use crate::manifest::{self, Manifest, Problem};
use crate::observe::{Observer, RunEvent};
use crate::outcome::RunOutcome;
use tokio::time::Instant;

/// Why a run could not start. All of these exit 2: nothing was applied.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Load(#[from] manifest::LoadError),
    #[error("{}", manifest::render_problems(.0))]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Connect(#[from] crate::cluster::connect::ConnectError),
    #[error("failed to discover the cluster's API resources")]
    Discovery(#[source] kube::Error),
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
                .filter(|(k, v)| m.object.pointer(&format!("/metadata/labels/{}", manifest::escape_pointer(k))).and_then(|x| x.as_str()) != Some(v.as_str()))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            (!missing.is_empty()).then(|| {
                Problem::new(&m.file, Some(m.line), format!("{} lacks the --selector labels {}", m.display_name(), missing.join(",")))
                    .with_hint("every resource of a deploy must carry the selector's labels")
            })
        })
        .collect();
    if problems.is_empty() { Ok(manifests) } else { Err(RunError::Invalid(problems)) }
}

/// Run against a connected cluster.
pub async fn run(
    conn: &Connection,
    config: &Config,
    mut manifests: Vec<Manifest>,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let start = Instant::now();
    let kinds = Kinds::discover(&conn.client).await.map_err(RunError::Discovery)?;
    let lookup = |av: &str, kind: &str| kinds.scope(av, kind);
    let problems = manifest::validate_against(&manifests, &conn.default_namespace, lookup);
    if !problems.is_empty() {
        return Err(RunError::Invalid(problems));
    }
    manifest::resolve_namespaces(&mut manifests, &conn.default_namespace, lookup);
    observer.event(start.elapsed(), RunEvent::Loaded { resources: manifests.len() });

    let applied = match config.mode {
        Mode::Watch => applying::not_applied(&manifests, start),
        Mode::DryRun | Mode::Deploy => {
            let dry_run = config.mode == Mode::DryRun;
            match applying::apply_all(conn, kinds, &manifests, dry_run, config.timeout, start, observer).await {
                applying::Applied::Rejected(outcomes) | applying::Applied::DryRun(outcomes) => {
                    let outcome = RunOutcome::new(dry_run, start.elapsed().as_secs_f64(), outcomes);
                    return Ok(outcome);
                }
                applying::Applied::Ready { targets, kinds, rejected } => {
                    return Ok(judging::judge_all(conn, &kinds, &manifests, targets, rejected, config, start, observer).await);
                }
            }
        }
    };
    let kinds = Kinds::discover(&conn.client).await.map_err(RunError::Discovery)?;
    Ok(judging::judge_all(conn, &kinds, &manifests, applied, Vec::new(), config, start, observer).await)
}
