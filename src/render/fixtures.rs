//! Runs as deploy-action observes them against a real cluster, shared by the renderer and
//! report tests so every output is checked against the same stories.

use crate::vocab::outcome::{
    ContainerRef, EventLine, LogTail, Outcome, ResourceId, RunOutcome, SourceSpan,
};
use crate::vocab::verdict::{Reason, Verdict};

pub fn id(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> ResourceId {
    ResourceId {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace: namespace.map(str::to_owned),
        name: name.to_owned(),
    }
}

pub fn span(file: &str, line: usize) -> SourceSpan {
    SourceSpan {
        file: file.to_owned(),
        line,
    }
}

pub fn event(kind: &str, reason: &str, count: u32, object: &str, message: &str) -> EventLine {
    EventLine {
        kind: kind.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        object: object.to_owned(),
        count,
    }
}

fn container(pod: &str, name: &str, image: &str) -> ContainerRef {
    ContainerRef {
        pod: pod.to_owned(),
        container: name.to_owned(),
        image: Some(image.to_owned()),
    }
}

/// A base outcome: succeeded, no evidence.
pub fn succeeded(resource: ResourceId, file: &str, line: usize, seconds: f64) -> Outcome {
    Outcome {
        resource,
        verdict: Verdict::Succeeded,
        reason: None,
        message: String::new(),
        source: Some(span(file, line)),
        origin: None,
        annotation_source: None,
        container: None,
        seconds,
        events: vec![],
        logs: None,
        change: None,
        wave: None,
    }
}

/// containerd's answer for a tag that does not exist, as kubelet relays it.
pub fn missing_image() -> Outcome {
    let pod = "web-7d4b9c8f6-x2x9q";
    let object = format!("Pod/{pod}");
    let image = "ghcr.io/acme/web:1.4.2";
    let pull_error = format!(
        "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and \
         unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
    );
    Outcome {
        resource: id("apps/v1", "Deployment", Some("shop"), "web"),
        verdict: Verdict::Failed,
        reason: Some(Reason::ImageNotFound),
        message: format!("image {image} does not exist: {pull_error}"),
        source: Some(span("k8s/web.yaml", 1)),
        origin: None,
        annotation_source: Some(span("k8s/web.yaml", 21)),
        container: Some(container(pod, "web", image)),
        seconds: 3.07,
        events: vec![
            event(
                "Normal",
                "Scheduled",
                1,
                &object,
                &format!("Successfully assigned shop/{pod} to kind-worker"),
            ),
            event(
                "Normal",
                "Pulling",
                2,
                &object,
                &format!("Pulling image \"{image}\""),
            ),
            event("Warning", "Failed", 2, &object, &pull_error),
            event("Warning", "Failed", 2, &object, "Error: ErrImagePull"),
            event(
                "Normal",
                "BackOff",
                1,
                &object,
                &format!("Back-off pulling image \"{image}\""),
            ),
            event("Warning", "Failed", 1, &object, "Error: ImagePullBackOff"),
        ],
        logs: None,
        change: None,
        wave: None,
    }
}

/// A Node.js service running out of heap: 30 lines of logs, the end is what matters.
pub fn crash_loop() -> Outcome {
    let pods = ["api-5f8d7c6b9-k4m2p", "api-5f8d7c6b9-q7w8e"];
    let mut events = vec![
        event(
            "Normal",
            "ScalingReplicaSet",
            1,
            "Deployment/api",
            "Scaled up replica set api-5f8d7c6b9 from 0 to 2",
        ),
        event(
            "Normal",
            "SuccessfulCreate",
            2,
            "ReplicaSet/api-5f8d7c6b9",
            "Created pod: api-5f8d7c6b9-q7w8e",
        ),
    ];
    for pod in pods {
        let object = format!("Pod/{pod}");
        events.extend([
            event("Normal", "Scheduled", 1, &object, &format!("Successfully assigned shop/{pod} to kind-worker2")),
            event("Normal", "Pulled", 5, &object, "Container image \"ghcr.io/acme/api:2.7.0\" already present on machine"),
            event("Normal", "Created", 5, &object, "Created container: api"),
            event("Normal", "Started", 5, &object, "Started container api"),
            event("Warning", "BackOff", 9, &object, &format!("Back-off restarting failed container api in pod {pod}_shop(0b6f4c1e-8d0a-4b7e-9c55-2f1d3a6b7c80)")),
        ]);
    }
    let mut lines: Vec<String> = (1..=27)
        .map(|n| {
            format!(
                r#"{{"level":"info","msg":"loaded price chunk {n}/27","rss_mb":{}}}"#,
                40 + n * 9
            )
        })
        .collect();
    lines.extend([
        "<--- Last few GCs --->".to_owned(),
        "[1:0x5d1c2a0]    41234 ms: Mark-Compact 254.1 (258.6) -> 253.9 (259.1) MB".to_owned(),
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"
            .to_owned(),
    ]);
    Outcome {
        resource: id("apps/v1", "Deployment", Some("shop"), "api"),
        verdict: Verdict::Failed,
        reason: Some(Reason::CrashLoop),
        message:
            "container api in pod api-5f8d7c6b9-k4m2p keeps crashing: OOMKilled (exit code 137), \
                  restarted 4 times\nmemory limit 256Mi"
                .to_owned(),
        source: Some(span("k8s/api.yaml", 1)),
        origin: None,
        annotation_source: Some(span("k8s/api.yaml", 1)),
        container: Some(container(pods[0], "api", "ghcr.io/acme/api:2.7.0")),
        seconds: 48.66,
        events,
        logs: Some(LogTail {
            pod: pods[0].to_owned(),
            container: "api".to_owned(),
            previous: true,
            lines,
            unreadable: None,
        }),
        change: None,
        wave: None,
    }
}

/// Docker Hub rate limiting: time may fix it, so it is a timeout, not a failure.
pub fn slow_registry() -> Outcome {
    let pod = "worker-6c9f8d7b5-z9x8c";
    let object = format!("Pod/{pod}");
    let rate_limited = "Failed to pull image \"docker.io/acme/worker:3.0.1\": failed to copy: httpReadSeeker: \
                        failed open: unexpected status code https://registry-1.docker.io/v2/acme/worker/manifests/3.0.1: \
                        429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.";
    Outcome {
        resource: id("apps/v1", "Deployment", Some("shop"), "worker"),
        verdict: Verdict::TimedOut,
        reason: Some(Reason::RegistrySlow),
        message: "image docker.io/acme/worker:3.0.1 was still not pulled after 300s; \
                  the registry is rate limiting (429 Too Many Requests)"
            .to_owned(),
        source: Some(span("k8s/worker.yaml", 1)),
        origin: None,
        annotation_source: Some(span("k8s/worker.yaml", 18)),
        container: Some(container(pod, "worker", "docker.io/acme/worker:3.0.1")),
        seconds: 300.04,
        events: vec![
            event(
                "Normal",
                "Pulling",
                4,
                &object,
                "Pulling image \"docker.io/acme/worker:3.0.1\"",
            ),
            event("Warning", "Failed", 4, &object, rate_limited),
            event(
                "Normal",
                "BackOff",
                7,
                &object,
                "Back-off pulling image \"docker.io/acme/worker:3.0.1\"",
            ),
        ],
        logs: None,
        change: None,
        wave: None,
    }
}

/// Two namespaced successes and a cluster-scoped one.
pub fn successes() -> Vec<Outcome> {
    vec![
        succeeded(
            id("v1", "ConfigMap", Some("shop"), "web-config"),
            "k8s/web.yaml",
            40,
            0.12,
        ),
        succeeded(
            id("v1", "Service", Some("shop"), "web"),
            "k8s/web.yaml",
            52,
            1.04,
        ),
        succeeded(
            id(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                None,
                "shop-reader",
            ),
            "k8s/rbac.yaml",
            1,
            0.08,
        ),
    ]
}

/// Everything at once: two failures, a timeout, successes; the timeout comes first in the
/// manifests so ordering by severity is visible.
pub fn mixed_run() -> RunOutcome {
    let mut outcomes = vec![slow_registry(), missing_image(), crash_loop()];
    outcomes.extend(successes());
    RunOutcome::new(false, 301.2, outcomes)
}

pub fn all_success_run() -> RunOutcome {
    let mut web = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "web"),
        "k8s/web.yaml",
        1,
        24.37,
    );
    web.message = "3/3 replicas updated and available".to_owned();
    let mut outcomes = vec![web];
    outcomes.extend(successes());
    RunOutcome::new(false, 25.0, outcomes)
}

pub fn timed_out_run() -> RunOutcome {
    let mut outcomes = vec![slow_registry()];
    outcomes.extend(successes());
    RunOutcome::new(false, 300.5, outcomes)
}

pub fn dry_run_passed() -> RunOutcome {
    let mut outcomes = vec![
        succeeded(
            id("apps/v1", "Deployment", Some("shop"), "web"),
            "k8s/web.yaml",
            1,
            0.31,
        ),
        succeeded(
            id("apps/v1", "Deployment", Some("shop"), "api"),
            "k8s/api.yaml",
            1,
            0.29,
        ),
    ];
    outcomes.extend(successes());
    RunOutcome::new(true, 0.9, outcomes)
}

/// A missing image failed the deploy; the Service in front of it and a worker were left
/// unfinished (fail fast).
pub fn stopped_after_failure_run() -> RunOutcome {
    let unfinished = |kind: &str, name: &str, file: &str, state: &str| {
        let mut o = succeeded(
            id(
                if kind == "Service" { "v1" } else { "apps/v1" },
                kind,
                Some("shop"),
                name,
            ),
            file,
            1,
            0.4,
        );
        o.verdict = Verdict::Unfinished;
        o.reason = Some(Reason::StoppedAfterFailure);
        o.message = format!("{state}; not waited for after Deployment/shop/web failed");
        o
    };
    let outcomes = vec![
        missing_image(),
        unfinished(
            "Service",
            "web",
            "k8s/web.yaml",
            "no ready endpoints yet (0 of 2 selected pods ready)",
        ),
        unfinished(
            "Deployment",
            "worker",
            "k8s/worker.yaml",
            "1/2 replicas updated and available; watching 10s for restarts",
        ),
    ];
    RunOutcome::new(false, 0.5, outcomes)
}

/// The runs every renderer is tried on.
pub fn all_runs() -> Vec<RunOutcome> {
    vec![
        mixed_run(),
        all_success_run(),
        timed_out_run(),
        dry_run_passed(),
        dry_run_rejected(),
        stopped_after_failure_run(),
        dry_run_not_validated(),
        waves_stopped_run(),
        RunOutcome::new(false, 0.0, vec![]),
    ]
}

/// A deploy in two waves whose migration Pod failed: the Deployment was not applied.
pub fn waves_stopped_run() -> RunOutcome {
    let mut migrate = succeeded(
        id("v1", "Pod", Some("shop"), "migrate"),
        "k8s/migrate.yaml",
        1,
        3.1,
    );
    migrate.verdict = Verdict::Failed;
    migrate.reason = Some(Reason::PodFailed);
    migrate.message = "container migrate exited with code 1 (Error)".to_owned();
    migrate.wave = Some("wave 1 of 2: bare pods first (predeploy)".to_owned());
    let mut config = succeeded(
        id("v1", "ConfigMap", Some("shop"), "web-config"),
        "k8s/web.yaml",
        1,
        0.1,
    );
    config.wave = migrate.wave.clone();
    let mut web = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "web"),
        "k8s/web.yaml",
        8,
        0.0,
    );
    web.verdict = Verdict::Unfinished;
    web.reason = Some(Reason::NotApplied);
    web.message = "not applied: Pod/migrate in wave 1 of 2 failed".to_owned();
    web.wave = Some("wave 2 of 2: the rest".to_owned());
    RunOutcome::new(false, 3.2, vec![web, config, migrate])
}

/// A dry run whose Deployment lives in a namespace the same manifests create.
pub fn dry_run_not_validated() -> RunOutcome {
    let mut web = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "web"),
        "k8s/web.yaml",
        5,
        0.1,
    );
    web.verdict = Verdict::Unfinished;
    web.reason = Some(Reason::NotValidated);
    web.message = "its namespace \"shop\" is created by this deploy, so the server cannot check it before the apply".to_owned();
    let ns = succeeded(id("v1", "Namespace", None, "shop"), "k8s/web.yaml", 1, 0.1);
    RunOutcome::new(true, 0.2, vec![ns, web])
}

/// A dry run with its plan: an image bump and a scale-up, a rotated password, a new
/// ConfigMap, a Service left as it is, a Deployment whose namespace is new, and one that
/// `--prune` would delete.
pub fn dry_run_plan() -> RunOutcome {
    use crate::vocab::outcome::{Change, FieldChange};
    let field = |path: &str, before: Option<&str>, after: Option<&str>| FieldChange {
        path: path.to_owned(),
        before: before.map(str::to_owned),
        after: after.map(str::to_owned),
    };
    let mut web = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "web"),
        "k8s/web.yaml",
        1,
        0.1,
    );
    web.message = "server-side dry run passed".to_owned();
    web.change = Some(Change::Changed {
        fields: vec![
            field("spec.replicas", Some("2"), Some("3")),
            field(
                "spec.template.spec.containers[name=web].image",
                Some("\"ghcr.io/acme/web:1.4.0\""),
                Some("\"ghcr.io/acme/web:1.5.0\""),
            ),
            field(
                "spec.template.spec.containers[name=web].env[name=FEATURE_X]",
                None,
                Some("{\"name\":\"FEATURE_X\",\"value\":\"on\"}"),
            ),
        ],
    });
    let mut db = succeeded(
        id("v1", "Secret", Some("shop"), "db"),
        "k8s/db.yaml",
        1,
        0.1,
    );
    db.change = Some(Change::Changed {
        fields: vec![field(
            "data.password",
            Some(crate::plan::HIDDEN),
            Some(crate::plan::HIDDEN),
        )],
    });
    let mut flags = succeeded(
        id("v1", "ConfigMap", Some("shop"), "flags"),
        "k8s/web.yaml",
        40,
        0.1,
    );
    flags.change = Some(Change::Created);
    let mut service = succeeded(
        id("v1", "Service", Some("shop"), "web"),
        "k8s/web.yaml",
        52,
        0.1,
    );
    service.change = Some(Change::Unchanged);
    let mut worker = succeeded(
        id("apps/v1", "Deployment", Some("jobs"), "worker"),
        "k8s/worker.yaml",
        8,
        0.1,
    );
    worker.verdict = Verdict::Unfinished;
    worker.reason = Some(Reason::NotValidated);
    worker.message = "its namespace \"jobs\" is created by this deploy, so the server cannot check it before the apply".to_owned();
    let mut old = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "legacy"),
        "k8s/web.yaml",
        1,
        0.1,
    );
    old.source = None;
    old.message = "would be pruned".to_owned();
    old.change = Some(Change::Pruned);
    RunOutcome::new(true, 0.4, vec![web, db, flags, service, worker, old])
}

/// `check` (no cluster): three distinct images, one missing, one whose registry denied the
/// runner, one found.
pub fn check_run() -> RunOutcome {
    let missing = missing_image();
    let mut doubtful = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "worker"),
        "k8s/worker.yaml",
        1,
        0.0,
    );
    doubtful.verdict = Verdict::Unfinished;
    doubtful.reason = Some(Reason::NotValidated);
    doubtful.message = "manifest valid; the registry could not confirm registry.acme.io/worker:7 (401 Unauthorized): the nodes may still pull it".to_owned();
    doubtful.annotation_source = Some(span("k8s/worker.yaml", 18));
    let mut found = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "api"),
        "k8s/api.yaml",
        1,
        0.0,
    );
    found.message = "manifest valid; found ghcr.io/acme/api:3.2".to_owned();
    RunOutcome::new(false, 0.4, vec![missing, doubtful, found]).with_images(
        crate::vocab::outcome::ImageTally {
            images: 3,
            missing: 1,
            unconfirmed: 1,
            looked_up: true,
        },
    )
}

/// The API server refusing a Deployment without an image, as `kubectl apply --dry-run=server` sees it.
pub fn dry_run_rejected() -> RunOutcome {
    let mut rejected = succeeded(
        id("apps/v1", "Deployment", Some("shop"), "api"),
        "k8s/api.yaml",
        1,
        0.2,
    );
    rejected.verdict = Verdict::Failed;
    rejected.reason = Some(Reason::ApplyRejected);
    rejected.message = "Deployment.apps \"api\" is invalid: spec.template.spec.containers[0].image: Required value"
        .to_owned();
    rejected.annotation_source = Some(span("k8s/api.yaml", 17));
    let mut outcomes = vec![rejected];
    outcomes.extend(successes());
    RunOutcome::new(true, 0.7, outcomes)
}
