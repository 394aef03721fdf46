//! Containers that exit: CrashLoopBackOff under restartPolicy Always, OOM kills, runtime
//! start errors, Job-style pods that succeed or fail, and init containers.

use super::*;
use crate::scenario::{Exit, ImageBehaviour, Scenario};

const WEB: &str = "web-7d4b9c8f5d-x2x9q";
const CRASHING: &str = "registry.local/shop/web:crash";

fn web_pod(image: &str) -> Value {
    pod(
        WEB,
        &json!({"containers": [container("web", image, &json!({}))]}),
    )
}

fn status(sim: &Sim) -> Value {
    get_pod(sim, WEB)["status"].clone()
}

#[tokio::test(start_paused = true)]
async fn a_crashing_container_loops_with_growing_back_off_and_keeps_its_logs() {
    let crash = ImageBehaviour::crashing(
        3,
        false,
        Duration::from_secs(2),
        &["starting", "fatal: no config"],
    );
    let sim = Sim::start(Scenario::builder().image(CRASHING, crash).build());
    let rec = record(&sim);
    sim.create(web_pod(CRASHING)).unwrap();
    run_for(8.0).await;

    let uid = uid(&sim, WEB);
    let pod_ref = format!("{WEB}_shop({uid})");
    let s = scrub(status(&sim));
    assert_eq!(s["phase"], "Running");
    let unready = Some("containers with unready status: [web]");
    assert_eq!(
        s["conditions"][2],
        cond(
            "Ready",
            "False",
            &ts(6),
            Some("ContainersNotReady"),
            unready
        )
    );
    assert_eq!(
        s["containerStatuses"][0],
        json!({
            "name": "web",
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                                  "message": format!("back-off 10s restarting failed container=web pod={pod_ref}")}},
            "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "startedAt": ts(4), "finishedAt": ts(6),
                                         "containerID": "containerd://<id>"}},
            "ready": false,
            "restartCount": 1,
            "image": CRASHING,
            "imageID": "registry.local/shop/web@sha256:<digest>",
            "containerID": "containerd://<id>",
            "started": false
        })
    );
    let lines = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    assert_eq!(
        sim.logs.read(NS, WEB, "web", false),
        lines(&["starting", "fatal: no config"])
    );
    assert_eq!(
        sim.logs.read(NS, WEB, "web", true),
        lines(&["starting", "fatal: no config"])
    );

    run_for(25.0).await;
    // Exits at 3.2, 6.2 and 18.2; restarts at once after the first, then after 10 s.
    assert_eq!(
        rec.container_states(WEB),
        [
            (200, "ContainerCreating/0".to_owned()),
            (1_200, "Ready/0".into()),
            (3_200, "Error/0".into()),
            (4_200, "Ready/1".into()),
            (6_200, "Error/1".into()),
            (7_200, "CrashLoopBackOff/1".into()),
            (16_200, "Ready/2".into()),
            (18_200, "Error/2".into()),
            (19_200, "CrashLoopBackOff/2".into()),
        ]
    );
    let w = &status(&sim)["containerStatuses"][0]["state"]["waiting"];
    assert_eq!(
        w["message"],
        format!("back-off 20s restarting failed container=web pod={pod_ref}")
    );
    let backoff = format!("Back-off restarting failed container web in pod {pod_ref}");
    let backoffs: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "BackOff")
        .map(|e| (e.0, e.1, e.3, e.4))
        .collect();
    assert_eq!(
        backoffs,
        [
            (7_200, "Warning".to_owned(), backoff.clone(), 1),
            (19_200, "Warning".into(), backoff.clone(), 2),
            (29_200, "Warning".into(), backoff, 3)
        ]
    );
    let restarts: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "Pulled")
        .map(|e| (e.0, e.3, e.4))
        .collect();
    let present = format!("Container image \"{CRASHING}\" already present on machine");
    assert_eq!(
        restarts[1..],
        [(4_200, present.clone(), 1), (16_200, present, 2)]
    );
}

#[tokio::test(start_paused = true)]
async fn an_oom_killed_container_reports_exit_137() {
    let oom = ImageBehaviour::crashing(137, true, Duration::from_secs(5), &[]);
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/shop/db:oom", oom)
            .build(),
    );
    sim.create(web_pod("registry.local/shop/db:oom")).unwrap();
    run_for(6.5).await;
    let term = &scrub(status(&sim))["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        *term,
        json!({"exitCode": 137, "reason": "OOMKilled", "startedAt": ts(1), "finishedAt": ts(6), "containerID": "containerd://<id>"})
    );
    run_for(1.0).await;
    let cs = &status(&sim)["containerStatuses"][0];
    assert_eq!(cs["restartCount"], 1);
    assert_eq!(cs["lastState"]["terminated"]["reason"], "OOMKilled");
}

#[tokio::test(start_paused = true)]
async fn a_start_error_is_run_container_error_then_crash_loop() {
    let msg = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/app/serve\": stat /app/serve: no such file or directory: unknown";
    let broken = ImageBehaviour {
        start_error: Some(msg.into()),
        ..ImageBehaviour::default()
    };
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/shop/web:broken", broken)
            .build(),
    );
    let rec = record(&sim);
    sim.create(web_pod("registry.local/shop/web:broken"))
        .unwrap();
    run_for(3.5).await;
    let cs = scrub(status(&sim))["containerStatuses"][0].clone();
    assert_eq!(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(
        cs["lastState"]["terminated"],
        json!({"exitCode": 128, "reason": "StartError", "message": msg, "startedAt": "1970-01-01T00:00:00Z",
               "finishedAt": ts(2), "containerID": "containerd://<id>"})
    );
    let states: Vec<String> = rec
        .container_states(WEB)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert_eq!(
        states,
        [
            "ContainerCreating/0",
            "RunContainerError/0",
            "RunContainerError/1",
            "CrashLoopBackOff/1"
        ]
    );
    let failed: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "Failed")
        .map(|e| (e.3, e.4))
        .collect();
    assert_eq!(
        failed,
        [(format!("Error: {msg}"), 1), (format!("Error: {msg}"), 2)]
    );
}

fn job_pod(name: &str, image: &str) -> Value {
    let mut p = pod(
        name,
        &json!({"restartPolicy": "Never", "containers": [container("migrate", image, &json!({}))]}),
    );
    p["metadata"]["labels"] =
        json!({"batch.kubernetes.io/job-name": "migrate", "job-name": "migrate"});
    p
}

#[tokio::test(start_paused = true)]
async fn job_pods_succeed_or_fail_and_release_their_sandbox() {
    let ok = ImageBehaviour {
        exit: Some(Exit {
            code: 0,
            oom: false,
            after: Duration::from_secs(2),
        }),
        ..ImageBehaviour::default()
    };
    let bad =
        ImageBehaviour::crashing(1, false, Duration::from_secs(2), &["migration 0042 failed"]);
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/shop/migrate:ok", ok)
            .image("registry.local/shop/migrate:bad", bad)
            .build(),
    );
    let rec = record(&sim);
    sim.create(job_pod(
        "migrate-ok-4xk2p",
        "registry.local/shop/migrate:ok",
    ))
    .unwrap();
    let mut failing = job_pod("migrate-bad-9fj3s", "registry.local/shop/migrate:bad");
    failing["spec"]["containers"][0]["terminationMessagePolicy"] = json!("FallbackToLogsOnError");
    sim.create(failing).unwrap();
    run_for(10.0).await;

    let done = sim.get("v1", "Pod", NS, "migrate-ok-4xk2p").unwrap()["status"].clone();
    assert_eq!(done["phase"], "Succeeded");
    assert_eq!(
        done["conditions"],
        json!([
            cond("PodReadyToStartContainers", "False", &ts(4), None, None),
            cond("Initialized", "True", &ts(0), Some("PodCompleted"), None),
            cond("Ready", "False", &ts(3), Some("PodCompleted"), None),
            cond(
                "ContainersReady",
                "False",
                &ts(3),
                Some("PodCompleted"),
                None
            ),
            cond("PodScheduled", "True", &ts(0), None, None),
        ])
    );
    let term = &done["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (term["exitCode"].clone(), term["reason"].clone()),
        (json!(0), json!("Completed"))
    );
    // Both pods exist before the engine's first resync, which takes them by name: the
    // failing one went to sim-node-1, this one to sim-node-2, whose range is 10.244.2.0/24.
    assert_eq!(done["podIP"], "10.244.2.2", "a finished pod keeps its IP");

    let failed = sim.get("v1", "Pod", NS, "migrate-bad-9fj3s").unwrap()["status"].clone();
    assert_eq!(failed["phase"], "Failed");
    assert_eq!(
        failed["conditions"][2],
        cond("Ready", "False", &ts(3), Some("PodFailed"), None)
    );
    assert_eq!(
        failed["conditions"][1],
        cond("Initialized", "True", &ts(0), None, None)
    );
    let term = &failed["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (term["exitCode"].clone(), term["reason"].clone()),
        (json!(1), json!("Error"))
    );
    assert_eq!(term["message"], "migration 0042 failed\n");
    assert_eq!(failed["containerStatuses"][0]["restartCount"], 0);
    let reasons: Vec<String> = rec
        .events("migrate-bad-9fj3s")
        .into_iter()
        .map(|e| e.2)
        .collect();
    assert_eq!(
        reasons,
        ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    );
}

#[tokio::test(start_paused = true)]
async fn init_containers_run_one_by_one_before_the_app() {
    let quick = |secs| ImageBehaviour {
        exit: Some(Exit {
            code: 0,
            oom: false,
            after: Duration::from_secs(secs),
        }),
        ..ImageBehaviour::default()
    };
    let sim = Sim::start(Scenario::builder().image("busybox:1.36", quick(2)).build());
    let rec = record(&sim);
    let spec = json!({
        "initContainers": [container("wait-db", "busybox:1.36", &json!({})), container("migrate", "busybox:1.36", &json!({}))],
        "containers": [container("web", "nginx:1.27", &json!({}))]
    });
    sim.create(pod(WEB, &spec)).unwrap();
    run_for(1.0).await;
    let s = status(&sim);
    assert_eq!(s["phase"], "Pending");
    let incomplete = Some("containers with incomplete status: [wait-db migrate]");
    assert_eq!(
        s["conditions"][1],
        cond(
            "Initialized",
            "False",
            &ts(0),
            Some("ContainersNotInitialized"),
            incomplete
        )
    );
    assert_eq!(
        s["containerStatuses"][0]["state"],
        json!({"waiting": {"reason": "PodInitializing"}})
    );
    assert_eq!(
        s["initContainerStatuses"][1]["state"],
        json!({"waiting": {"reason": "PodInitializing"}})
    );
    run_for(10.0).await;

    let s = scrub(status(&sim));
    assert_eq!(s["phase"], "Running");
    assert_eq!(
        s["conditions"][1],
        cond("Initialized", "True", &ts(6), None, None)
    );
    let init = &s["initContainerStatuses"];
    assert_eq!(init[0]["name"], "wait-db");
    assert_eq!(init[0]["ready"], true);
    assert_eq!(init[0]["started"], false);
    assert_eq!(init[1]["state"]["terminated"]["startedAt"], ts(4));
    // Each exit is noticed on the next relist, a second later; nginx is then pulled (1 s).
    let order: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "Started")
        .map(|e| (e.0, e.3))
        .collect();
    assert_eq!(
        order,
        [
            (1_200, "Started container wait-db".to_owned()),
            (4_200, "Started container migrate".into()),
            (8_200, "Started container web".into())
        ]
    );
}
