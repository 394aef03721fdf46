//! Helm hooks' delete policies around their wave: the previous object is deleted before
//! it is created again (`before-hook-creation`, Helm's default), and the hook is deleted
//! once it has succeeded or failed when its policy asks.

use super::context::Context;
use super::outcomes;
use crate::cluster::Served;
use crate::cluster::remove::delete_and_wait;
use crate::manifest::Manifest;
use crate::phases::Step;
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::Outcome;
use crate::vocab::verdict::Verdict;
use crate::waves::delete_policy;
use std::time::Duration;

/// Longest wait for an old hook object to be gone.
const DELETE_WAIT: Duration = Duration::from_secs(60);

/// Deletes the previous objects of the wave's hooks that ask for it; returns the steps
/// still to apply and the hooks whose old object could not be removed (refused).
pub async fn before_creation(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &[Manifest],
    steps: &[Step],
) -> (Vec<Step>, Vec<Outcome>) {
    let mut keep = Vec::new();
    let mut refused = Vec::new();
    let wait = DELETE_WAIT.min(ctx.config.timeout);
    for step in steps {
        let m = &manifests[step.index];
        let asks = delete_policy(m, step.phase).is_some_and(|p| p.before_creation);
        let (Some((ar, ns)), true) = (served.address(m), asks) else {
            keep.push(step.clone());
            continue;
        };
        match delete_and_wait(&ctx.conn.client, &ar, ns, &m.name, wait).await {
            Ok(true) => {
                ctx.event(RunEvent::Note(format!(
                    "deleted the previous {} (Helm hook, before-hook-creation)",
                    m.display_name()
                )));
                keep.push(step.clone());
            }
            Ok(false) => keep.push(step.clone()),
            Err(e) => refused.push(outcomes::refused(
                m,
                format!(
                    "its previous object must go before it is created again (helm.sh/hook-delete-policy before-hook-creation), and could not be deleted: {}",
                    e.message
                ),
                ctx.seconds(),
            )),
        }
    }
    (keep, refused)
}

/// Deletes the wave's hooks whose policy asks for it given their verdict
/// (`hook-succeeded`, `hook-failed`); in the background, not waited for.
pub async fn after_verdict(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &[Manifest],
    steps: &[Step],
    outcomes: &[Outcome],
) {
    for step in steps {
        let m = &manifests[step.index];
        let Some(policy) = delete_policy(m, step.phase) else {
            continue;
        };
        let Some(verdict) = outcomes
            .iter()
            .find(|o| o.resource == m.id())
            .map(|o| o.verdict)
        else {
            continue;
        };
        let (asks, on) = match verdict {
            Verdict::Succeeded => (policy.on_success, "hook-succeeded"),
            Verdict::Failed => (policy.on_failure, "hook-failed"),
            Verdict::TimedOut | Verdict::Unfinished => (false, ""),
        };
        let Some((ar, ns)) = served.address(m).filter(|_| asks) else {
            continue;
        };
        let client = &ctx.conn.client;
        match crate::prune::requests::delete(client, &ar, ns, &m.name, "").await {
            Ok(()) => ctx.event(RunEvent::Note(format!(
                "deleted {} (Helm hook, {on})",
                m.display_name()
            ))),
            Err(e) => ctx.event(RunEvent::Warning(format!(
                "could not delete {} as its hook-delete-policy {on} asks: {}",
                m.display_name(),
                e.message
            ))),
        }
    }
}
