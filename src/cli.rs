//! The command line, as clap parses it. A stable contract: scripts and the Action call it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// What `--help` ends with: examples, the exit codes and the annotations read, so the
/// help answers what a CI author looks up most.
const AFTER_HELP: &str = "\
Examples:
  deploy-action deploy -f k8s/ -n shop                  apply, then watch to a verdict
  deploy-action deploy -f web.yaml,api.yaml --dry-run   server-side dry run, change nothing
  deploy-action plan -f k8s/ -n shop                    the same, as a plan: what would change
  kustomize build overlays/prod | deploy-action deploy -f - --timeout 10m
  deploy-action watch -f k8s/ -l app=web               judge what is applied (after helm upgrade)
  deploy-action check -f k8s/                          no cluster: validate, look up images
  deploy-action restart deployment web api -n shop     rollout restart, then watch to a verdict
  deploy-action run --template task.yaml --command rake db:migrate
                                                       start a pod, stream its logs, judge it

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
  deploy-action.io/wave                the wave it is applied in (a whole number; lowest first)
  argocd.argoproj.io/sync-wave         the same, Argo CD's spelling
  helm.sh/hook, hook-weight, hook-delete-policy
                                       Helm hooks: applied before or after the rest
  deploy-action.io/replace             `true`: delete and recreate it when a change cannot be made in place
  deploy-action.io/skip-endpoint-validation
                                       Services: `true` skips the endpoint check
  krane.shopify.io/skip-endpoint-validation  the same, krane's spelling
  deploy-action.io/predeployed         on a CRD: `false` applies its custom resources last
  krane.shopify.io/predeployed         the same, krane's spelling
  deploy-action.io/health-rules        on a CRD: health rules (CEL) for its custom resources
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
    /// Show what a deploy would change, changing nothing: a server-side dry run of every
    /// manifest compared with the live objects (created, changed field by field,
    /// unchanged, and with --prune what would be pruned). The same as `deploy --dry-run`.
    #[command(after_help = AFTER_HELP)]
    Plan(PlanArgs),
    /// Apply nothing: judge the resources the manifests name, as they stand in the cluster.
    #[command(after_help = AFTER_HELP)]
    Watch(WatchArgs),
    /// No cluster needed: validate the manifests and look up every image in its registry
    /// (for PR checks, including fork PRs without cluster credentials).
    #[command(after_help = AFTER_HELP)]
    Check(CheckArgs),
    /// Rollout restart Deployments, StatefulSets or DaemonSets as `kubectl rollout restart`
    /// does (the pod template's `kubectl.kubernetes.io/restartedAt` annotation), then watch
    /// each to a verdict as a deploy would.
    #[command(after_help = RESTART_HELP)]
    Restart(RestartArgs),
    /// Start a one-off Pod from a template (krane's `run`), stream its logs, and give its
    /// verdict: succeeded when it completes, failed when it fails.
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// Print the Role (and ClusterRole) a deploy of the manifests needs, as YAML to apply:
    /// what it applies, the watches its rules read, logs of failed containers, and what it
    /// deletes. Reads the cluster's discovery only (any authenticated user may).
    Rbac(RbacArgs),
}

/// `rbac`: the manifests, the cluster whose kinds name their resources, and the deploy's
/// options that change what it needs.
#[derive(Debug, Clone, Args)]
pub struct RbacArgs {
    #[command(flatten)]
    pub manifests: ManifestArgs,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The deploy prunes (`deploy --prune`): add what pruning deletes and keeps.
    #[arg(long)]
    pub prune: bool,
    /// Name of the Role and ClusterRole.
    #[arg(long, default_value = "deploy-action")]
    pub name: String,
}

/// What `restart --help` ends with.
const RESTART_HELP: &str = "\
Examples:
  deploy-action restart deployment web api -n shop      restart two Deployments, watch both
  deploy-action restart statefulset/db                   kubectl's KIND/NAME form
  deploy-action restart daemonset -l app=agent           every DaemonSet with these labels

Every name is looked up before anything is restarted: one that does not exist (or a
selector that matches nothing, or a paused Deployment) exits 2 with nothing restarted.

Exit codes:
  0   every restarted resource rolled out
  1   a resource failed (its new pods crash, an image is missing, ...)
  70  nothing failed, but a resource timed out
  2   invalid input or configuration; nothing was restarted
  130, 143  interrupted (SIGINT, SIGTERM)";

/// What `run --help` ends with.
const RUN_HELP: &str = "\
Examples:
  deploy-action run --template k8s/task.yaml --command rake db:migrate
  deploy-action run --template k8s/web.yaml --container web --env MODE=once --command ./once.sh -v

The template is a Pod, a PodTemplate (as krane's run uses), or any manifest with a pod
template (Deployment, Job, CronJob, ...). The pod is named <name>-run-<suffix>, labelled
deploy-action.io/run=<name>, has restartPolicy Never, and is not deleted afterwards.
--command takes everything after it: give it last.

Exit codes:
  0   the pod succeeded (phase Succeeded)
  1   the pod failed: its container's exit code and reason are in the message
  70  the pod had not finished by --timeout
  2   invalid input or configuration; no pod was started
  130, 143  interrupted (SIGINT, SIGTERM)";

/// How the runner itself consults registries.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Look up every image before applying: `auto` stops on a definite "not found" and warns
    /// on auth or network trouble, `require` stops on those too, `off` never contacts a
    /// registry from the runner (neither before nor while watching).
    #[arg(long, value_enum, default_value = "auto")]
    pub image_preflight: Preflight,
    /// Docker config file (`config.json` with `auths`) with registry credentials for lookups.
    #[arg(long)]
    pub registry_config: Option<PathBuf>,
}

/// `--image-preflight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Preflight {
    /// Look up every image first; a definite "not found" stops the deploy, other problems warn.
    Auto,
    /// Never contact registries from the runner (no preflight, no lookups while watching).
    Off,
    /// Like auto, but an image that cannot be confirmed (denied, unreachable) stops the deploy.
    Require,
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
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Health rules for custom resources (YAML, CEL), ahead of a CRD's own and the bundled
    /// ones; repeat for several files (a later file's rule for a kind wins).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// CRD files (directories searched recursively, .yaml/.yml/.json) for custom resources
    /// whose operator is installed separately: their objects are held to these schemas as
    /// to those of the CRDs in the manifests. Repeat for several.
    #[arg(long = "schemas", value_name = "DIR")]
    pub schemas: Vec<PathBuf>,
    /// The Kubernetes version whose API the manifests are held to (this build knows 1.33).
    #[arg(long, value_name = "X.Y", default_value = crate::manifest::builtin::KUBERNETES_VERSION)]
    pub kubernetes_version: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub github: GithubArgs,
}

/// Which cluster to talk to, and the namespace of what names none.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Namespace for resources that do not name one (default: the context's, else `default`).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Kubeconfig context to use (default: the current context).
    #[arg(long)]
    pub context: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Where the manifests are: `-f`, as kubectl takes it.
#[derive(Debug, Clone, Args)]
pub struct ManifestArgs {
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
}

impl ManifestArgs {
    /// How often `-` (stdin) was named: more than once cannot be honoured.
    pub fn stdin_count(&self) -> usize {
        self.files.iter().filter(|f| *f == "-").count()
    }
}

/// Where the manifests are and which cluster to talk to.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Health rules for custom resources (YAML, CEL), ahead of a CRD's own and the bundled
    /// ones; repeat for several files (a later file's rule for a kind wins).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
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

/// `watch`: a deploy's arguments, and what to do about resources that do not exist.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Wait (up to --timeout) for resources that do not exist yet; without it, a resource
    /// missing from its kind's first complete list is reported `absent` (failed) at once.
    #[arg(long)]
    pub wait_for_creation: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DeployArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Validate everything with a server-side dry run and show what would change (see
    /// `plan`); change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub prune: PruneArgs,
}

/// `plan`: a deploy's arguments, always a dry run.
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
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

/// Where `restart` and `run` act, how long they wait, and how they report.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Give up on what is still unfinished after this long (e.g. 90s, 5m).
    #[arg(long, default_value = "5m")]
    pub timeout: String,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub github: GithubArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RestartArgs {
    /// deployment, statefulset or daemonset (kubectl's short names and plurals too), or
    /// KIND/NAME.
    pub kind: String,
    /// The resources to restart (all must exist).
    #[arg(conflicts_with = "selector")]
    pub names: Vec<String>,
    /// Restart every resource of the kind with these labels (k=v,...).
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// A restarted workload succeeds only once its new pods have run this long without a
    /// restart (`0` turns it off).
    #[arg(long, default_value = "10s")]
    pub settle: String,
    /// Keep watching every resource after one has failed.
    #[arg(long)]
    pub no_fail_fast: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// File with a Pod, a PodTemplate, or any manifest with a pod template.
    #[arg(long)]
    pub template: String,
    /// The container whose command and env are set (default: the first).
    #[arg(long)]
    pub container: Option<String>,
    /// Set an environment variable in that container (K=V; repeat for more).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// The command and its arguments (replaces the image's entrypoint and the template's
    /// args); takes everything after it, so give it last.
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
    #[command(flatten)]
    pub target: TargetArgs,
}
