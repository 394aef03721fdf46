//! Reading a scenario file, with errors that name the file and line.

use super::image::{ImageBehaviour, ImageTable};
use super::{
    AuthSpec, Dur, Fault, KubeVersion, NodeSpec, ObjectRef, Scenario, TimelineStep, node_names,
    timeline,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("failed to read scenario {file}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    kubernetes_version: Option<String>,
    nodes: Option<RawNodes>,
    #[serde(default)]
    images: Option<RawImages>,
    #[serde(default)]
    faults: Vec<Fault>,
    #[serde(default)]
    timeline: Vec<RawStep>,
    controller_delay: Option<Dur>,
    watch_history: Option<usize>,
    #[serde(default)]
    auth: AuthSpec,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawNodes {
    Count(usize),
    List(Vec<NodeSpec>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    at: Dur,
    #[serde(default)]
    apply: Vec<Value>,
    #[serde(default)]
    delete: Vec<ObjectRef>,
}

/// The `images:` map in file order, `default` split out.
struct RawImages(ImageTable);

impl<'de> Deserialize<'de> for RawImages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawImages;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from image reference (or glob, or `default`) to behaviour")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawImages, A::Error> {
                let mut table = ImageTable::default();
                while let Some(key) = map.next_key::<String>()? {
                    let behaviour: ImageBehaviour = map.next_value()?;
                    if key == "default" {
                        table.default = behaviour;
                    } else if table.rules.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("image {key:?} is listed twice")));
                    } else {
                        table.rules.push((key, behaviour));
                    }
                }
                Ok(RawImages(table))
            }
        }
        d.deserialize_map(V)
    }
}

pub(super) fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let invalid = |line: usize, column: usize, message: String| ScenarioError::Invalid {
        file: file.to_owned(),
        line,
        column,
        message,
    };
    let raw: RawScenario = serde_yaml_ng::from_str(text).map_err(|e| {
        let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        invalid(
            line,
            column,
            e.to_string()
                .split(" at line ")
                .next()
                .unwrap_or_default()
                .to_owned(),
        )
    })?;
    let mut scenario = Scenario::default();
    if let Some(v) = raw.kubernetes_version {
        scenario.kubernetes_version = KubeVersion::parse(&v).ok_or_else(|| {
            invalid(
                line_of(text, "kubernetes_version"),
                1,
                format!("kubernetes_version {v:?} is not a version such as \"1.33\""),
            )
        })?;
    }
    match raw.nodes {
        Some(RawNodes::Count(n)) => scenario.nodes = node_names(n),
        Some(RawNodes::List(list)) => scenario.nodes = list,
        None => {}
    }
    if let Some(RawImages(table)) = raw.images {
        scenario.images = table;
    }
    scenario.faults = raw.faults;
    let mut steps: Vec<(usize, TimelineStep)> = raw
        .timeline
        .into_iter()
        .enumerate()
        .map(|(i, step)| {
            let step = TimelineStep {
                at: step.at.0,
                apply: step.apply,
                delete: step.delete,
            };
            (i + 1, step)
        })
        .collect();
    steps.sort_by_key(|(_, s)| s.at);
    let (labels, steps): (Vec<usize>, Vec<TimelineStep>) = steps.into_iter().unzip();
    timeline::check(&steps, &labels)
        .map_err(|e| invalid(line_of(text, "timeline"), 1, e.to_string()))?;
    scenario.timeline = steps;
    if let Some(Dur(d)) = raw.controller_delay {
        scenario.controller_delay = d;
    }
    if let Some(h) = raw.watch_history {
        scenario.watch_history = h.max(1);
    }
    if let Some(problem) = raw.auth.tokens.iter().find_map(super::TokenSpec::problem) {
        return Err(invalid(line_of(text, "auth"), 1, problem));
    }
    scenario.auth = raw.auth;
    Ok(scenario)
}

/// The 1-based line of the first top-level `key:`, for errors found after parsing.
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(key) && l[key.len()..].trim_start().starts_with(':'))
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::super::image::{PullBehaviour, Readiness};
    use super::*;
    use std::time::Duration;

    const SHAPE: &str = r#"
kubernetes_version: "1.31"
nodes: 2
images:
  default: {pull: 2s}
  "registry.local/shop/web:missing": not_found
  "registry.local/shop/web:private": unauthorized
  "registry.local/shop/worker:slow": {pull: 600s}
  "registry.local/shop/api:flaky": {errors: ["429 Too Many Requests", 503], then: {pull: 1s}}
  "registry.local/shop/cron:crash": {crash: {exit_code: 3, after: 1s, logs: "fatal: no config"}}
  "registry.local/shop/db:oom": {crash: {oom: true, after: 5s}}
  "registry.local/shop/ui:unready": {pull: 1s, ready: never}
faults:
  - {match: {verb: watch, resource: pods}, drop_after_events: 5}
  - {match: {verb: patch, resource: deployments, nth: 1}, status: 429, retry_after: 1s}
auth:
  rbac: true
  tokens:
    - {token: admin-token, user: admin, groups: ["system:masters"]}
    - {token_file: /tmp/ci.token, user: ci}
    - {token: old-token, user: ci, until: 30s}
timeline:
  - at: 5s
    apply:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: late, namespace: default}
"#;

    #[test]
    fn reads_the_documented_shape() {
        let s = parse("s.yaml", SHAPE).unwrap();
        assert_eq!(s.kubernetes_version.to_string(), "1.31");
        assert!(!s.kubernetes_version.backoff_message_has_cause());
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(
            s.images.default.pull,
            PullBehaviour::Succeeds {
                after: Duration::from_secs(2)
            }
        );
        let flaky = s.images.lookup("registry.local/shop/api:flaky");
        assert_eq!(
            flaky.pull,
            PullBehaviour::Errors {
                errors: vec!["429 Too Many Requests".into(), "503".into()],
                then: Box::new(PullBehaviour::Succeeds {
                    after: Duration::from_secs(1)
                }),
            }
        );
        let crash = s.images.lookup("registry.local/shop/cron:crash");
        assert_eq!(crash.exit.as_ref().unwrap().code, 3);
        assert_eq!(crash.logs, ["fatal: no config"]);
        let oom = s
            .images
            .lookup("registry.local/shop/db:oom")
            .exit
            .clone()
            .unwrap();
        assert!(oom.oom && oom.code == 137);
        assert_eq!(
            s.images.lookup("registry.local/shop/ui:unready").ready,
            Readiness::Never
        );
        assert_eq!(s.faults[1].matcher.nth, Some(1));
        assert_eq!(s.faults[1].retry_after, Some(Dur(Duration::from_secs(1))));
        assert_eq!(s.timeline[0].at, Duration::from_secs(5));
        assert!(s.auth.rbac);
        assert_eq!(s.auth.tokens[0].token.as_deref(), Some("admin-token"));
        assert_eq!(s.auth.tokens[0].groups, ["system:masters"]);
        assert_eq!(
            s.auth.tokens[1].token_file.as_deref(),
            Some(std::path::Path::new("/tmp/ci.token"))
        );
        assert_eq!(s.auth.tokens[2].until, Some(Dur(Duration::from_secs(30))));
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad = "nodes: 1\nimages:\n  x: {pull: 1s, ready: sometimes}\n";
        let err = parse("bad.yaml", bad).unwrap_err().to_string();
        assert!(err.starts_with("bad.yaml:3:"), "{err}");
        assert!(err.contains("ready must be `never` or a duration"), "{err}");

        let typo = "nodes: 1\nimagez: {}\n";
        let err = parse("typo.yaml", typo).unwrap_err().to_string();
        assert!(err.starts_with("typo.yaml:2:"), "{err}");
        assert!(err.contains("unknown field `imagez`"), "{err}");

        let auth = "nodes: 1\nauth:\n  tokens:\n    - {user: ci}\n";
        let err = parse("a.yaml", auth).unwrap_err().to_string();
        assert_eq!(
            err,
            "a.yaml:2:1: token of user \"ci\" needs token or token_file"
        );

        let version = "kubernetes_version: banana\n";
        let err = parse("v.yaml", version).unwrap_err().to_string();
        assert_eq!(
            err,
            "v.yaml:1:1: kubernetes_version \"banana\" is not a version such as \"1.33\""
        );
    }
}
