//! Time that passed while the cluster could not be seen is not evidence: a stability
//! window that runs out while every watch is cut and the API server refuses every request
//! must not end in success. kube-sim's outage starts at the moment the window begins.

use crate::support::{connection, deployment, outcome};
use deploy_action::config::{Config, Mode};
use deploy_action::manifest::load_str;
use deploy_action::pipeline::{self, RegistryAccess};
use deploy_action::vocab::events::{Observer, RunEvent};
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::sync::Arc;
use std::time::Duration;

/// Starts an outage on `sim` the first time a resource says its stability window began.
struct OutageAtWindow {
    sim: Arc<kube_sim::server::ServerState>,
    status: u16,
    lasting: Duration,
    started: Option<Duration>,
    states: Vec<String>,
}

impl Observer for OutageAtWindow {
    fn event(&mut self, at: Duration, event: RunEvent) {
        if let RunEvent::Waiting { state, .. } = event {
            if self.started.is_none() && state.contains("watching 10s for restarts") {
                self.sim.outage.start(self.status, self.lasting);
                self.started = Some(at);
            }
            self.states.push(state);
        }
    }
}

/// A Deployment whose pods exit with code 3 six seconds after they start, deployed with a
/// 10 s window; the outage (`status` for 20 s) starts as the window does.
async fn crash_behind_an_outage(
    status: u16,
) -> (deploy_action::vocab::outcome::RunOutcome, OutageAtWindow) {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/web:2",
                ImageBehaviour::crashing(3, false, Duration::from_secs(6), &["fatal: bad config"]),
            )
            .build(),
    );
    let yaml = deployment("web", "registry.local/shop/web:2", "");
    let manifests = load_str("web.yaml", &yaml).unwrap();
    let config = Config {
        settle: Duration::from_secs(10),
        ..crate::support::config(Mode::Deploy, Duration::from_secs(300))
    };
    let access = RegistryAccess::new(None, &manifests).unwrap();
    let mut observer = OutageAtWindow {
        sim: sim.server.clone(),
        status,
        lasting: Duration::from_secs(20),
        started: None,
        states: Vec::new(),
    };
    let run = pipeline::deploy(
        &connection(&sim),
        &config,
        manifests,
        &access,
        &mut observer,
    )
    .await
    .unwrap();
    (run, observer)
}

#[tokio::test(start_paused = true)]
async fn a_window_that_runs_out_while_the_api_answers_429_is_no_success() {
    let (run, seen) = crash_behind_an_outage(429).await;
    let started = seen.started.expect("the window began");
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (run.result, web.verdict, web.reason),
        (RunResult::Failure, Verdict::Failed, Some(Reason::CrashLoop)),
        "{web:#?}"
    );
    // Decided only after the outage, on what the relist showed.
    assert!(web.seconds > started.as_secs_f64() + 20.0, "{web:#?}");
    assert!(
        seen.states
            .iter()
            .any(|s| s.contains("waiting to see the cluster again")),
        "{:#?}",
        seen.states
    );
}

#[tokio::test(start_paused = true)]
async fn a_window_that_runs_out_while_the_token_is_refused_is_no_success() {
    let (run, _) = crash_behind_an_outage(401).await;
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.verdict, web.reason),
        (Verdict::Failed, Some(Reason::CrashLoop)),
        "{web:#?}"
    );
}
