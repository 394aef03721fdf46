//! The command line, as clap parses it. A stable contract: scripts and the Action call it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// What `--help` ends with: examples, the exit codes and the annotations read, so the
/// help answers what a CI author looks up most.
const AFTER_HELP: &str = "\
Examples:
  deploy-action deploy -f k8s/ -n shop                  apply, then watch to a verdict
  deploy-action deploy -f web.yaml,api.yaml --dry-run   server-side dry run, change nothing
  kustomize build overlays/prod | deploy-action deploy -f - --timeout 10m
  deploy-action watch -f k8s/ -l app=web               judge what is applied (after helm upgrade)
  deploy-action check -f k8s/                          no cluster: validate, look up images

Exit codes:
  0   every resource succeeded
  1   a resource failed (waiting would not fix it)
  70  nothing failed, but a resource timed out
  2   invalid input or configuration; nothing was applied
  130, 143  interrupted (SIGINT, SIGTERM)

Annotations read on each resource:
  deploy-action.io/timeout             how long it may take (45s, 5m, PT10M)
  krane.shopify.io/timeout-override    the same, krane's spelling
  deploy-action.io/required-rollout    Deployments: full, none, maxUnavailable or 90%
  krane.shopify.io/required-rollout    the same, krane's spelling
  deploy-action.io/settle              stability window for its pods (10s; 0 turns it off)
  krane.shopify.io/instance-rollout-conditions
                                       on a CRD: when its custom resources are done";

#[derive(Debug, Parser)]
#[command(
    name = "deploy-action",
    version,
    about = "Apply Kubernetes manifests, watch every resource to a verdict, and tell a fast, certain failure from a slow one",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply the manifests (server-side apply), then watch every resource to a verdict.
    #[command(after_help = AFTER_HELP)]
    Deploy(DeployArgs),
    /// Apply nothing: judge the resources the manifests name, as they stand in the cluster.
    #[command(after_help = AFTER_HELP)]
    Watch(ClusterArgs),
    /// No cluster needed: validate the manifests and look up every image in its registry
    /// (for PR checks, including fork PRs without cluster credentials).
    #[command(after_help = AFTER_HELP)]
    Check(CheckArgs),
}

/// How the runner itself consults registries.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Look up every image before applying: `auto` stops on a definite "not found" and warns
    /// on auth or network trouble, `require` stops on those too, `off` never contacts a
    /// registry from the runner (neither before nor while watching).
    #[arg(long, value_enum, default_value = "auto")]
    pub image_preflight: crate::run::images::Preflight,
    /// Docker config file (`config.json` with `auths`) with registry credentials for lookups.
    #[arg(long)]
    pub registry_config: Option<PathBuf>,
}

/// Whether to report to a GitHub check run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckRunMode {
    /// Under GitHub Actions with a token.
    Auto,
    On,
    Off,
}

/// How the run is reported to GitHub.
#[derive(Clone, Args)]
pub struct GithubArgs {
    /// Post a GitHub check run: `auto` does under GitHub Actions when a token is given.
    #[arg(long, value_enum, default_value = "auto")]
    pub check_run: CheckRunMode,
    /// The check run's name (default: `deploy (<context>/<namespace>)`, or `check`).
    #[arg(long)]
    pub check_name: Option<String>,
    /// Token allowed to write checks (default: $GITHUB_TOKEN). Never printed.
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// The commit to report on (default: the pull request's head, else GITHUB_SHA).
    #[arg(long)]
    pub sha: Option<String>,
}

impl std::fmt::Debug for GithubArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubArgs")
            .field("check_run", &self.check_run)
            .field("check_name", &self.check_name)
            .field("github_token", &self.github_token.as_ref().map(|_| "***"))
            .field("sha", &self.sha)
            .finish()
    }
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Manifest files or directories (recursive, .yaml/.yml/.json), or `-` for stdin;
    /// repeat -f or separate with commas, as kubectl does.
    #[arg(
        short = 'f',
        long = "filename",
        required = true,
        num_args = 1..,
        value_delimiter = ','
    )]
    pub files: Vec<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub github: GithubArgs,
}

/// Where the manifests are and which cluster to talk to.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Manifest files or directories (recursive, .yaml/.yml/.json), or `-` for stdin;
    /// repeat -f or separate with commas, as kubectl does.
    #[arg(
        short = 'f',
        long = "filename",
        required = true,
        num_args = 1..,
        value_delimiter = ','
    )]
    pub files: Vec<String>,
    /// Namespace for resources that do not name one (default: the context's, else `default`).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Kubeconfig context to use (default: the current context).
    #[arg(long)]
    pub context: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Give up on resources still unfinished after this long (e.g. 90s, 5m).
    #[arg(long, default_value = "5m")]
    pub timeout: String,
    /// A workload succeeds only once its new pods have run this long without a restart
    /// (`0` turns it off; per resource: annotation deploy-action.io/settle).
    #[arg(long, default_value = "10s")]
    pub settle: String,
    /// Keep watching every resource after one has failed (by default the run ends as soon
    /// as a failure makes the result certain, and the rest are reported unfinished).
    #[arg(long)]
    pub no_fail_fast: bool,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Labels every resource must carry (k=v,...); they also narrow the watches.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub github: GithubArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DeployArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Validate everything with a server-side dry run; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub prune: PruneArgs,
}

/// `--prune` with an ApplySet, as `kubectl apply --prune --applyset` keeps one.
#[derive(Debug, Clone, Args)]
pub struct PruneArgs {
    /// After every manifest is applied, delete the objects of the set (--applyset) that are
    /// no longer in the manifests. With --dry-run: list them, delete nothing.
    #[arg(long, requires = "applyset")]
    pub prune: bool,
    /// The ApplySet parent that records the set: NAME (a Secret in the deploy's namespace),
    /// secrets/NAME or configmaps/NAME. Required by --prune; keep it stable across runs.
    #[arg(long, value_name = "NAME", requires = "prune")]
    pub applyset: Option<String>,
    /// Allow pruning in this guarded namespace (default, kube-system, kube-public); repeatable.
    #[arg(long, value_name = "NS", requires = "prune")]
    pub prune_allow_namespace: Vec<String>,
    /// Take over a set another tool manages (kubectl): its parent then names deploy-action.
    #[arg(long, requires = "prune")]
    pub applyset_adopt: bool,
}
