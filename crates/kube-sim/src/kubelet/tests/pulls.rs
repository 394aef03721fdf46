//! Image pulls that fail: back-off timings, the waiting reasons and messages by version,
//! merged events with rising counts, and a registry that recovers.

use super::*;
use crate::scenario::{ImageBehaviour, Scenario};

const API: &str = "api-5f7c9d8b6-qm4ts";

fn api_pod(image: &str) -> Value {
    pod(
        API,
        &json!({"containers": [container("api", image, &json!({}))]}),
    )
}

fn waiting(sim: &Sim) -> Value {
    get_pod(sim, API)["status"]["containerStatuses"][0]["state"]["waiting"].clone()
}

const MISSING: &str = "registry.local/shop/api:missing";
const NOT_FOUND: &str = "rpc error: code = NotFound desc = failed to pull and unpack image \"registry.local/shop/api:missing\": failed to resolve reference \"registry.local/shop/api:missing\": registry.local/shop/api:missing: not found";

/// Runs a pod whose image does not exist for 70.5 s on `version`; returns the
/// ImagePullBackOff waiting state seen at 5 s.
async fn not_found_on(version: &str) -> Value {
    let sim = Sim::start(
        Scenario::builder()
            .kubernetes_version(version)
            .image(MISSING, ImageBehaviour::not_found())
            .build(),
    );
    let rec = record(&sim);
    sim.create(api_pod(MISSING)).unwrap();
    run_for(0.5).await;
    assert_eq!(
        waiting(&sim),
        json!({"reason": "ErrImagePull", "message": NOT_FOUND})
    );
    let status = get_pod(&sim, API)["status"].clone();
    assert_eq!(status["phase"], "Pending");
    assert_eq!(status["podIP"], "10.244.1.2");
    assert_eq!(
        status["conditions"][0],
        cond("PodReadyToStartContainers", "True", &ts(0), None, None)
    );
    run_for(4.5).await;
    let backing_off = waiting(&sim);
    run_for(65.5).await;

    // Pulls at 0, 10, 30 and 70 s after the kubelet's first sync (back-off 10, 20, 40 s).
    assert_eq!(rec.times(API, "Pulling"), [200, 10_200, 30_200, 70_200]);
    // The worker re-syncs a second after each failure, then every 10 s while backing off.
    assert_eq!(
        rec.times(API, "BackOff"),
        [1_200, 11_200, 21_200, 31_200, 41_200, 51_200, 61_200]
    );
    let counts = |reason: &str, msg: &str| -> Vec<i64> {
        rec.events(API)
            .into_iter()
            .filter(|e| e.2 == reason && e.3 == msg)
            .map(|e| e.4)
            .collect()
    };
    assert_eq!(
        counts("Pulling", &format!("Pulling image \"{MISSING}\"")),
        [1, 2, 3, 4]
    );
    assert_eq!(
        counts(
            "Failed",
            &format!("Failed to pull image \"{MISSING}\": {NOT_FOUND}")
        ),
        [1, 2, 3, 4]
    );
    assert_eq!(counts("Failed", "Error: ErrImagePull"), [1, 2, 3, 4]);
    assert_eq!(
        counts("BackOff", &format!("Back-off pulling image \"{MISSING}\"")),
        [1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(
        counts("Failed", "Error: ImagePullBackOff"),
        [1, 2, 3, 4, 5, 6, 7]
    );
    let first = &rec.events(API)[1..4];
    let kinds: Vec<_> = first
        .iter()
        .map(|e| (e.0, e.1.as_str(), e.2.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (200, "Normal", "Pulling"),
            (200, "Warning", "Failed"),
            (200, "Warning", "Failed")
        ]
    );
    assert_eq!(
        rec.container_states(API),
        [
            (200, "ContainerCreating/0".to_owned()),
            (200, "ErrImagePull/0".into()),
            (1_200, "ImagePullBackOff/0".into()),
            (10_200, "ErrImagePull/0".into()),
            (11_200, "ImagePullBackOff/0".into()),
            (30_200, "ErrImagePull/0".into()),
            (31_200, "ImagePullBackOff/0".into()),
            (70_200, "ErrImagePull/0".into()),
        ]
    );
    let events = sim.store.list("", "events", Some(NS)).0;
    let backoff = events.iter().find(|e| e["reason"] == "BackOff").unwrap();
    assert_eq!(
        (
            backoff["firstTimestamp"].clone(),
            backoff["lastTimestamp"].clone()
        ),
        (json!(ts(1)), json!(ts(61)))
    );
    backing_off
}

#[tokio::test(start_paused = true)]
async fn image_not_found_on_1_31_backs_off_with_a_bare_message() {
    let w = not_found_on("1.31").await;
    assert_eq!(
        w,
        json!({"reason": "ImagePullBackOff", "message": format!("Back-off pulling image \"{MISSING}\"")})
    );
}

#[tokio::test(start_paused = true)]
async fn image_not_found_on_1_33_backs_off_with_the_cause() {
    let w = not_found_on("1.33").await;
    let message = format!("Back-off pulling image \"{MISSING}\": ErrImagePull: {NOT_FOUND}");
    assert_eq!(w, json!({"reason": "ImagePullBackOff", "message": message}));
}

#[tokio::test(start_paused = true)]
async fn a_private_image_is_denied() {
    let image = "registry.local/shop/api:private";
    let sim = Sim::start(
        Scenario::builder()
            .image(image, ImageBehaviour::unauthorized())
            .build(),
    );
    let rec = record(&sim);
    sim.create(api_pod(image)).unwrap();
    run_for(0.5).await;
    let denied = format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"
    );
    assert_eq!(
        waiting(&sim),
        json!({"reason": "ErrImagePull", "message": denied})
    );
    let failed = rec
        .events(API)
        .into_iter()
        .find(|e| e.2 == "Failed")
        .unwrap();
    assert_eq!(
        failed.3,
        format!("Failed to pull image \"{image}\": {denied}")
    );
}

#[tokio::test(start_paused = true)]
async fn a_flaky_registry_recovers_on_the_third_attempt() {
    let image = "registry.local/shop/api:flaky";
    let flaky = ImageBehaviour::flaky(&["429", "503"], Duration::from_secs(1));
    let sim = Sim::start(Scenario::builder().image(image, flaky).build());
    let rec = record(&sim);
    sim.create(api_pod(image)).unwrap();
    run_for(40.0).await;

    let url = "https://registry.local/v2/shop/api/manifests/flaky";
    let err = |status: &str| {
        format!(
            "Failed to pull image \"{image}\": rpc error: code = Unknown desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": unexpected status from HEAD request to {url}: {status}"
        )
    };
    let pulls: Vec<(u64, String)> = rec
        .events(API)
        .into_iter()
        .filter(|e| e.2 == "Pulled" || (e.2 == "Failed" && e.3.starts_with("Failed to pull")))
        .map(|e| (e.0, e.3))
        .collect();
    assert_eq!(
        pulls,
        [
            (200, err("429 Too Many Requests")),
            (10_200, err("503 Service Unavailable")),
            (
                31_200,
                format!(
                    "Successfully pulled image \"{image}\" in 1s (1s including waiting). Image size: 28 bytes."
                )
            ),
        ]
    );
    let cs = &get_pod(&sim, API)["status"]["containerStatuses"][0];
    assert_eq!(cs["state"], json!({"running": {"startedAt": ts(31)}}));
    assert_eq!(
        (cs["restartCount"].clone(), cs["ready"].clone()),
        (json!(0), json!(true))
    );
    assert_eq!(get_pod(&sim, API)["status"]["phase"], "Running");
}

#[tokio::test(start_paused = true)]
async fn pulls_on_a_node_are_serialised_and_never_policy_needs_the_image() {
    let image = "registry.local/shop/api:2.0";
    let sim = Sim::start(
        Scenario::builder()
            .nodes(1)
            .image(image, ImageBehaviour::pulls_in(Duration::from_secs(3)))
            .build(),
    );
    let rec = record(&sim);
    sim.create(api_pod(image)).unwrap();
    let second = "worker-6c8f7b9d4-plm2x";
    sim.create(pod(
        second,
        &json!({"containers": [container("worker", image, &json!({}))]}),
    ))
    .unwrap();
    let never = "cron-28461840-x7c2v";
    let never_spec = json!({"containers": [container("cron", "registry.local/shop/cron:1", &json!({"imagePullPolicy": "Never"}))]});
    sim.create(pod(never, &never_spec)).unwrap();
    run_for(10.0).await;

    let pulled = |name: &str| {
        rec.events(name)
            .into_iter()
            .find(|e| e.2 == "Pulled")
            .map(|e| (e.0, e.3))
    };
    let msg = |took: &str, total: &str| {
        format!(
            "Successfully pulled image \"{image}\" in {took} ({total} including waiting). Image size: 28 bytes."
        )
    };
    assert_eq!(pulled(API), Some((3_200, msg("3s", "3s"))));
    assert_eq!(
        pulled(second),
        Some((3_700, msg("500ms", "3.5s"))),
        "waits for the node's pull slot, then re-resolves"
    );
    let w = get_pod(&sim, never)["status"]["containerStatuses"][0]["state"]["waiting"].clone();
    let not_present =
        "Container image \"registry.local/shop/cron:1\" is not present with pull policy of Never";
    assert_eq!(
        w,
        json!({"reason": "ErrImageNeverPull", "message": not_present})
    );
    let reasons: Vec<_> = rec
        .events(never)
        .into_iter()
        .filter(|e| e.0 <= 200)
        .map(|e| (e.0, e.2, e.3))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                100,
                "Scheduled".to_owned(),
                format!("Successfully assigned shop/{never} to sim-node-1")
            ),
            (200, "ErrImageNeverPull".into(), not_present.into()),
            (200, "Failed".into(), "Error: ErrImageNeverPull".into()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_unparseable_reference_is_invalid_image_name() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    sim.create(api_pod("registry.local/Shop/API:1.0")).unwrap();
    run_for(12.0).await;
    let message = "Failed to apply default image tag \"registry.local/Shop/API:1.0\": couldn't parse image name \"registry.local/Shop/API:1.0\": invalid reference format: repository name (Shop/API) must be lowercase";
    assert_eq!(
        waiting(&sim),
        json!({"reason": "InvalidImageName", "message": message})
    );
    let inspect: Vec<_> = rec
        .events(API)
        .into_iter()
        .filter(|e| e.2 == "InspectFailed")
        .map(|e| (e.0, e.1, e.3, e.4))
        .collect();
    assert_eq!(
        inspect,
        [
            (200, "Warning".to_owned(), message.to_owned(), 1),
            (1_200, "Warning".into(), message.into(), 2),
            (11_200, "Warning".into(), message.into(), 3)
        ]
    );
    assert_eq!(rec.times(API, "Pulling"), Vec::<u64>::new());
}
