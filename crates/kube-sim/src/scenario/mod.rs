//! Scenarios: what the simulated cluster is (version, nodes), how images and containers
//! behave, which faults the API server injects, who may call it (tokens, RBAC), and a
//! timeline of literal objects to replay.
//! Read from a YAML file or built in Rust with [`ScenarioBuilder`].

mod auth;
mod builder;
mod duration;
mod image;
mod parse;
pub mod timeline;

pub use auth::{AuthSpec, TokenSpec};
pub use builder::ScenarioBuilder;
pub use duration::Dur;
pub use image::{Exit, ImageBehaviour, ImageTable, PullBehaviour, Readiness};
pub use parse::ScenarioError;
pub use timeline::TimelineError;

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// A Kubernetes minor version (`1.33`), which changes what the kubelet writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
}

impl KubeVersion {
    /// From 1.32 the ImagePullBackOff message carries the last pull error (kubernetes#127918).
    pub fn backoff_message_has_cause(self) -> bool {
        (self.major, self.minor) >= (1, 32)
    }

    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().trim_start_matches('v');
        let (major, minor) = s.split_once('.')?;
        let minor = minor.split('.').next()?;
        Some(KubeVersion {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One simulated node.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Cordoned: the scheduler places nothing here.
    #[serde(default)]
    pub unschedulable: bool,
}

/// Which API calls a fault applies to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultMatch {
    /// get, list, watch, create, update, patch, delete; any when absent.
    pub verb: Option<String>,
    /// Plural resource name, optionally with a subresource (`pods/log`); any when absent.
    pub resource: Option<String>,
    pub namespace: Option<String>,
    /// The first matching call it applies to (1-based); every call when absent.
    pub nth: Option<u32>,
    /// How many consecutive matching calls from `nth` on (default 1 when `nth` is set).
    pub count: Option<u32>,
}

/// What happens to a matching call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    #[serde(rename = "match", default)]
    pub matcher: FaultMatch,
    /// Answer with this HTTP status and a Status body instead of serving the call.
    pub status: Option<u16>,
    /// Message of the Status body.
    pub message: Option<String>,
    /// `Retry-After` header (whole seconds, rounded up).
    pub retry_after: Option<Dur>,
    /// Delay before the call is served.
    pub latency: Option<Dur>,
    /// End a watch after it has sent this many events.
    pub drop_after_events: Option<u32>,
    /// Answer a watch with an in-stream 410 Expired.
    #[serde(default)]
    pub expired: bool,
}

/// A step of the timeline: literal objects applied (status included) or deleted at an offset.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineStep {
    pub at: Duration,
    pub apply: Vec<Value>,
    pub delete: Vec<ObjectRef>,
}

/// Names an object to delete from the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: Option<String>,
    pub name: String,
}

/// A whole scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub kubernetes_version: KubeVersion,
    pub nodes: Vec<NodeSpec>,
    pub images: ImageTable,
    pub faults: Vec<Fault>,
    pub timeline: Vec<TimelineStep>,
    /// How long controllers take to react to a change (what makes status lag an apply).
    pub controller_delay: Duration,
    /// Watch history kept for resumption; older resourceVersions get 410 Expired.
    pub watch_history: usize,
    /// Bearer tokens and RBAC; off by default.
    pub auth: AuthSpec,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            kubernetes_version: KubeVersion {
                major: 1,
                minor: 33,
            },
            nodes: node_names(3),
            images: ImageTable::default(),
            faults: Vec::new(),
            timeline: Vec::new(),
            controller_delay: Duration::from_millis(100),
            watch_history: 10_000,
            auth: AuthSpec::default(),
        }
    }
}

impl Scenario {
    pub fn builder() -> ScenarioBuilder {
        ScenarioBuilder::default()
    }

    /// The first timeline object kube-sim could not replay literally, if any (entries
    /// numbered in time order).
    ///
    /// # Errors
    /// An object that is malformed or of a kind neither built in nor defined by an
    /// Established CRD earlier in the timeline.
    pub fn check_timeline(&self) -> Result<(), TimelineError> {
        let labels: Vec<usize> = (1..=self.timeline.len()).collect();
        timeline::check(&self.timeline, &labels)
    }

    /// Parse a scenario file's text; `file` names it in errors.
    pub fn from_yaml(file: &str, text: &str) -> Result<Self, ScenarioError> {
        parse::parse(file, text)
    }

    /// Read and parse a scenario file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            file: path.display().to_string(),
            source,
        })?;
        Self::from_yaml(&path.display().to_string(), &text)
    }
}

pub(crate) fn node_names(count: usize) -> Vec<NodeSpec> {
    (1..=count)
        .map(|i| NodeSpec {
            name: format!("sim-node-{i}"),
            labels: BTreeMap::new(),
            unschedulable: false,
        })
        .collect()
}
