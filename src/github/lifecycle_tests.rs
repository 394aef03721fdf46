//! The check run lifecycle against a fake GitHub (wiremock) answering as the Checks API
//! does: request shapes, conclusions, batching, the fork fallback, retries and their
//! waits, and no duplicate run after an ambiguous create. Tests run on a paused clock, so
//! back-offs of seconds take none.

use super::client::{ClientOptions, GithubClient};
use super::error::GithubError;
use super::lifecycle::{CheckRun, Finished, UPDATE_INTERVAL, Update};
use super::retry::RetryPolicy;
use crate::render::fixtures;
use crate::render::github::context::ActionsContext;
use crate::render::github::limits;
use crate::render::github::testing::ctx;
use crate::render::github::wire::Conclusion;
use crate::vocab::outcome::RunOutcome;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::time::Instant;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";
const RUN_ID: u64 = 31_415_926_535;
const STARTED: &str = "2025-03-14T09:26:53Z";
const COMPLETED: &str = "2025-03-14T09:31:55Z";
const RUNS: &str = "/repos/acme/shop/check-runs";

fn client(server: &MockServer, api_path: &str, retry: RetryPolicy) -> GithubClient {
    let options = ClientOptions {
        api_url: format!("{}{api_path}", server.uri()),
        retry,
        // Timers for timeouts would fire at once on the paused clock.
        connect_timeout: None,
        read_timeout: None,
        proxies: Some(crate::proxy::ProxyEnv::none()),
    };
    GithubClient::with_options(ctx().repository, TOKEN, options).expect("client")
}

/// A check run as `checks/create` and `checks/update` return it.
fn check_run(status: &str, conclusion: Option<&str>, annotations: usize) -> Value {
    let ctx = ctx();
    json!({
        "id": RUN_ID,
        "head_sha": ctx.head_sha,
        "node_id": "CR_kwDOHb1F3c8AAAAHUvRy5w",
        "external_id": ctx.external_id("deploy"),
        "url": format!("https://api.github.com/repos/acme/shop/check-runs/{RUN_ID}"),
        "html_url": format!("https://github.com/acme/shop/runs/{RUN_ID}"),
        "details_url": "https://github.com/acme/shop/actions/runs/9876543210",
        "status": status,
        "conclusion": conclusion,
        "started_at": STARTED,
        "completed_at": null,
        "output": {
            "title": "in progress: applying manifests",
            "summary": "Applying the manifests and watching every resource to a verdict.",
            "text": null,
            "annotations_count": annotations,
            "annotations_url": format!("https://api.github.com/repos/acme/shop/check-runs/{RUN_ID}/annotations")
        },
        "name": "deploy",
        "check_suite": {"id": 27_182_818_284_u64},
        "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
        "pull_requests": []
    })
}

fn created() -> ResponseTemplate {
    ResponseTemplate::new(201).set_body_json(check_run("in_progress", None, 0))
}

fn updated() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(check_run("completed", Some("failure"), 0))
}

fn github_error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest/checks/runs#create-a-check-run",
        "status": status.to_string()
    }))
}

async fn mount(server: &MockServer, verb: &str, at: &str, answer: ResponseTemplate) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(answer)
        .mount(server)
        .await;
}

async fn mount_once(server: &MockServer, verb: &str, at: &str, answer: ResponseTemplate) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(answer)
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// Method, path and JSON body (null when none) of every request, in order.
async fn requests(server: &MockServer) -> Vec<(String, String, Value)> {
    server
        .received_requests()
        .await
        .expect("recording")
        .into_iter()
        .map(|r| {
            let body = r.body_json().unwrap_or(Value::Null);
            let target = match r.url.query() {
                Some(q) => format!("{}?{q}", r.url.path()),
                None => r.url.path().to_owned(),
            };
            (r.method.to_string(), target, body)
        })
        .collect()
}

async fn start(client: GithubClient) -> Result<CheckRun, GithubError> {
    CheckRun::start(client, &ctx(), "deploy", STARTED.parse().unwrap()).await
}

async fn finish(check: CheckRun, run: &RunOutcome, cancelled: bool) -> Finished {
    check
        .finish(run, cancelled, COMPLETED.parse().unwrap())
        .await
        .expect("finished")
}

#[tokio::test(start_paused = true)]
async fn a_failed_deploy_from_start_to_finish() {
    let server = MockServer::start().await;
    mount(&server, "POST", RUNS, created()).await;
    mount(&server, "PATCH", &format!("{RUNS}/{RUN_ID}"), updated()).await;

    let mut check = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    assert_eq!(check.id(), RUN_ID);
    assert_eq!(
        check.html_url(),
        Some("https://github.com/acme/shop/runs/31415926535")
    );
    let so_far = RunOutcome::new(false, 3.1, vec![fixtures::missing_image()]);
    assert_eq!(check.update(&so_far).await.unwrap(), Update::Throttled);
    tokio::time::advance(UPDATE_INTERVAL).await;
    assert_eq!(check.update(&so_far).await.unwrap(), Update::Sent);
    assert_eq!(check.update(&so_far).await.unwrap(), Update::Throttled);
    let mut outcomes = vec![fixtures::missing_image()];
    outcomes.extend(fixtures::successes().into_iter().take(2));
    let finished = finish(check, &RunOutcome::new(false, 4.2, outcomes), false).await;
    assert_eq!(finished.conclusion, Conclusion::Failure);
    assert_eq!(
        (finished.annotations_sent, finished.annotations_total),
        (1, 1)
    );
    assert!(finished.annotation_error.is_none());

    let received = server.received_requests().await.unwrap();
    assert!(
        received
            .iter()
            .all(|r| r.headers.get("authorization").unwrap() == &format!("Bearer {TOKEN}"))
    );
    let requests = requests(&server).await;
    let shape: Vec<(&str, &str)> = requests
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    let one = format!("{RUNS}/{RUN_ID}");
    assert_eq!(
        shape,
        [
            ("POST", RUNS),
            ("PATCH", one.as_str()),
            ("PATCH", one.as_str())
        ]
    );

    let ctx = ctx();
    assert_eq!(
        requests[0].2,
        json!({
            "name": "deploy",
            "head_sha": ctx.head_sha,
            "status": "in_progress",
            "started_at": STARTED,
            "external_id": "deploy-action/9876543210/2/deploy/deploy",
            "details_url": "https://github.com/acme/shop/actions/runs/9876543210",
            "output": {
                "title": "in progress: applying manifests",
                "summary": "Applying the manifests and watching every resource to a verdict.\n\n\
                            [Workflow run](https://github.com/acme/shop/actions/runs/9876543210)\n"
            }
        })
    );
    // The in-progress update: verdicts so far, no status change, no annotations yet.
    let progress = &requests[1].2;
    assert_eq!(keys(progress), ["output"]);
    assert_eq!(
        progress["output"]["title"],
        "in progress: 1 failed fast: image not found"
    );
    assert!(progress["output"].get("annotations").is_none());
    // The final update completes the run with its annotation.
    let last = &requests[2].2;
    assert_eq!(
        keys(last),
        ["status", "conclusion", "completed_at", "output"]
    );
    assert_eq!(
        (&last["status"], &last["conclusion"], &last["completed_at"]),
        (&json!("completed"), &json!("failure"), &json!(COMPLETED))
    );
    assert_eq!(last["output"]["title"], "1 failed fast: image not found");
    assert!(
        last["output"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("**FAILURE**: 1 failed, 2 succeeded in 4.2s")
    );
    assert!(
        last["output"]["text"]
            .as_str()
            .unwrap()
            .starts_with("### ❌ Image not found: Deployment/web")
    );
    assert_eq!(
        last["output"]["annotations"][0],
        json!({
            "path": "k8s/web.yaml",
            "start_line": 21,
            "end_line": 21,
            "annotation_level": "failure",
            "message": fixtures::missing_image().message,
            "title": "Image not found: Deployment/web",
            "raw_details": last["output"]["annotations"][0]["raw_details"].clone(),
        })
    );
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[track_caller]
fn conclusion_of(requests: &[(String, String, Value)]) -> Value {
    requests.last().expect("a request").2["conclusion"].clone()
}

#[tokio::test(start_paused = true)]
async fn each_result_gets_its_conclusion() {
    let cases = [
        (fixtures::mixed_run(), false, "failure", Conclusion::Failure),
        (
            fixtures::timed_out_run(),
            false,
            "timed_out",
            Conclusion::TimedOut,
        ),
        (
            fixtures::all_success_run(),
            false,
            "success",
            Conclusion::Success,
        ),
        (
            fixtures::mixed_run(),
            true,
            "cancelled",
            Conclusion::Cancelled,
        ),
        (
            fixtures::dry_run_passed(),
            false,
            "neutral",
            Conclusion::Neutral,
        ),
    ];
    for (run, cancelled, word, expected) in cases {
        let server = MockServer::start().await;
        mount(&server, "POST", RUNS, created()).await;
        mount(&server, "PATCH", &format!("{RUNS}/{RUN_ID}"), updated()).await;
        let check = start(client(&server, "", RetryPolicy::default()))
            .await
            .unwrap();
        let finished = finish(check, &run, cancelled).await;
        assert_eq!(finished.conclusion, expected);
        let requests = requests(&server).await;
        assert_eq!(conclusion_of(&requests), json!(word), "{word}");
        if cancelled {
            let title = requests.last().unwrap().2["output"]["title"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(title.starts_with("cancelled: "), "{title}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn annotations_go_fifty_to_a_request_with_title_and_summary_each_time() {
    let server = MockServer::start().await;
    mount(&server, "POST", RUNS, created()).await;
    mount(&server, "PATCH", &format!("{RUNS}/{RUN_ID}"), updated()).await;
    let outcomes: Vec<_> = (0..120)
        .map(|n| {
            let mut o = fixtures::missing_image();
            o.resource.name = format!("web-{n:03}");
            o.annotation_source = Some(fixtures::span("k8s/web.yaml", 21 + n * 40));
            o
        })
        .collect();
    let check = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    let finished = finish(check, &RunOutcome::new(false, 9.0, outcomes), false).await;
    assert_eq!(
        (finished.annotations_sent, finished.annotations_total),
        (120, 120)
    );

    let patches: Vec<Value> = requests(&server)
        .await
        .into_iter()
        .skip(1)
        .map(|(_, _, body)| body)
        .collect();
    let sizes: Vec<usize> = patches
        .iter()
        .map(|p| p["output"]["annotations"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [50, 50, 20]);
    assert_eq!(patches[0]["status"], "completed");
    for (i, patch) in patches.iter().enumerate() {
        let output = &patch["output"];
        assert_eq!(output["title"], "120 failed fast: image not found");
        let summary = output["summary"].as_str().unwrap();
        assert!(
            summary.len() <= limits::TEXT_MAX && summary.starts_with("**FAILURE**: 120 failed")
        );
        assert!(output["text"].as_str().unwrap().len() <= limits::TEXT_MAX);
        if i > 0 {
            assert_eq!(
                keys(patch),
                ["output"],
                "later batches only add annotations"
            );
        }
    }
    let lines: Vec<u64> = patches
        .iter()
        .flat_map(|p| p["output"]["annotations"].as_array().unwrap().clone())
        .map(|a| a["start_line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (0..120).map(|n| 21 + n * 40).collect::<Vec<u64>>());
}

#[tokio::test(start_paused = true)]
async fn a_read_only_token_asks_for_the_fallback_without_retrying() {
    let server = MockServer::start().await;
    mount(
        &server,
        "POST",
        RUNS,
        github_error(403, "Resource not accessible by integration"),
    )
    .await;
    let err = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap_err();
    assert!(err.is_fallback(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the token may not create the check run (403: Resource not accessible by integration); \
         reporting with workflow commands"
    );
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_502_is_retried_after_a_back_off_and_a_look_for_the_run() {
    let server = MockServer::start().await;
    mount_once(
        &server,
        "POST",
        RUNS,
        ResponseTemplate::new(502).set_body_string("<html>502 Bad Gateway</html>"),
    )
    .await;
    mount(&server, "POST", RUNS, created()).await;
    let list = format!("/repos/acme/shop/commits/{}/check-runs", ctx().head_sha);
    mount(
        &server,
        "GET",
        &list,
        ResponseTemplate::new(200).set_body_json(json!({"total_count": 0, "check_runs": []})),
    )
    .await;

    let began = Instant::now();
    let check = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    assert_eq!(check.id(), RUN_ID);
    assert!(began.elapsed() >= RetryPolicy::default().base_delay);
    let requests = requests(&server).await;
    let shape: Vec<(&str, &str)> = requests
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    let lookup = format!("{list}?check_name=deploy&filter=all&per_page=100");
    assert_eq!(
        shape,
        [("POST", RUNS), ("GET", lookup.as_str()), ("POST", RUNS)]
    );
    assert_eq!(requests[0].2, requests[2].2, "the same create, resent");
}

#[tokio::test(start_paused = true)]
async fn a_create_that_answered_502_but_landed_is_not_repeated() {
    let server = MockServer::start().await;
    mount_once(&server, "POST", RUNS, ResponseTemplate::new(502)).await;
    mount(&server, "POST", RUNS, created()).await;
    let ours = check_run("in_progress", None, 0);
    let mut other_leg = check_run("completed", Some("success"), 0);
    other_leg["id"] = json!(27);
    other_leg["external_id"] = json!("deploy-action/9876543210/1/deploy/deploy");
    Mock::given(method("GET"))
        .and(path(format!(
            "/repos/acme/shop/commits/{}/check-runs",
            ctx().head_sha
        )))
        .and(query_param("check_name", "deploy"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"total_count": 2, "check_runs": [other_leg, ours]})),
        )
        .mount(&server)
        .await;

    let check = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    assert_eq!(
        check.id(),
        RUN_ID,
        "found by its external_id, not the first in the list"
    );
    let posts = requests(&server)
        .await
        .into_iter()
        .filter(|(m, _, _)| m == "POST")
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test(start_paused = true)]
async fn rate_limits_wait_as_long_as_github_asks() {
    // 429 with Retry-After: waited for, and no lookup: a refused request did not land.
    let server = MockServer::start().await;
    mount_once(
        &server,
        "POST",
        RUNS,
        ResponseTemplate::new(429).insert_header("retry-after", "7"),
    )
    .await;
    mount(&server, "POST", RUNS, created()).await;
    let began = Instant::now();
    start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    assert!(
        began.elapsed() >= Duration::from_secs(7),
        "{:?}",
        began.elapsed()
    );
    let methods: Vec<String> = requests(&server)
        .await
        .into_iter()
        .map(|(m, _, _)| m)
        .collect();
    assert_eq!(methods, ["POST", "POST"]);

    // A secondary rate limit without Retry-After: at least a minute, and not a fallback.
    let server = MockServer::start().await;
    mount_once(
        &server,
        "POST",
        RUNS,
        github_error(403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
    )
    .await;
    mount(&server, "POST", RUNS, created()).await;
    let began = Instant::now();
    start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    assert!(
        began.elapsed() >= Duration::from_secs(60),
        "{:?}",
        began.elapsed()
    );

    // Asked to wait longer than allowed: an error, at once.
    let server = MockServer::start().await;
    mount(
        &server,
        "POST",
        RUNS,
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
    )
    .await;
    let err = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create the check run: rate limited for 3600 more seconds"
    );
}

#[tokio::test(start_paused = true)]
async fn an_annotation_batch_that_landed_despite_a_502_is_not_sent_twice() {
    let server = MockServer::start().await;
    let one = format!("{RUNS}/{RUN_ID}");
    mount(&server, "POST", RUNS, created()).await;
    // First batch fine; the second answers 502 after being applied; the third is fine.
    mount_once(&server, "PATCH", &one, updated()).await;
    mount_once(&server, "PATCH", &one, ResponseTemplate::new(502)).await;
    mount(&server, "PATCH", &one, updated()).await;
    mount(
        &server,
        "GET",
        &one,
        ResponseTemplate::new(200).set_body_json(check_run("completed", Some("failure"), 100)),
    )
    .await;
    let outcomes: Vec<_> = (0..120)
        .map(|n| {
            let mut o = fixtures::missing_image();
            o.resource.name = format!("web-{n:03}");
            o
        })
        .collect();
    let check = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap();
    let finished = finish(check, &RunOutcome::new(false, 9.0, outcomes), false).await;
    assert_eq!(finished.annotations_sent, 120);
    let shape: Vec<String> = requests(&server)
        .await
        .into_iter()
        .map(|(m, _, _)| m)
        .collect();
    assert_eq!(shape, ["POST", "PATCH", "PATCH", "GET", "PATCH"]);
}

#[tokio::test(start_paused = true)]
async fn enterprise_server_paths_keep_their_api_prefix() {
    let server = MockServer::start().await;
    mount(
        &server,
        "POST",
        "/api/v3/repos/acme/shop/check-runs",
        created(),
    )
    .await;
    mount(
        &server,
        "PATCH",
        &format!("/api/v3/repos/acme/shop/check-runs/{RUN_ID}"),
        updated(),
    )
    .await;
    let check = start(client(&server, "/api/v3", RetryPolicy::default()))
        .await
        .unwrap();
    finish(check, &fixtures::all_success_run(), false).await;
    let paths: Vec<String> = requests(&server)
        .await
        .into_iter()
        .map(|(_, p, _)| p)
        .collect();
    assert_eq!(
        paths,
        [
            "/api/v3/repos/acme/shop/check-runs",
            &format!("/api/v3/repos/acme/shop/check-runs/{RUN_ID}")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn errors_are_values_and_never_show_the_token() {
    // GitHub echoing the token in an error message.
    let server = MockServer::start().await;
    mount(
        &server,
        "POST",
        RUNS,
        github_error(422, &format!("Invalid request: token {TOKEN} has no scope")),
    )
    .await;
    let err = start(client(&server, "", RetryPolicy::default()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create the check run: GitHub answered 422: Invalid request: token *** has no scope"
    );
    assert!(!format!("{err:?}").contains(TOKEN));
    assert_eq!(requests(&server).await.len(), 1, "a 422 is not retried");

    // A secret in the cluster's text never reaches GitHub.
    let server = MockServer::start().await;
    mount(&server, "POST", RUNS, created()).await;
    mount(&server, "PATCH", &format!("{RUNS}/{RUN_ID}"), updated()).await;
    let mut outcome = fixtures::crash_loop();
    outcome.message = format!("GITHUB_TOKEN={TOKEN} and db password hunter2");
    let masked = client(&server, "", RetryPolicy::default()).with_secrets(["hunter2".to_owned()]);
    let check = start(masked).await.unwrap();
    finish(check, &RunOutcome::new(false, 1.0, vec![outcome]), false).await;
    let sent: Vec<u8> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .flat_map(|r| r.body)
        .collect();
    let sent = String::from_utf8(sent).unwrap();
    assert!(!sent.contains(TOKEN) && !sent.contains("hunter2"));
    assert!(sent.contains("GITHUB_TOKEN=*** and db password ***"));

    // GitHub unreachable: retried, then an error naming what failed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let options = ClientOptions {
        api_url: format!("http://{closed}"),
        retry: RetryPolicy {
            max_attempts: 2,
            ..RetryPolicy::default()
        },
        connect_timeout: None,
        read_timeout: None,
        proxies: Some(crate::proxy::ProxyEnv::none()),
    };
    let dead = GithubClient::with_options(ctx().repository, TOKEN, options).unwrap();
    let err = start(dead).await.unwrap_err();
    // The create failed without an answer, so the run was looked for before another
    // create; that look-up failing too ends it.
    assert!(
        matches!(
            err,
            GithubError::Transport {
                what: "look up the check run",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("Connection refused"), "{err}");
    assert!(!err.to_string().contains(TOKEN));
}

#[tokio::test(start_paused = true)]
async fn a_pull_request_check_goes_on_its_head_commit() {
    let mut env = crate::render::github::testing::env();
    env.insert("GITHUB_EVENT_NAME".into(), "pull_request".into());
    let payload = format!(
        r#"{{"action":"opened","number":42,"pull_request":{{"head":{{"ref":"feature/web","sha":"{}"}}}}}}"#,
        crate::render::github::testing::HEAD_SHA
    );
    let ctx = ActionsContext::from_env(&env, Some(&payload), None).unwrap();
    let server = MockServer::start().await;
    mount(&server, "POST", RUNS, created()).await;
    let github = client(&server, "", RetryPolicy::default());
    CheckRun::start(github, &ctx, "deploy", STARTED.parse().unwrap())
        .await
        .unwrap();
    let body = &requests(&server).await[0].2;
    assert_eq!(body["head_sha"], crate::render::github::testing::HEAD_SHA);
}
