//! Jobs: completions with parallelism, the failure back-off and backoffLimit, deadlines,
//! Indexed completion.

use crate::Sim;
use crate::controllers::workloads::testkit::{
    event_lines, eventually, names, pods, run_ready, set_pod, sim, wait,
};
use crate::store::ChangeType;
use serde_json::{Value, json};

fn migrate(spec: &Value) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "shop"},
        "spec": {
            "backoffLimit": 6,
            "template": {
                "metadata": {"labels": {"app": "migrate"}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "migrate", "image": "registry.example.com/shop/migrate:2.4.1",
                                         "command": ["./migrate", "up"]}]}
            }
        }
    });
    job["spec"]
        .as_object_mut()
        .unwrap()
        .extend(spec.as_object().unwrap().clone());
    job
}

fn job(sim: &Sim) -> Value {
    sim.get("batch/v1", "Job", "shop", "migrate").expect("job")
}

fn live_pods(sim: &Sim) -> Vec<Value> {
    pods(sim, "shop")
        .into_iter()
        .filter(|p| !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")))
        .collect()
}

fn conditions(job: &Value) -> Vec<(String, String, String)> {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("reason"), s("message"))
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn completions_three_with_parallelism_two() {
    let sim = sim(2);
    let created = sim
        .create(migrate(&json!({"completions": 3, "parallelism": 2})))
        .unwrap();
    let uid = created["metadata"]["uid"].as_str().unwrap().to_owned();
    wait(1.0).await;
    let first = pods(&sim, "shop");
    assert_eq!(first.len(), 2);
    for p in &first {
        let name = p["metadata"]["name"].as_str().unwrap();
        assert!(name.starts_with("migrate-") && name.len() == 13, "{name}");
        assert_eq!(
            p["metadata"]["finalizers"],
            json!(["batch.kubernetes.io/job-tracking"])
        );
        assert_eq!(
            p["metadata"]["labels"],
            json!({"app": "migrate", "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": "migrate", "controller-uid": uid, "job-name": "migrate"})
        );
        assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "Job");
    }
    assert_eq!(
        job(&sim)["status"],
        json!({"startTime": "2026-01-01T00:00:00Z", "active": 2, "terminating": 0,
        "uncountedTerminatedPods": {}, "ready": 0})
    );

    let (a, b) = (
        first[0]["metadata"]["name"].as_str().unwrap().to_owned(),
        first[1]["metadata"]["name"].as_str().unwrap().to_owned(),
    );
    run_ready(&sim, "shop", &a, "sim-node-1", "10.244.1.30");
    wait(1.0).await;
    assert_eq!(job(&sim)["status"]["ready"], 1);

    let mut changes = sim.store.subscribe();
    set_pod(
        &sim,
        "shop",
        &a,
        "Succeeded",
        false,
        "sim-node-1",
        "10.244.1.30",
    );
    let third = eventually("a third pod", || {
        live_pods(&sim)
            .into_iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
            .find(|n| *n != b)
    })
    .await;
    wait(1.0).await;
    // The finished pod went through uncountedTerminatedPods before being counted.
    let pod_uid = sim.get("v1", "Pod", "shop", &a).unwrap()["metadata"]["uid"].clone();
    let job_statuses: Vec<Value> = std::iter::from_fn(|| changes.try_recv().ok())
        .filter(|c| c.key.plural == "jobs" && c.kind == ChangeType::Modified)
        .map(|c| c.object["status"].clone())
        .collect();
    assert!(
        job_statuses
            .iter()
            .any(|s| s["uncountedTerminatedPods"]["succeeded"] == json!([pod_uid])),
        "{job_statuses:#?}"
    );
    assert!(
        sim.get("v1", "Pod", "shop", &a).unwrap()["metadata"]["finalizers"].is_null(),
        "tracking finalizer removed"
    );
    let s = job(&sim)["status"].clone();
    assert_eq!(
        (
            s["succeeded"].as_i64(),
            s["active"].as_i64(),
            s["uncountedTerminatedPods"].clone()
        ),
        (Some(1), Some(2), json!({}))
    );

    set_pod(
        &sim,
        "shop",
        &b,
        "Succeeded",
        false,
        "sim-node-2",
        "10.244.2.30",
    );
    set_pod(
        &sim,
        "shop",
        &third,
        "Succeeded",
        false,
        "sim-node-1",
        "10.244.1.31",
    );
    wait(1.0).await;
    let done = job(&sim);
    let at = done["status"]["completionTime"]
        .as_str()
        .expect("completionTime")
        .to_owned();
    let cond = |t: &str| {
        json!({"type": t, "status": "True", "lastProbeTime": at, "lastTransitionTime": at,
        "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"})
    };
    assert_eq!(
        done["status"],
        json!({"conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
        "startTime": "2026-01-01T00:00:00Z", "completionTime": at, "succeeded": 3, "terminating": 0,
        "uncountedTerminatedPods": {}, "ready": 0})
    );
    let created = |n: &str| format!("Normal SuccessfulCreate: Created pod: {n}");
    let mut lines = event_lines(&sim, "shop", "migrate");
    lines[..2].sort();
    let mut first_two = [created(&a), created(&b)];
    first_two.sort();
    assert_eq!(
        lines,
        [
            first_two[0].clone(),
            first_two[1].clone(),
            created(&third),
            "Normal Completed: Job completed".into()
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_job_backs_off_then_exceeds_its_backoff_limit() {
    let sim = sim(1);
    sim.create(migrate(&json!({"backoffLimit": 1}))).unwrap();
    let first = eventually("first pod", || pods(&sim, "shop").pop()).await;
    let first = first["metadata"]["name"].as_str().unwrap().to_owned();
    wait(1.0).await;
    set_pod(
        &sim,
        "shop",
        &first,
        "Failed",
        false,
        "sim-node-1",
        "10.244.1.40",
    );
    wait(5.0).await;
    assert_eq!(
        names(&pods(&sim, "shop")),
        std::slice::from_ref(&first),
        "the 10 s back-off holds the replacement"
    );
    assert_eq!(job(&sim)["status"]["failed"], 1);
    let second = eventually("replacement pod", || {
        pods(&sim, "shop")
            .into_iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
            .find(|n| *n != first)
    })
    .await;
    let failed_at = sim.store.clock().elapsed().as_secs_f64();
    assert!(
        (10.0..12.0).contains(&failed_at),
        "replacement after the back-off, at {failed_at}s"
    );

    set_pod(
        &sim,
        "shop",
        &second,
        "Failed",
        false,
        "sim-node-1",
        "10.244.1.41",
    );
    wait(1.0).await;
    let failed = job(&sim);
    assert_eq!(
        conditions(&failed),
        [
            (
                "FailureTarget".into(),
                "BackoffLimitExceeded".into(),
                "Job has reached the specified backoff limit".into()
            ),
            (
                "Failed".into(),
                "BackoffLimitExceeded".into(),
                "Job has reached the specified backoff limit".into()
            ),
        ]
    );
    let s = &failed["status"];
    assert_eq!(
        (
            s["failed"].as_i64(),
            s["active"].as_i64(),
            s["ready"].as_i64(),
            s["terminating"].as_i64()
        ),
        (Some(2), None, Some(0), Some(0))
    );
    assert!(s["completionTime"].is_null());
    assert_eq!(
        event_lines(&sim, "shop", "migrate").last().unwrap(),
        "Warning BackoffLimitExceeded: Job has reached the specified backoff limit"
    );
    wait(30.0).await;
    assert_eq!(
        pods(&sim, "shop").len(),
        2,
        "a failed Job starts nothing more"
    );
}

#[tokio::test(start_paused = true)]
async fn active_deadline_stops_the_running_pod() {
    let sim = sim(1);
    sim.create(migrate(&json!({"activeDeadlineSeconds": 30})))
        .unwrap();
    let pod = eventually("pod", || pods(&sim, "shop").pop()).await;
    let name = pod["metadata"]["name"].as_str().unwrap().to_owned();
    run_ready(&sim, "shop", &name, "sim-node-1", "10.244.1.50");
    wait(29.0).await;
    assert!(conditions(&job(&sim)).is_empty());
    wait(2.0).await;
    let failed = job(&sim);
    let reasons: Vec<_> = conditions(&failed)
        .into_iter()
        .map(|(t, r, _)| (t, r))
        .collect();
    assert_eq!(
        reasons,
        [
            ("FailureTarget".into(), "DeadlineExceeded".into()),
            ("Failed".into(), "DeadlineExceeded".into())
        ]
    );
    assert_eq!(failed["status"]["failed"], 1);
    assert!(pods(&sim, "shop").is_empty(), "the running pod was deleted");
    let events = event_lines(&sim, "shop", "migrate");
    assert!(events.contains(&format!("Normal SuccessfulDelete: Deleted pod: {name}")));
    assert_eq!(
        events.last().unwrap(),
        "Warning DeadlineExceeded: Job was active longer than specified deadline"
    );
}

#[tokio::test(start_paused = true)]
async fn indexed_jobs_give_each_pod_an_index() {
    let sim = sim(1);
    sim.create(migrate(
        &json!({"completions": 2, "parallelism": 2, "completionMode": "Indexed"}),
    ))
    .unwrap();
    wait(1.0).await;
    let list = pods(&sim, "shop");
    let mut indexes: Vec<_> = list
        .iter()
        .map(|p| {
            let name = p["metadata"]["name"].as_str().unwrap();
            let index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(name.starts_with(&format!("migrate-{index}-")), "{name}");
            assert_eq!(p["spec"]["hostname"], format!("migrate-{index}"));
            index
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1"]);
    for p in &list {
        set_pod(
            &sim,
            "shop",
            p["metadata"]["name"].as_str().unwrap(),
            "Succeeded",
            false,
            "sim-node-1",
            "10.244.1.60",
        );
    }
    wait(1.0).await;
    let s = job(&sim)["status"].clone();
    assert_eq!(
        (s["completedIndexes"].as_str(), s["succeeded"].as_i64()),
        (Some("0-1"), Some(2))
    );
    assert_eq!(conditions(&job(&sim)).last().unwrap().0, "Complete");
}
