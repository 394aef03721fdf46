//! CronJobs: a Job per scheduled time, tracked until it completes.

use crate::controllers::workloads::testkit::{event_lines, eventually, pods, set_pod, sim, wait};
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn creates_a_job_at_each_scheduled_time_and_tracks_it() {
    let sim = sim(1);
    sim.create(json!({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": "shop"},
        "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Forbid",
            "jobTemplate": {"metadata": {"labels": {"app": "report"}}, "spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "report", "image": "report:1.0"}]}}}}}
    })).unwrap();
    wait(299.0).await;
    assert!(sim.store.list("batch", "jobs", Some("shop")).0.is_empty());
    assert!(
        sim.get("batch/v1", "CronJob", "shop", "report").unwrap()["status"]
            .get("lastScheduleTime")
            .is_none()
    );

    // 2026-01-01T00:05:00Z is minute 29453765 since the epoch.
    let job = eventually("the 00:05 job", || {
        sim.get("batch/v1", "Job", "shop", "report-29453765")
    })
    .await;
    assert_eq!(
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
        "2026-01-01T00:05:00Z"
    );
    assert_eq!(job["metadata"]["labels"], json!({"app": "report"}));
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    wait(1.0).await;
    let cj = sim.get("batch/v1", "CronJob", "shop", "report").unwrap();
    assert_eq!(cj["status"]["lastScheduleTime"], "2026-01-01T00:05:00Z");
    assert_eq!(cj["status"]["active"][0]["name"], "report-29453765");

    let pod = eventually("the job's pod", || pods(&sim, "shop").pop()).await;
    set_pod(
        &sim,
        "shop",
        pod["metadata"]["name"].as_str().unwrap(),
        "Succeeded",
        false,
        "sim-node-1",
        "10.244.1.70",
    );
    wait(2.0).await;
    let cj = sim.get("batch/v1", "CronJob", "shop", "report").unwrap();
    assert!(cj["status"].get("active").is_none());
    assert!(cj["status"]["lastSuccessfulTime"].is_string());
    assert_eq!(
        event_lines(&sim, "shop", "report"),
        [
            "Normal SuccessfulCreate: Created job report-29453765",
            "Normal SawCompletedJob: Saw completed job: report-29453765, condition: Complete",
        ]
    );
    wait(300.0).await;
    assert!(
        sim.get("batch/v1", "Job", "shop", "report-29453770")
            .is_some(),
        "the 00:10 run"
    );
}
