//! What the simulated kubelet and its container runtime remember about each pod: the
//! sandbox, every container's current and previous instance, the reason its last start
//! failed (the kubelet's reason cache), and the back-off and sync timers.

use super::backoff::Backoff;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use tokio::time::Instant;

/// One node's runtime: which images it has, its (serialised) image pulls, its addresses.
#[derive(Debug, Clone, Default)]
pub struct NodeState {
    /// Normalised references of the images pulled on this node.
    pub images: BTreeSet<String>,
    /// When the node's single pull slot frees up (the kubelet serialises pulls).
    pub pulls_free_at: Option<Instant>,
    /// Images a queued or running pull will have brought in, and when.
    pub arriving: HashMap<String, Instant>,
    pub host_ip: String,
    /// `10.244.1.` for the node's /24 pod range.
    pub pod_prefix: String,
    next_ip: u32,
}

impl NodeState {
    pub fn new(host_ip: String, pod_prefix: String) -> Self {
        NodeState {
            host_ip,
            pod_prefix,
            ..Self::default()
        }
    }

    /// The next pod IP of the node's range (`.2` upwards, reused after `.254`).
    pub fn allocate_ip(&mut self) -> String {
        let host = 2 + self.next_ip % 253;
        self.next_ip += 1;
        format!("{}{host}", self.pod_prefix)
    }
}

/// Why a container that is not running is waiting (the kubelet's reason cache entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub reason: String,
    /// Empty for reasons without a message.
    pub message: String,
}

impl Waiting {
    pub fn new(reason: &str, message: impl Into<String>) -> Self {
        Waiting {
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}

/// A container instance that has exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub id: String,
    pub exit_code: i32,
    pub reason: String,
    pub message: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub finished: Instant,
}

/// A running container instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub id: String,
    pub started_at: String,
    pub since: Instant,
    /// When it exits by itself, with its exit code and whether it was OOM-killed.
    pub exit: Option<(Instant, i32, bool)>,
    pub ready: bool,
    /// The next readiness probe, while it is not ready yet.
    pub next_probe: Option<Instant>,
    /// Time from start until the app answers probes healthily; `None` never.
    pub ready_after: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CState {
    /// Never created (or its last creation failed before the runtime made it).
    Fresh,
    Running(Run),
    Exited(Term),
}

/// One container of the pod, init containers included.
#[derive(Debug, Clone)]
pub struct Ctr {
    pub name: String,
    pub init: bool,
    /// An init container with `restartPolicy: Always`.
    pub sidecar: bool,
    pub state: CState,
    pub restart_count: u32,
    /// The instance before the current one, once it has exited.
    pub last: Option<Term>,
    pub waiting: Option<Waiting>,
    /// The runtime's image reference and image ID, known once the container was created.
    pub image: Option<(String, String)>,
}

impl Ctr {
    /// The events' field path: `spec.containers{web}` or `spec.initContainers{migrate}`.
    pub fn field_path(&self) -> String {
        let list = if self.init {
            "initContainers"
        } else {
            "containers"
        };
        format!("spec.{list}{{{}}}", self.name)
    }

    /// Its container spec in `pod`.
    pub fn spec<'p>(&self, pod: &'p Value) -> &'p Value {
        let list = if self.init {
            "initContainers"
        } else {
            "containers"
        };
        pod["spec"][list]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == self.name.as_str()))
            .unwrap_or(&Value::Null)
    }

    pub fn running(&self) -> Option<&Run> {
        match &self.state {
            CState::Running(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the container has been created at least once.
    pub fn ever_created(&self) -> bool {
        !matches!(self.state, CState::Fresh) || self.last.is_some()
    }
}

/// A pull in progress: the pod worker waits for it.
#[derive(Debug, Clone)]
pub struct Pull {
    pub pos: usize,
    pub image: String,
    pub began: Instant,
    pub done: Instant,
    pub took: Duration,
    pub error: Option<String>,
}

/// Everything the kubelet knows about one pod.
#[derive(Debug, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts (IP published, sandbox up, volumes mounted, stopped, finished) \
              each set at its own point of the sync; not the states of one machine"
)]
pub struct PodRuntime {
    pub uid: String,
    pub node: String,
    pub start_time: String,
    /// Init containers first, then regular ones, each in spec order.
    pub ctrs: Vec<Ctr>,
    pub ip: Option<String>,
    /// The IP shows in status once a sync has finished after the sandbox came up.
    pub ip_published: bool,
    pub sandbox_alive: bool,
    pub mounted: bool,
    pub mount_backoff: Backoff,
    pub pulling: Option<Pull>,
    /// When the pod worker syncs the pod next.
    pub next_sync: Option<Instant>,
    pub image_backoff: Backoff,
    /// The last pull error per image (`ErrImagePull: ...`), for the back-off message.
    pub pull_errors: HashMap<String, String>,
    /// Pull attempts per image, to walk a scenario's error list.
    pub pull_attempts: HashMap<String, usize>,
    pub crash_backoff: Backoff,
    /// When a deleted pod's containers have stopped and it is removed.
    pub remove_at: Option<Instant>,
    /// A deleted pod whose containers have stopped (it waits for its finalizers, if any).
    pub stopped: bool,
    /// Terminal (Succeeded/Failed): nothing runs or restarts any more.
    pub finished: bool,
}

impl PodRuntime {
    /// A pod the kubelet has just admitted.
    pub fn admit(pod: &Value, node: &str, now_ts: String, now: Instant) -> Self {
        let list = |k: &str, init: bool| -> Vec<Ctr> {
            pod["spec"][k]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| Ctr {
                    name: c["name"].as_str().unwrap_or_default().to_owned(),
                    init,
                    sidecar: init && c["restartPolicy"] == "Always",
                    state: CState::Fresh,
                    restart_count: 0,
                    last: None,
                    waiting: None,
                    image: None,
                })
                .collect()
        };
        let mut ctrs = list("initContainers", true);
        ctrs.extend(list("containers", false));
        PodRuntime {
            uid: pod["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            node: node.to_owned(),
            start_time: now_ts,
            ctrs,
            ip: None,
            ip_published: false,
            sandbox_alive: false,
            mounted: false,
            mount_backoff: Backoff::volumes(),
            pulling: None,
            next_sync: Some(now),
            image_backoff: Backoff::kubelet(),
            pull_errors: HashMap::new(),
            pull_attempts: HashMap::new(),
            crash_backoff: Backoff::kubelet(),
            remove_at: None,
            stopped: false,
            finished: false,
        }
    }

    /// The earliest timer: a container exit or probe, a pull finishing, a sync, a removal.
    pub fn next_due(&self) -> Option<Instant> {
        let runtime = self
            .ctrs
            .iter()
            .filter_map(Ctr::running)
            .flat_map(|r| [r.exit.map(|e| e.0), r.next_probe]);
        runtime
            .chain([
                self.pulling.as_ref().map(|p| p.done),
                self.next_sync,
                self.remove_at.filter(|_| !self.stopped),
            ])
            .flatten()
            .min()
    }

    /// `name_namespace(uid)`, how the kubelet names a pod in messages.
    pub fn pod_ref(&self, pod: &Value) -> String {
        let meta = &pod["metadata"];
        format!(
            "{}_{}({})",
            meta["name"].as_str().unwrap_or_default(),
            meta["namespace"].as_str().unwrap_or("default"),
            self.uid
        )
    }
}
