//! The Rust equivalent of a scenario file, for tests.

use super::image::ImageBehaviour;
use super::{
    Fault, KubeVersion, NodeSpec, Scenario, TimelineError, TimelineStep, TokenSpec, node_names,
};
use serde_json::Value;
use std::time::Duration;

/// Builds a [`Scenario`] step by step; anything not set keeps the file format's default.
#[derive(Debug, Clone, Default)]
pub struct ScenarioBuilder {
    scenario: Scenario,
}

impl ScenarioBuilder {
    /// `"1.31"`, `"1.33"`, ...
    ///
    /// # Panics
    /// On a string that is not a version.
    pub fn kubernetes_version(mut self, version: &str) -> Self {
        self.scenario.kubernetes_version =
            KubeVersion::parse(version).expect("a version such as \"1.33\"");
        self
    }

    pub fn nodes(mut self, count: usize) -> Self {
        self.scenario.nodes = node_names(count);
        self
    }

    pub fn node(mut self, node: NodeSpec) -> Self {
        self.scenario.nodes.push(node);
        self
    }

    pub fn no_nodes(mut self) -> Self {
        self.scenario.nodes.clear();
        self
    }

    pub fn default_image(mut self, behaviour: ImageBehaviour) -> Self {
        self.scenario.images.default = behaviour;
        self
    }

    /// Behaviour for an exact reference or a glob.
    pub fn image(mut self, reference: &str, behaviour: ImageBehaviour) -> Self {
        self.scenario
            .images
            .rules
            .push((reference.to_owned(), behaviour));
        self
    }

    pub fn fault(mut self, fault: Fault) -> Self {
        self.scenario.faults.push(fault);
        self
    }

    /// Apply literal objects (status included) at `at`; controllers leave them alone.
    pub fn at(mut self, at: Duration, objects: Vec<Value>) -> Self {
        self.scenario.timeline.push(TimelineStep {
            at,
            apply: objects,
            delete: Vec::new(),
        });
        self.scenario.timeline.sort_by_key(|s| s.at);
        self
    }

    pub fn controller_delay(mut self, delay: Duration) -> Self {
        self.scenario.controller_delay = delay;
        self
    }

    pub fn watch_history(mut self, events: usize) -> Self {
        self.scenario.watch_history = events.max(1);
        self
    }

    /// Require this bearer token on every request (authentication turns on with the first).
    ///
    /// # Panics
    /// On an entry with neither or both of a token and a token file.
    pub fn token(mut self, token: TokenSpec) -> Self {
        if let Some(problem) = token.problem() {
            panic!("kube-sim token refused: {problem}");
        }
        self.scenario.auth.tokens.push(token);
        self
    }

    /// Authorize every request by RBAC (and require a bearer token). Creates the bootstrap
    /// roles a real cluster has: `cluster-admin` for group `system:masters`, and discovery,
    /// self access reviews and `/version` for every authenticated user.
    pub fn rbac(mut self) -> Self {
        self.scenario.auth.rbac = true;
        self
    }

    /// The scenario, or the first timeline object kube-sim could not replay literally.
    ///
    /// # Errors
    /// An object that is malformed or of a kind neither built in nor defined by an
    /// Established CRD earlier in the timeline.
    pub fn try_build(self) -> Result<Scenario, TimelineError> {
        self.scenario.check_timeline()?;
        Ok(self.scenario)
    }

    /// The scenario.
    ///
    /// # Panics
    /// When [`try_build`](Self::try_build) refuses the timeline.
    pub fn build(self) -> Scenario {
        match self.try_build() {
            Ok(s) => s,
            Err(e) => panic!("kube-sim scenario refused: {e}"),
        }
    }
}
