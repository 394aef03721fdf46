//! The validated configuration of a run, built from the command line before any I/O.

use crate::cli::Preflight;
use crate::cli::{ClusterArgs, Command, GithubArgs};
use crate::vocab::duration::parse_duration;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What kind of run this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Apply, then watch.
    Deploy,
    /// Server-side dry run of the apply; nothing changes.
    DryRun,
    /// Judge what is there; apply nothing.
    Watch,
    /// Validate locally and look up images; no cluster.
    Check,
    /// Rollout restart existing workloads, then watch them.
    Restart,
    /// Start a one-off Pod from a template, stream its logs, judge it.
    Run,
}

impl Mode {
    /// What a successful run of this mode did to its resources: `3 resources restarted`.
    pub fn done(self) -> &'static str {
        match self {
            Mode::Deploy | Mode::DryRun | Mode::Check => "deployed",
            Mode::Watch => "ready",
            Mode::Restart => "restarted",
            Mode::Run => "completed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    pub files: Vec<String>,
    pub namespace: Option<String>,
    pub context: Option<String>,
    pub kubeconfig: Option<PathBuf>,
    pub timeout: Duration,
    /// How long a workload's new pods must run without a restart before it succeeds.
    pub settle: Duration,
    /// End the run once a resource has failed (the result cannot improve).
    pub fail_fast: bool,
    pub report: Option<PathBuf>,
    pub selector: BTreeMap<String, String>,
    pub image_preflight: Preflight,
    pub registry_config: Option<PathBuf>,
    pub github: GithubArgs,
    /// `deploy --prune`: the set to prune.
    pub prune: Option<crate::prune::PruneConfig>,
    /// `--rules` files, in the order given.
    pub rules: Vec<PathBuf>,
    /// The rules those files hold, once loaded (`pipeline::load_rules`).
    pub health_rules: std::sync::Arc<crate::rules::health::rule::HealthRules>,
    /// `check --schemas`: files and directories of CRDs installed apart from the manifests.
    pub schemas: Vec<PathBuf>,
    /// `watch --wait-for-creation`: a resource not in the cluster is waited for, not
    /// reported `absent`.
    pub wait_for_creation: bool,
}

impl Config {
    /// Whether a resource missing from its kind's first complete list is `absent` (a
    /// verdict), rather than not created yet: `watch` applies nothing that would create it.
    pub fn absent_fails(&self) -> bool {
        self.mode == Mode::Watch && !self.wait_for_creation
    }
}

/// A command line that cannot be run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("invalid --timeout {0:?}: use a duration such as 90s or 5m")]
    Timeout(String),
    #[error("invalid --settle {0:?}: use a duration such as 10s, or 0 to turn it off")]
    Settle(String),
    #[error("{0} {1} has no unit: write {1}s or {1}m")]
    Unitless(&'static str, String),
    #[error("invalid --selector {0:?}: use key=value pairs separated by commas")]
    Selector(String),
    #[error("`-` (stdin) may be given only once")]
    StdinTwice,
    #[error("`{0}` prints what a deploy needs; it applies and judges nothing")]
    NotARun(&'static str),
    #[error(
        "--kubernetes-version {0}: this build checks against Kubernetes {known} only (its built-in kinds and validation come from that version)",
        known = crate::manifest::builtin::KUBERNETES_VERSION
    )]
    KubernetesVersion(String),
    #[error(transparent)]
    Applyset(#[from] crate::prune::applyset::ParentNameError),
}

impl Config {
    pub fn from_command(command: &Command) -> Result<Config, ConfigError> {
        let (args, mode): (&ClusterArgs, Mode) = match command {
            Command::Deploy(d) if d.dry_run => (&d.cluster, Mode::DryRun),
            Command::Deploy(d) => (&d.cluster, Mode::Deploy),
            Command::Plan(p) => (&p.cluster, Mode::DryRun),
            Command::Watch(w) => (&w.cluster, Mode::Watch),
            Command::Rbac(_) => return Err(ConfigError::NotARun("rbac")),
            Command::Check(c) => {
                if c.manifests.stdin_count() > 1 {
                    return Err(ConfigError::StdinTwice);
                }
                let known = crate::manifest::builtin::KUBERNETES_VERSION;
                let asked = c.kubernetes_version.trim_start_matches('v');
                if asked != known && !asked.starts_with(&format!("{known}.")) {
                    return Err(ConfigError::KubernetesVersion(c.kubernetes_version.clone()));
                }
                return Ok(Config {
                    mode: Mode::Check,
                    files: c.manifests.files.clone(),
                    namespace: None,
                    context: None,
                    kubeconfig: None,
                    timeout: Duration::from_secs(300),
                    settle: Duration::ZERO,
                    fail_fast: true,
                    report: c.report.clone(),
                    selector: BTreeMap::new(),
                    image_preflight: c.registry.image_preflight,
                    registry_config: c.registry.registry_config.clone(),
                    github: c.github.clone(),
                    prune: None,
                    rules: c.rules.clone(),
                    health_rules: std::sync::Arc::default(),
                    schemas: c.schemas.clone(),
                    wait_for_creation: false,
                });
            }
            Command::Restart(r) => {
                let mut config = Self::acting(Mode::Restart, &r.target, Vec::new())?;
                config.settle = parse_settle(&r.settle)?;
                config.fail_fast = !r.no_fail_fast;
                config.selector = parse_selector(r.selector.as_deref().unwrap_or_default())?;
                return Ok(config);
            }
            Command::Run(r) => {
                // The pod is a task: done when it completes, so no stability window.
                return Self::acting(Mode::Run, &r.target, vec![r.template.clone()]);
            }
        };
        let timeout = parse_timeout(&args.timeout)?;
        let settle = parse_settle(&args.settle)?;
        if args.manifests.stdin_count() > 1 {
            return Err(ConfigError::StdinTwice);
        }
        Ok(Config {
            mode,
            files: args.manifests.files.clone(),
            namespace: args.connection.namespace.clone(),
            context: args.connection.context.clone(),
            kubeconfig: args.connection.kubeconfig.clone(),
            timeout,
            settle,
            fail_fast: !args.no_fail_fast,
            report: args.report.clone(),
            selector: parse_selector(args.selector.as_deref().unwrap_or_default())?,
            image_preflight: args.registry.image_preflight,
            registry_config: args.registry.registry_config.clone(),
            github: args.github.clone(),
            prune: match command {
                Command::Deploy(d) => prune_config(&d.prune)?,
                Command::Plan(p) => prune_config(&p.prune)?,
                _ => None,
            },
            rules: args.rules.clone(),
            health_rules: std::sync::Arc::default(),
            schemas: Vec::new(),
            wait_for_creation: matches!(command, Command::Watch(w) if w.wait_for_creation),
        })
    }

    /// `restart` and `run`: act on the cluster named by `args`, then judge.
    fn acting(
        mode: Mode,
        args: &crate::cli::TargetArgs,
        files: Vec<String>,
    ) -> Result<Config, ConfigError> {
        Ok(Config {
            mode,
            files,
            namespace: args.connection.namespace.clone(),
            context: args.connection.context.clone(),
            kubeconfig: args.connection.kubeconfig.clone(),
            timeout: parse_timeout(&args.timeout)?,
            settle: Duration::ZERO,
            fail_fast: true,
            report: args.report.clone(),
            selector: BTreeMap::new(),
            image_preflight: args.registry.image_preflight,
            registry_config: args.registry.registry_config.clone(),
            github: args.github.clone(),
            prune: None,
            rules: Vec::new(),
            health_rules: std::sync::Arc::default(),
            schemas: Vec::new(),
            wait_for_creation: false,
        })
    }

    /// The selector as a label-selector string for watches.
    pub fn selector_string(&self) -> Option<String> {
        (!self.selector.is_empty()).then(|| {
            self.selector
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
    }
}

/// A bare number on the command line is more likely minutes meant than seconds: say it.
fn has_unit(s: &str) -> bool {
    !s.trim().bytes().all(|b| b.is_ascii_digit())
}

fn parse_timeout(s: &str) -> Result<Duration, ConfigError> {
    if !has_unit(s) {
        return Err(ConfigError::Unitless("--timeout", s.trim().to_owned()));
    }
    parse_duration(s)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| ConfigError::Timeout(s.to_owned()))
}

fn parse_settle(s: &str) -> Result<Duration, ConfigError> {
    match s.trim() {
        "0" => Some(Duration::ZERO),
        bare if !has_unit(bare) => {
            return Err(ConfigError::Unitless("--settle", bare.to_owned()));
        }
        s => parse_duration(s),
    }
    .ok_or_else(|| ConfigError::Settle(s.to_owned()))
}

fn prune_config(
    args: &crate::cli::PruneArgs,
) -> Result<Option<crate::prune::PruneConfig>, ConfigError> {
    let Some(applyset) = args.applyset.as_deref().filter(|_| args.prune) else {
        return Ok(None);
    };
    let (parent_kind, parent_name) = crate::prune::applyset::parse_parent(applyset)?;
    Ok(Some(crate::prune::PruneConfig {
        parent_kind,
        parent_name,
        allow_namespaces: args.prune_allow_namespace.iter().cloned().collect(),
        adopt: args.applyset_adopt,
    }))
}

fn parse_selector(s: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut out = BTreeMap::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| ConfigError::Selector(s.to_owned()))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(ConfigError::Selector(s.to_owned()));
        }
        out.insert(k.to_owned(), v.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<Config, ConfigError> {
        let cli = Cli::try_parse_from(std::iter::once("deploy-action").chain(args.iter().copied()))
            .unwrap();
        Config::from_command(&cli.command)
    }

    #[test]
    fn reads_modes_timeouts_and_selectors() {
        let c = config(&[
            "deploy",
            "-f",
            "k8s/",
            "--timeout",
            "90s",
            "--selector",
            "app=web, team=shop",
        ])
        .unwrap();
        assert_eq!(c.mode, Mode::Deploy);
        assert_eq!(c.timeout, Duration::from_secs(90));
        assert_eq!(c.selector_string().as_deref(), Some("app=web,team=shop"));
        assert_eq!(
            config(&["deploy", "--dry-run", "-f", "-"]).unwrap().mode,
            Mode::DryRun
        );
        assert_eq!(
            config(&["plan", "-f", "k8s/", "-n", "shop"]).unwrap().mode,
            Mode::DryRun
        );
        let w = config(&["watch", "-f", "a.yaml", "b.yaml"]).unwrap();
        assert_eq!(
            (w.mode, w.files.len(), w.timeout),
            (Mode::Watch, 2, Duration::from_secs(300))
        );
        assert_eq!(w.image_preflight, Preflight::Auto);
        // kubectl's habits: comma lists for -f, -l for --selector.
        let k = config(&["deploy", "-f", "a.yaml,b.yaml", "-f", "c/", "-l", "app=web"]).unwrap();
        assert_eq!(k.files, ["a.yaml", "b.yaml", "c/"]);
        assert_eq!(k.selector_string().as_deref(), Some("app=web"));
        assert_eq!(
            config(&["check", "-f", "a.yaml,b.yaml"]).unwrap().files,
            ["a.yaml", "b.yaml"]
        );
        // The stability window and fail fast.
        assert_eq!((k.settle, k.fail_fast), (Duration::from_secs(10), true));
        let s = config(&["deploy", "-f", "x", "--settle", "0", "--no-fail-fast"]).unwrap();
        assert_eq!((s.settle, s.fail_fast), (Duration::ZERO, false));
        assert_eq!(
            config(&["deploy", "-f", "x", "--settle", "soon"]).unwrap_err(),
            ConfigError::Settle("soon".into())
        );
        let c = config(&["check", "-f", "k8s/", "--image-preflight", "require"]).unwrap();
        assert_eq!(
            (c.mode, c.image_preflight),
            (Mode::Check, Preflight::Require)
        );
    }

    #[test]
    fn prune_needs_a_named_applyset() {
        let c = config(&[
            "deploy",
            "-f",
            "k8s/",
            "--prune",
            "--applyset",
            "web",
            "--prune-allow-namespace",
            "default",
        ])
        .unwrap();
        let p = c.prune.unwrap();
        assert_eq!(
            (p.parent_kind, p.parent_name.as_str(), p.adopt),
            (crate::prune::ParentKind::Secret, "web", false)
        );
        assert!(p.allow_namespaces.contains("default"));
        assert!(config(&["deploy", "-f", "x"]).unwrap().prune.is_none());
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("deploy-action").chain(args.iter().copied()))
        };
        for alone in [
            &["deploy", "-f", "x", "--prune"][..],
            &["deploy", "-f", "x", "--applyset", "web"],
            &["deploy", "-f", "x", "--applyset-adopt"],
            &["watch", "-f", "x", "--prune", "--applyset", "web"],
        ] {
            assert!(parse(alone).is_err(), "{alone:?}");
        }
        assert!(matches!(
            config(&["deploy", "-f", "x", "--prune", "--applyset", "Web"]),
            Err(ConfigError::Applyset(_))
        ));
    }

    #[test]
    fn check_knows_the_kubernetes_version_it_was_built_for_and_refuses_others() {
        for ok in ["1.33", "v1.33", "1.33.2"] {
            assert!(
                config(&["check", "-f", "x", "--kubernetes-version", ok]).is_ok(),
                "{ok}"
            );
        }
        assert!(config(&["check", "-f", "x"]).is_ok());
        let refused = config(&["check", "-f", "x", "--kubernetes-version", "1.29"]).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "--kubernetes-version 1.29: this build checks against Kubernetes 1.33 only (its built-in kinds and validation come from that version)"
        );
    }

    #[test]
    fn refuses_bad_values_before_any_io() {
        assert_eq!(
            config(&["deploy", "-f", "x", "--timeout", "soon"]).unwrap_err(),
            ConfigError::Timeout("soon".into())
        );
        assert_eq!(
            config(&["deploy", "-f", "x", "--timeout", "0s"]).unwrap_err(),
            ConfigError::Timeout("0s".into())
        );
        // 5 what? Minutes, most likely: never taken as 5 seconds.
        let unitless = config(&["deploy", "-f", "x", "--timeout", "5"]).unwrap_err();
        assert_eq!(
            unitless.to_string(),
            "--timeout 5 has no unit: write 5s or 5m"
        );
        assert_eq!(
            config(&["deploy", "-f", "x", "--settle", "30"]).unwrap_err(),
            ConfigError::Unitless("--settle", "30".into())
        );
        assert!(config(&["deploy", "-f", "x", "--settle", "0"]).is_ok());
        assert!(matches!(
            config(&["deploy", "-f", "x", "--selector", "app"]),
            Err(ConfigError::Selector(_))
        ));
        assert_eq!(
            config(&["deploy", "-f", "-", "-"]).unwrap_err(),
            ConfigError::StdinTwice
        );
    }
}
