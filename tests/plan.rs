//! The plan of a dry run against kube-sim: what an apply would create, change or leave as
//! it is, field by field, from the server's own dry-run answer compared with the live object.

use crate::support::{deployment, outcome, run_yaml};
use deploy_action::config::Mode;
use deploy_action::vocab::outcome::{Change, FieldChange};
use deploy_action::vocab::verdict::RunResult;
use kube_sim::{Scenario, Sim};
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);

fn config_map(name: &str, level: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  level: {level}\n")
}

fn secret(password: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {password}\n  user: app\n"
    )
}

fn stream(parts: &[String]) -> String {
    parts.join("---\n")
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_says_what_is_created_changed_and_unchanged_field_by_field() {
    let sim = Sim::start(Scenario::default());
    let first = stream(&[
        config_map("settings", "info"),
        secret("hunter2-first"),
        deployment("web", "registry.local/shop/web:1", ""),
    ]);
    let run = run_yaml(&sim, "app.yaml", &first, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{run:#?}");

    let second = stream(&[
        config_map("settings", "info"),
        secret("hunter2-second"),
        deployment("web", "registry.local/shop/web:2", ""),
        config_map("flags", "\"on\""),
    ]);
    let before = sim.store.current_rv();
    let plan = run_yaml(&sim, "app.yaml", &second, Mode::DryRun, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(
        sim.store.current_rv(),
        before,
        "the dry run wrote something"
    );
    assert_eq!(plan.result, RunResult::Success, "{plan:#?}");

    assert_eq!(
        outcome(&plan, "ConfigMap", "settings").change,
        Some(Change::Unchanged)
    );
    assert_eq!(
        outcome(&plan, "ConfigMap", "flags").change,
        Some(Change::Created)
    );
    assert_eq!(
        outcome(&plan, "Deployment", "web").change,
        Some(Change::Changed {
            fields: vec![FieldChange {
                path: "spec.template.spec.containers[name=web].image".into(),
                before: Some("\"registry.local/shop/web:1\"".into()),
                after: Some("\"registry.local/shop/web:2\"".into()),
            }]
        })
    );
    // The server turns stringData into data; only the changed key is named, no value.
    assert_eq!(
        outcome(&plan, "Secret", "db").change,
        Some(Change::Changed {
            fields: vec![FieldChange {
                path: "data.password".into(),
                before: Some("(secret)".into()),
                after: Some("(secret)".into()),
            }]
        })
    );
    let report = serde_json::to_string(&deploy_action::render::report::to_json(&plan)).unwrap();
    for leaked in ["hunter2", "aHVudGVy"] {
        assert!(!report.contains(leaked), "{leaked} in {report}");
    }
}

#[tokio::test(start_paused = true)]
async fn reapplying_the_same_manifests_plans_no_change() {
    let sim = Sim::start(Scenario::default());
    let yaml = stream(&[
        config_map("settings", "info"),
        deployment("web", "registry.local/shop/web:1", ""),
    ]);
    run_yaml(&sim, "app.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    let plan = run_yaml(&sim, "app.yaml", &yaml, Mode::DryRun, MINUTES_5)
        .await
        .unwrap();
    for o in &plan.outcomes {
        assert_eq!(o.change, Some(Change::Unchanged), "{o:#?}");
    }
}
