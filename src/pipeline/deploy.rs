//! `deploy`, `plan` (a dry run) and `watch`: discover what the cluster serves, validate the
//! manifests against it, look up their images, apply them in phases (or dry-run them, or
//! nothing for `watch`), then judge every resource, pruning beside with `--prune`.

use super::access::RegistryAccess;
use super::applying::{self, Applied};
use super::context::Context;
use super::error::RunError;
use super::judging::judge;
use super::preflight;
use super::pruning;
use crate::cluster::{Connection, Served};
use crate::config::{Config, Mode};
use crate::manifest::{self, Manifest};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::RunOutcome;

/// Discovery, the run's first request, bounded: a server that never answers ends the run
/// with a sentence saying so instead of holding it past its timeout.
pub async fn discover(conn: &Connection, timeout: std::time::Duration) -> Result<Served, RunError> {
    let limit = crate::cluster::REQUEST_TIMEOUT.min(timeout);
    match tokio::time::timeout(limit, Served::discover(&conn.client)).await {
        Ok(Ok(served)) => Ok(served),
        Ok(Err(e)) => Err(RunError::Discovery(crate::cluster::describe_failure(
            &conn.server,
            &e,
        ))),
        Err(_) => Err(RunError::Discovery(format!(
            "the API server at {} accepted the connection but did not answer discovery within {}s",
            conn.server,
            limit.as_secs()
        ))),
    }
}

/// Deploy, dry-run or watch `manifests` on a connected cluster, as `config.mode` says.
pub async fn deploy(
    conn: &Connection,
    config: &Config,
    mut manifests: Vec<Manifest>,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let mut ctx = Context::new(conn, config, access, observer);
    let served = discover(conn, config.timeout).await?;
    let lookup = |av: &str, kind: &str| served.scope(av, kind);
    let problems = manifest::validate_against(&manifests, &conn.default_namespace, lookup);
    if !problems.is_empty() {
        return Err(RunError::Invalid(problems));
    }
    manifest::resolve_namespaces(&mut manifests, &conn.default_namespace, lookup);
    let applies = matches!(config.mode, Mode::Deploy | Mode::DryRun);
    let prune = match &config.prune {
        Some(p) if applies => Some(pruning::prepare(&mut ctx, &served, p, &mut manifests).await?),
        _ => None,
    };
    ctx.event(RunEvent::Loaded {
        resources: manifests.len(),
    });
    if !applies {
        // `restart` and `run` have their own entry points; judged as they stand here.
        let targets = applying::not_applied(&manifests, ctx.start);
        return Ok(judge(&mut ctx, &served, &manifests, targets, Vec::new(), None).await);
    }
    let dry_run = config.mode == Mode::DryRun;
    if let Some(mut stopped) = preflight::stop_before_apply(&mut ctx, &manifests).await? {
        stopped.dry_run = dry_run;
        return Ok(stopped);
    }
    match applying::apply_all(&mut ctx, served, &manifests, prune.as_ref()).await {
        Applied::Rejected(outcomes) => Ok(RunOutcome::new(dry_run, ctx.seconds(), outcomes)),
        Applied::DryRun(mut outcomes) => {
            if let Some(p) = &prune {
                outcomes.extend(p.plan(&mut ctx, &manifests).await);
            }
            Ok(RunOutcome::new(dry_run, ctx.seconds(), outcomes))
        }
        Applied::Ready {
            targets,
            served,
            rejected,
        } => {
            // The members that left the manifests are deleted once every manifest was
            // applied, never after a rejection.
            let deleting = match &prune {
                Some(p) if rejected.is_empty() => {
                    Some(p.delete(&mut ctx, &served, &manifests).await)
                }
                Some(_) => {
                    ctx.event(RunEvent::Warning(format!(
                        "nothing was pruned: {} of the manifests were refused by the API server",
                        rejected.len()
                    )));
                    None
                }
                None => None,
            };
            Ok(judge(&mut ctx, &served, &manifests, targets, rejected, deleting).await)
        }
    }
}
