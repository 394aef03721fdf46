//! Starting, restarting and observing one container the way `startContainer` and the
//! prober do it: pull (or back off), build the environment, create, start; exits and
//! readiness probes as runtime events. Event reasons and messages are the kubelet's.

use super::config_refs::env_error;
use super::ids::{go_duration, hex64};
use super::probes;
use super::pull::{self, IMAGE_SIZE_BYTES, ImageRef};
use super::runtime::{CState, Ctr, NodeState, PodRuntime, Pull, Run, Term, Waiting};
use crate::engine::World;
use crate::events::EventSpec;
use crate::scenario::{ImageBehaviour, PullBehaviour, Readiness};
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;

/// The PLEG notices runtime changes on its next relist, which triggers a pod sync.
pub const RELIST: Duration = Duration::from_secs(1);

/// What a reconcile of one pod works with.
pub struct Cx<'c, 'w> {
    pub world: &'c mut World<'w>,
    pub pod: &'c Value,
    pub node: &'c mut NodeState,
    pub node_name: &'c str,
    pub now: Instant,
}

impl Cx<'_, '_> {
    /// Record a kubelet event about the pod (or one of its containers).
    pub fn event(&mut self, c: Option<&Ctr>, type_: &str, reason: &str, message: String) {
        self.world.event(EventSpec {
            involved: self.pod,
            field_path: c.map(Ctr::field_path),
            type_,
            reason,
            message,
            component: None,
            host: Some(self.node_name),
        });
    }

    pub fn namespace(&self) -> &str {
        self.pod["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
    }

    pub fn pod_name(&self) -> &str {
        self.pod["metadata"]["name"].as_str().unwrap_or_default()
    }

    /// How a container of `image` started now behaves.
    pub fn behaviour(&self, image: &str) -> ImageBehaviour {
        let elapsed = self.world.elapsed();
        self.world.scenario.images.lookup_at(image, elapsed).clone()
    }
}

/// What a sync did, which decides when the pod worker syncs next.
#[derive(Debug, Default, Clone, Copy)]
pub struct Flags {
    /// A sandbox or container was started or stopped (the PLEG will report it).
    pub runtime_changed: bool,
    /// A start attempt failed anew (not merely found backing off).
    pub new_failure: bool,
}

/// Remember why the container could not start; true if that is a new reason (which the
/// runtime's next relist would surface right away).
fn fail(rt: &mut PodRuntime, pos: usize, reason: &str, message: String) -> bool {
    let previous = rt.ctrs[pos].waiting.replace(Waiting::new(reason, message));
    previous.is_none_or(|w| w.reason != reason)
}

/// `EnsureImageExists` and the rest of `startContainer`. Returns false if the pod worker
/// is now blocked on a pull.
pub fn start(rt: &mut PodRuntime, pos: usize, cx: &mut Cx<'_, '_>, flags: &mut Flags) -> bool {
    let c = rt.ctrs[pos].clone();
    let spec = c.spec(cx.pod);
    let image = spec["image"].as_str().unwrap_or_default().to_owned();
    let behaviour = cx.behaviour(&image);
    let parsed = match ImageRef::parse(&image) {
        Ok(_) if behaviour.pull == PullBehaviour::InvalidName => {
            Err("invalid reference format".to_owned())
        }
        other => other,
    };
    let r = match parsed {
        Ok(r) => r,
        Err(e) => {
            let msg = format!(
                "Failed to apply default image tag \"{image}\": couldn't parse image name \"{image}\": {e}"
            );
            cx.event(Some(&c), "Warning", "InspectFailed", msg.clone());
            cx.event(
                Some(&c),
                "Warning",
                "Failed",
                "Error: InvalidImageName".into(),
            );
            flags.new_failure |= fail(rt, pos, "InvalidImageName", msg);
            return true;
        }
    };
    let present = cx.node.images.contains(&r.normalized());
    let policy = match spec["imagePullPolicy"].as_str() {
        Some(p) => p.to_owned(),
        None if r.tag.as_deref() == Some("latest") && r.digest.is_none() => "Always".into(),
        None => "IfNotPresent".into(),
    };
    let must_pull = match policy.as_str() {
        "Always" => true,
        "Never" => false,
        _ => !present,
    };
    if !must_pull {
        if present {
            let msg = format!("Container image \"{image}\" already present on machine");
            cx.event(Some(&c), "Normal", "Pulled", msg);
            create_and_start(rt, pos, cx, flags);
        } else {
            let msg =
                format!("Container image \"{image}\" is not present with pull policy of Never");
            cx.event(Some(&c), "Warning", "ErrImageNeverPull", msg.clone());
            cx.event(
                Some(&c),
                "Warning",
                "Failed",
                "Error: ErrImageNeverPull".into(),
            );
            flags.new_failure |= fail(rt, pos, "ErrImageNeverPull", msg);
        }
        return true;
    }
    if rt.image_backoff.in_backoff_since_update(&image, cx.now) {
        let base = format!("Back-off pulling image \"{image}\"");
        cx.event(Some(&c), "Normal", "BackOff", base.clone());
        cx.event(
            Some(&c),
            "Warning",
            "Failed",
            "Error: ImagePullBackOff".into(),
        );
        let message = match rt.pull_errors.get(&image) {
            Some(cause)
                if cx
                    .world
                    .scenario
                    .kubernetes_version
                    .backoff_message_has_cause() =>
            {
                format!("{base}: {cause}")
            }
            _ => base,
        };
        let _ = fail(rt, pos, "ImagePullBackOff", message);
        return true;
    }
    rt.pull_errors.remove(&image);
    cx.event(
        Some(&c),
        "Normal",
        "Pulling",
        format!("Pulling image \"{image}\""),
    );
    let begin = cx
        .node
        .pulls_free_at
        .filter(|t| *t > cx.now)
        .unwrap_or(cx.now);
    // A pull queued behind one of the same image finds it present when its turn comes.
    let normalized = r.normalized();
    let present_then = present
        || cx
            .node
            .arriving
            .get(&normalized)
            .is_some_and(|t| *t <= begin);
    let n = rt.pull_attempts.entry(image.clone()).or_insert(0);
    let outcome = pull::attempt(&behaviour.pull, *n, &r, present_then);
    *n += 1;
    let done = begin + outcome.took;
    cx.node.pulls_free_at = Some(done);
    if outcome.error.is_none() {
        cx.node.arriving.entry(normalized).or_insert(done);
    }
    rt.pulling = Some(Pull {
        pos,
        image,
        began: cx.now,
        done,
        took: outcome.took,
        error: outcome.error,
    });
    false
}

/// The pull the pod worker was waiting for has ended.
pub fn finish_pull(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>, flags: &mut Flags) -> usize {
    let p = rt.pulling.take().expect("a pull in progress");
    let c = rt.ctrs[p.pos].clone();
    let image = &p.image;
    match &p.error {
        None => {
            let msg = format!(
                "Successfully pulled image \"{image}\" in {} ({} including waiting). Image size: {IMAGE_SIZE_BYTES} bytes.",
                go_duration(trunc_ms(p.took)),
                go_duration(trunc_ms(p.done - p.began))
            );
            cx.event(Some(&c), "Normal", "Pulled", msg);
            if let Ok(r) = ImageRef::parse(image) {
                cx.node.images.insert(r.normalized());
            }
            create_and_start(rt, p.pos, cx, flags);
        }
        Some(e) => {
            cx.event(
                Some(&c),
                "Warning",
                "Failed",
                format!("Failed to pull image \"{image}\": {e}"),
            );
            rt.image_backoff.next(image, cx.now);
            rt.pull_errors
                .insert(image.clone(), format!("ErrImagePull: {e}"));
            cx.event(Some(&c), "Warning", "Failed", "Error: ErrImagePull".into());
            flags.new_failure |= fail(rt, p.pos, "ErrImagePull", e.clone());
        }
    }
    p.pos
}

fn trunc_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Build the environment, create the container and start it.
fn create_and_start(rt: &mut PodRuntime, pos: usize, cx: &mut Cx<'_, '_>, flags: &mut Flags) {
    let c = rt.ctrs[pos].clone();
    let spec = c.spec(cx.pod).clone();
    if let Some(err) = env_error(cx.world, cx.namespace(), &spec) {
        cx.event(Some(&c), "Warning", "Failed", format!("Error: {err}"));
        flags.new_failure |= fail(rt, pos, "CreateContainerConfigError", err);
        return;
    }
    let image = spec["image"].as_str().unwrap_or_default();
    let behaviour = cx.behaviour(image);
    let attempt = if c.ever_created() {
        c.restart_count + 1
    } else {
        0
    };
    let id = hex64(&format!("{}/{}/{attempt}", rt.uid, c.name));
    cx.event(
        Some(&c),
        "Normal",
        "Created",
        format!("Created container: {}", c.name),
    );
    let previous = match &c.state {
        CState::Exited(t) => Some(t.clone()),
        _ => c.last.clone(),
    };
    let now_ts = cx.world.timestamp();
    let ctr = &mut rt.ctrs[pos];
    ctr.image = ImageRef::parse(image)
        .ok()
        .map(|r| (r.normalized(), r.image_id()));
    ctr.last = previous;
    ctr.restart_count = attempt;
    flags.runtime_changed = true;
    if let Some(msg) = &behaviour.start_error {
        ctr.state = CState::Exited(Term {
            id,
            exit_code: 128,
            reason: "StartError".into(),
            message: Some(msg.clone()),
            started_at: "1970-01-01T00:00:00Z".into(),
            finished_at: now_ts,
            finished: cx.now,
        });
        ctr.waiting = Some(Waiting::new("RunContainerError", msg.clone()));
        cx.event(Some(&c), "Warning", "Failed", format!("Error: {msg}"));
        return;
    }
    let probe = probes::readiness(&spec);
    let exit = match &behaviour.exit {
        Some(e) => Some((cx.now + e.after, e.code, e.oom)),
        // An init container whose image does not say how it ends completes after a second.
        None if c.init && !c.sidecar => Some((cx.now + Duration::from_secs(1), 0, false)),
        None => None,
    };
    ctr.state = CState::Running(Run {
        id,
        started_at: now_ts,
        since: cx.now,
        exit,
        ready: probe.is_none() && (c.sidecar || !c.init),
        next_probe: probe.as_ref().map(|p| cx.now + p.initial_delay),
        ready_after: match behaviour.ready {
            Readiness::After(d) => Some(d),
            Readiness::Never => None,
        },
    });
    ctr.waiting = None;
    cx.event(
        Some(&c),
        "Normal",
        "Started",
        format!("Started container {}", c.name),
    );
    let (ns, pod) = (cx.namespace().to_owned(), cx.pod_name().to_owned());
    cx.world
        .logs
        .start_instance(&ns, &pod, &c.name, &behaviour.logs);
}

/// `doBackOff`: restart an exited container now, or report it backing off.
pub fn restart_or_back_off(
    rt: &mut PodRuntime,
    pos: usize,
    cx: &mut Cx<'_, '_>,
    flags: &mut Flags,
) -> bool {
    let c = rt.ctrs[pos].clone();
    let CState::Exited(t) = &c.state else {
        return true;
    };
    if rt
        .crash_backoff
        .in_backoff_since(&c.name, t.finished, cx.now)
    {
        let pod_ref = rt.pod_ref(cx.pod);
        let msg = format!(
            "Back-off restarting failed container {} in pod {pod_ref}",
            c.name
        );
        cx.event(Some(&c), "Warning", "BackOff", msg);
        let delay = go_duration(rt.crash_backoff.get(&c.name));
        let why = format!(
            "back-off {delay} restarting failed container={} pod={pod_ref}",
            c.name
        );
        let _ = fail(rt, pos, "CrashLoopBackOff", why);
        return true;
    }
    rt.crash_backoff.next(&c.name, cx.now);
    start(rt, pos, cx, flags)
}
