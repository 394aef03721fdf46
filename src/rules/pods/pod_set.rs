//! The pods of one workload revision taken together: whether they are doomed (by the
//! workload's own policy) and, if not, what is holding them up, in one human sentence.

use crate::rules::assessment::Assessment;
use crate::rules::pods::pod_failure::Doom;
use crate::rules::pods::pod_state::{PodState, finished, pod_state_in};
use crate::rules::snapshot::Snapshot;
use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::Pod;
use std::sync::Arc;

/// `1 new pod`, `3 new pods`, `2 pods of the current template`: `noun` names one pod.
fn pods(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {}", noun.replacen("pod", "pods", 1))
    }
}

/// Dooms that belong to the image rather than to the pod: every node pulling the same
/// reference from the same registry gets the same answer.
const IMAGE_DOOMS: [Reason; 3] = [
    Reason::ImageNotFound,
    Reason::ImageUnauthorized,
    Reason::InvalidImageName,
];

/// How many doomed pods it takes to fail a workload (krane's rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoomPolicy {
    /// Every live pod (Deployment's new ReplicaSet, ReplicaSet, Job): one bad node or
    /// one bad shard is not proof against the rollout.
    All,
    /// Any pod (StatefulSet update revision, DaemonSet current template): ordered rollouts
    /// stop at the first bad pod, so waiting for the rest would wait forever.
    Any,
}

/// What holds a set of pods up, ready to be appended to a workload's progress message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocker {
    pub reason: Reason,
    pub detail: String,
    pub container: Option<ContainerRef>,
}

/// What a workload rule reads of one pod: a pure function of the pod, its Events and the
/// registry views, so the snapshot keeps it until one of those changes
/// ([`Snapshot::pod_readings`]). A Deployment is assessed again at each change of any of
/// its pods, and each assessment read all of them as k8s-openapi Pods. Most pods of a
/// deploy end [`PodReading::Ready`], which allocates nothing, so the readings kept for a
/// whole run cost a ready pod only its slot (a first version that kept every pod's
/// images cost 9 MiB at 10,000 pods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodReading {
    /// Ready, not finished, not being deleted, with every image on its node.
    Ready,
    /// Any other pod.
    Other(Arc<Reading>),
}

/// A [`PodReading`] other than ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// Phase Succeeded or Failed.
    finished: bool,
    /// Where it stands; `None` once it is being deleted (a terminating pod counts for no
    /// revision, so nothing asks).
    state: Option<PodState>,
    /// The containers whose image the node does not have yet (no imageID in their
    /// status), by name, with the image their spec names.
    lacking: Box<[(String, Option<String>)]>,
}

static READY: PodState = PodState::Ready;

impl PodReading {
    pub fn of(pod: &Pod, snapshot: &Snapshot) -> Self {
        let deleting = pod.metadata.deletion_timestamp.is_some();
        let reading = Reading {
            finished: finished(pod),
            state: (!deleting).then(|| pod_state_in(pod, snapshot)),
            lacking: if deleting {
                Box::default()
            } else {
                lacking_images(pod)
            },
        };
        if !reading.finished && reading.state == Some(PodState::Ready) && reading.lacking.is_empty()
        {
            PodReading::Ready
        } else {
            PodReading::Other(Arc::new(reading))
        }
    }

    /// Whether it was read from the pod's Events or the registry views too, and may
    /// change with them: anything but [`PodReading::Ready`], which [`PodReading::of`] makes
    /// only from a pod whose own Ready condition says so ([`pod_state_in`] reads no Event
    /// then) and whose node has every image.
    pub fn reads_evidence(&self) -> bool {
        !matches!(self, PodReading::Ready)
    }

    /// Phase Succeeded or Failed.
    pub fn finished(&self) -> bool {
        match self {
            PodReading::Ready => false,
            PodReading::Other(r) => r.finished,
        }
    }

    /// `metadata.deletionTimestamp` is set.
    pub fn deleting(&self) -> bool {
        self.state().is_none()
    }

    /// Where it stands, unless it is being deleted.
    pub fn state(&self) -> Option<&PodState> {
        match self {
            PodReading::Ready => Some(&READY),
            PodReading::Other(r) => r.state.as_ref(),
        }
    }

    fn lacking(&self) -> &[(String, Option<String>)] {
        match self {
            PodReading::Ready => &[],
            PodReading::Other(r) => &r.lacking,
        }
    }
}

/// The live pods (not terminating, not finished) of one revision, classified.
#[derive(Debug, Clone, Default)]
pub struct PodSet {
    live: Vec<PodReading>,
}

impl PodSet {
    pub fn new(pods: &[Pod], snapshot: &Snapshot) -> Self {
        Self::of(pods.iter().map(|p| PodReading::of(p, snapshot)).collect())
    }

    /// The set of pods already read ([`Snapshot::pod_readings`]).
    pub fn of(mut live: Vec<PodReading>) -> Self {
        live.retain(|r| r.state().is_some_and(|s| !s.is_terminal()));
        PodSet { live }
    }

    fn states(&self) -> impl Iterator<Item = &PodState> + Clone {
        self.live.iter().filter_map(PodReading::state)
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// `noun` is singular (`new pod`); it is counted as the pods are.
    /// A Failed assessment when the doomed pods meet `policy`, e.g.
    /// `1 of 3 pods crash looping: container web exited with code 3 (OOMKilled), ...`.
    pub fn failure(&self, policy: DoomPolicy, noun: &str) -> Option<Assessment> {
        let doomed: Vec<_> = self
            .states()
            .filter_map(|s| match s {
                PodState::Doomed(d) => Some(d),
                _ => None,
            })
            .collect();
        let all = doomed.len() == self.len();
        let (first, revision_wide) = match policy {
            DoomPolicy::Any => (*doomed.first()?, false),
            DoomPolicy::All if all => (*doomed.first()?, false),
            // krane waits for every pod to be doomed because one bad node proves little.
            // An image is different: the pods of one revision share the template, so when
            // the doomed image is the one every live pod waits for (no node has it), the
            // other pods are bound to hit the same registry answer.
            DoomPolicy::All => (
                *doomed
                    .iter()
                    .find(|d| IMAGE_DOOMS.contains(&d.reason) && self.all_lack_image(d))?,
                true,
            ),
        };
        let same = doomed.iter().filter(|d| d.reason == first.reason).count();
        let mut message = format!(
            "{same} of {} {}: {}",
            pods(self.len(), noun),
            first.phrase(same == 1),
            first.detail
        );
        if revision_wide {
            message.push_str(&format!(
                "; all {} use this image and none has it yet",
                self.len()
            ));
        }
        Some(
            Assessment::failed(first.reason, message).with_container(Some(first.container.clone())),
        )
    }

    /// The most telling reason some pods are not ready yet, if any are not.
    pub fn blocker(&self, noun: &str) -> Option<Blocker> {
        let (best, state) = self
            .states()
            .filter_map(|s| rank(s).map(|r| (r, s)))
            .min_by_key(|(r, _)| *r)?;
        let alike = self.states().filter(|s| rank(s) == Some(best)).count();
        let summary = match state {
            PodState::Doomed(d) => d.phrase(alike == 1),
            PodState::Pulling(_) if alike == 1 => "waiting for its image",
            PodState::Pulling(_) => "waiting for their image",
            PodState::Unschedulable { .. } => "unschedulable",
            PodState::ReadinessFailing { .. } => "not ready",
            _ => "starting",
        };
        Some(Blocker {
            reason: state.pending_reason(),
            detail: format!(
                "{alike} of {} {summary}: {}",
                pods(self.len(), noun),
                state.detail()
            ),
            container: state.container(),
        })
    }
}

impl PodSet {
    /// Every live pod runs the doomed container with the same image, and no node has it.
    fn all_lack_image(&self, doom: &Doom) -> bool {
        let Some(image) = doom.container.image.as_deref() else {
            return false;
        };
        self.live.iter().all(|pod| {
            pod.lacking()
                .iter()
                .any(|(c, i)| *c == doom.container.container && i.as_deref() == Some(image))
        })
    }
}

/// The containers (init or not) whose image is not on the node (no container status with
/// a non-empty imageID), with their spec image.
fn lacking_images(pod: &Pod) -> Box<[(String, Option<String>)]> {
    let status = pod.status.as_ref();
    let statuses: Vec<_> = status
        .into_iter()
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .chain(s.container_statuses.iter())
                .flatten()
        })
        .collect();
    let spec = pod.spec.as_ref();
    spec.into_iter()
        .flat_map(|s| s.init_containers.iter().flatten().chain(&s.containers))
        .filter(|c| {
            !statuses
                .iter()
                .any(|cs| cs.name == c.name && !cs.image_id.is_empty())
        })
        .map(|c| (c.name.clone(), c.image.clone()))
        .collect()
}

/// Which pod explains a wait best: a hopeless one first, then a named hold-up.
fn rank(state: &PodState) -> Option<u8> {
    match state {
        PodState::Doomed(_) => Some(0),
        PodState::Pulling(_) => Some(1),
        PodState::Unschedulable { .. } => Some(2),
        PodState::ReadinessFailing { .. } => Some(3),
        PodState::Starting { .. } => Some(4),
        PodState::Ready | PodState::Completed | PodState::Terminated { .. } => None,
    }
}

/// A Pending assessment: the workload's progress, then what holds it up.
pub fn pending(progress: String, blocker: Option<Blocker>) -> Assessment {
    match blocker {
        Some(b) => Assessment::pending(b.reason, format!("{progress}; {}", b.detail))
            .with_container(b.container),
        None => Assessment::not_ready(progress),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use crate::rules::snapshot::typed;
    use serde_json::{Value, json};

    fn set(statuses: Vec<Value>) -> PodSet {
        let pods: Vec<Pod> = statuses
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                typed(&fixtures::rs_pod(
                    &format!("web-7d4b9c-{i}"),
                    "rs-uid-2",
                    "7d4b9c",
                    &s,
                ))
                .unwrap()
            })
            .collect();
        PodSet::new(&pods, &Snapshot::new())
    }

    #[test]
    fn all_policy_needs_every_live_pod_doomed_and_any_needs_one() {
        let crash = || fixtures::crash_loop_status(3, "OOMKilled", 4);
        let partial = set(vec![
            crash(),
            fixtures::ready_status(),
            fixtures::ready_status(),
        ]);
        assert_eq!(partial.failure(DoomPolicy::All, "new pod"), None);
        let failed = partial.failure(DoomPolicy::Any, "pod").unwrap();
        assert_eq!(
            failed.message(),
            "1 of 3 pods crash looping: container web exited with code 3 (OOMKilled), restarted 4 times"
        );
        assert_eq!(failed.container().unwrap().pod, "web-7d4b9c-0");

        let all = set(vec![crash(), crash()])
            .failure(DoomPolicy::All, "new pod")
            .unwrap();
        assert_eq!(all.reason(), Some(Reason::CrashLoop));
        assert!(
            all.message().starts_with("2 of 2 new pods crash looping"),
            "{}",
            all.message()
        );
    }

    #[test]
    fn finished_and_terminating_pods_do_not_count() {
        let evicted = json!({"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."});
        let s = set(vec![fixtures::crash_loop_status(1, "Error", 2), evicted]);
        assert_eq!(s.len(), 1);
        assert!(s.failure(DoomPolicy::All, "pod").is_some());

        let mut leaving = fixtures::rs_pod(
            "web-7d4b9c-z",
            "rs-uid-2",
            "7d4b9c",
            &fixtures::crash_loop_status(1, "Error", 2),
        );
        leaving["metadata"]["deletionTimestamp"] = json!("2025-03-04T10:20:00Z");
        leaving["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        assert!(PodSet::new(&[typed(&leaving).unwrap()], &Snapshot::new()).is_empty());
    }

    #[test]
    fn the_blocker_is_the_most_telling_pod_with_its_reason() {
        let s = set(vec![
            fixtures::running_not_ready_status(),
            fixtures::unschedulable_status(),
            fixtures::ready_status(),
        ]);
        let b = s.blocker("new pod").unwrap();
        assert_eq!(b.reason, Reason::Unschedulable);
        assert!(
            b.detail
                .starts_with("1 of 3 new pods unschedulable: 0/3 nodes"),
            "{}",
            b.detail
        );
        let p = pending("2/3 replicas updated, 1 available".to_owned(), Some(b));
        assert!(
            p.message()
                .starts_with("2/3 replicas updated, 1 available; 1 of 3 new pods unschedulable")
        );
        assert_eq!(set(vec![fixtures::ready_status()]).blocker("pod"), None);
    }
}
