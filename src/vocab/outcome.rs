//! What a run found out, as plain data: the input of every renderer (terminal, JSON report,
//! check run, job summary), so that all of them tell the same story.

use crate::vocab::verdict::{Reason, RunResult, Verdict};
use serde::Serialize;

/// Which resource, as the manifests name it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ResourceId {
    pub api_version: String,
    pub kind: String,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: String,
}

impl ResourceId {
    /// `Deployment/web` (or `Deployment/shop/web` when `with_namespace`).
    pub fn display(&self, with_namespace: bool) -> String {
        match (&self.namespace, with_namespace) {
            (Some(ns), true) => format!("{}/{}/{}", self.kind, ns, self.name),
            _ => format!("{}/{}", self.kind, self.name),
        }
    }
}

/// A place in a manifest file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceSpan {
    /// The path as the user gave it (or `-` for stdin), relative where possible.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

/// The container a failure is about, when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerRef {
    pub pod: String,
    pub container: String,
    pub image: Option<String>,
}

/// The last lines a container wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogTail {
    pub pod: String,
    pub container: String,
    /// `true` when these are the logs of the previous (crashed) instance.
    pub previous: bool,
    pub lines: Vec<String>,
    /// Why the log could not be read (the API server refused it), when it could not.
    pub unreadable: Option<String>,
}

/// One Kubernetes event, reduced to what a reader needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventLine {
    /// `Warning` or `Normal`.
    pub kind: String,
    pub reason: String,
    pub message: String,
    /// The object the event is about, e.g. `Pod/web-7d4b9c-x2x9q`.
    pub object: String,
    pub count: u32,
}

/// The verdict on one resource, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub resource: ResourceId,
    pub verdict: Verdict,
    /// Set for failed and timed-out resources.
    pub reason: Option<Reason>,
    /// One or two sentences: what happened.
    pub message: String,
    /// Where the resource is declared.
    pub source: Option<SourceSpan>,
    /// The file a rendered document came from (helm's `# Source:`, kustomize's origin),
    /// when the manifests were rendered before deploy-action read them.
    pub origin: Option<String>,
    /// Where the failure points: the `image:` line for image reasons, else the document.
    pub annotation_source: Option<SourceSpan>,
    pub container: Option<ContainerRef>,
    /// Seconds from the apply to the verdict.
    pub seconds: f64,
    pub events: Vec<EventLine>,
    pub logs: Option<LogTail>,
    /// What the apply does (dry run) or did to the live object; `None` when not known
    /// (`watch`, `check`, or the server could not be asked).
    pub change: Option<Change>,
    /// The wave it was applied in (`wave 2 of 3: helm pre-install/pre-upgrade hooks`),
    /// when the deploy had more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave: Option<String>,
}

/// What applying a manifest changes in the cluster: the plan of a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Change {
    /// There is no live object: it is created.
    Created,
    /// The live object differs from the server's dry-run result in these fields.
    Changed { fields: Vec<FieldChange> },
    /// The apply changes nothing this field manager sets.
    Unchanged,
    /// In the apply set, no longer in the manifests: deleted by `--prune`.
    Pruned,
    /// These fields cannot change in place, and the object asks to be replaced
    /// (`deploy-action.io/replace`): deleted and created again.
    Replaced { fields: Vec<String> },
}

impl Change {
    /// The plan's word for it, as the report and the check run print it.
    pub fn word(&self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Changed { .. } => "changed",
            Change::Unchanged => "unchanged",
            Change::Pruned => "pruned",
            Change::Replaced { .. } => "replaced",
        }
    }
}

/// One field the apply changes. Values are rendered as compact JSON; a Secret's values
/// are never kept, only `(changed)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// The field's path, e.g. `spec.template.spec.containers[name=web].image`.
    pub path: String,
    /// `None` when the live object does not set it.
    pub before: Option<String>,
    /// `None` when the apply removes it.
    pub after: Option<String>,
}

/// What `check` found in the registries, image by distinct image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ImageTally {
    /// Distinct images named by the manifests.
    pub images: usize,
    /// The registry says they do not exist (or the reference is invalid).
    pub missing: usize,
    /// The registry could not be asked or would not say (denied, unreachable).
    pub unconfirmed: usize,
    /// `false` with `--image-preflight off`: nothing was asked.
    pub looked_up: bool,
}

/// The cluster a run acted on, as its connection named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterPlace {
    pub context: Option<String>,
    pub server: String,
    pub namespace: String,
}

/// A warning about the manifests that changes no verdict, at the line it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notice {
    pub source: SourceSpan,
    pub message: String,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    pub result: RunResult,
    pub dry_run: bool,
    /// Set by `check` (no cluster): the run is about images, not a deploy.
    pub images: Option<ImageTally>,
    /// Seconds the run took, start to verdict.
    pub seconds: f64,
    pub outcomes: Vec<Outcome>,
    /// What the user should know that changes no verdict, at a manifest line (a `replicas`
    /// an autoscaler overrides).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Notice>,
    /// Where the run acted (absent for `check`, which needs no cluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterPlace>,
    /// When the run started, by the runner's clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<jiff::Timestamp>,
    /// What a success did to the resources, for the check run's title: `deployed`,
    /// `restarted`, `completed` (see [`Mode::done`](crate::config::Mode::done)).
    #[serde(skip)]
    pub done: &'static str,
}

impl RunOutcome {
    pub fn new(dry_run: bool, seconds: f64, outcomes: Vec<Outcome>) -> Self {
        let result = RunResult::from_verdicts(outcomes.iter().map(|o| o.verdict));
        RunOutcome {
            result,
            dry_run,
            images: None,
            seconds,
            outcomes,
            notices: Vec::new(),
            cluster: None,
            started_at: None,
            done: "deployed",
        }
    }

    /// This run as `check`'s: what the registries said of its images.
    pub fn with_images(mut self, tally: ImageTally) -> Self {
        self.images = Some(tally);
        self
    }

    /// Resources `--prune` deletes (or would delete): counted apart from what is applied.
    pub fn pruned(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.change == Some(Change::Pruned))
            .count()
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.verdict == verdict)
            .count()
    }
}
