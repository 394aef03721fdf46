//! The check run's words for the runs deploy-action sees most: a missing image, a slow
//! registry, a clean deploy; and the limits and escaping around them.

use super::check_run::{Stage, annotations, check_output, conclusion, summary, text, title};
use super::commands::workflow_commands;
use super::limits;
use super::outputs::step_summary;
use super::testing::ctx;
use super::wire::{AnnotationLevel, Conclusion};
use crate::render::{Redactor, fixtures};
use crate::vocab::outcome::{LogTail, RunOutcome};
use crate::vocab::verdict::Reason;

/// Snapshot files named without the module prefix, as the other renderers do.
fn snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Everything a completed run puts on GitHub, in one reviewable text.
fn everything(run: &RunOutcome) -> String {
    let ctx = ctx();
    let output = check_output(run, Stage::Completed, &ctx);
    format!(
        "== title ==\n{}\n\n== summary ==\n{}\n== text ==\n{}\n\n== annotations ==\n{}\n\n\
         == workflow commands ==\n{}\n",
        output.title,
        output.summary,
        output.text.as_deref().unwrap_or("(none)"),
        serde_json::to_string_pretty(&output.annotations).unwrap(),
        workflow_commands(run, &ctx).join("\n")
    )
}

fn missing_image_run() -> RunOutcome {
    let mut outcomes = vec![fixtures::missing_image()];
    outcomes.extend(fixtures::successes().into_iter().take(2));
    RunOutcome::new(false, 4.2, outcomes)
}

#[test]
fn missing_image() {
    let run = missing_image_run();
    snapshot("github_missing_image", &everything(&run));
    snapshot(
        "github_missing_image_step_summary",
        &step_summary(
            &run,
            "deploy",
            Some("https://github.com/acme/shop/runs/31415926535"),
            &ctx(),
        ),
    );
}

#[test]
fn slow_registry() {
    let run = fixtures::timed_out_run();
    snapshot("github_slow_registry", &everything(&run));
    snapshot(
        "github_slow_registry_step_summary",
        &step_summary(&run, "deploy", None, &ctx()),
    );
}

#[test]
fn success() {
    let run = fixtures::all_success_run();
    snapshot("github_success", &everything(&run));
    snapshot(
        "github_success_step_summary",
        &step_summary(&run, "deploy", None, &ctx()),
    );
}

#[track_caller]
fn case_title(run: &RunOutcome, stage: Stage, expected: &str) {
    assert_eq!(title(run, stage), expected);
}

#[test]
fn titles_name_counts_and_reasons_in_one_line() {
    use Stage::*;
    case_title(
        &fixtures::mixed_run(),
        Completed,
        "2 failed fast: image not found, crash loop; 1 timed out: registry slow",
    );
    // The most frequent reason first, then manifest order.
    let mut second = fixtures::missing_image();
    second.resource.name = "web-canary".into();
    let run = RunOutcome::new(
        false,
        9.0,
        vec![fixtures::crash_loop(), fixtures::missing_image(), second],
    );
    case_title(
        &run,
        Completed,
        "3 failed fast: image not found, crash loop",
    );
    let mut lost = fixtures::crash_loop();
    lost.reason = Some(Reason::PvcLost);
    case_title(
        &RunOutcome::new(false, 1.0, vec![lost]),
        Completed,
        "1 failed fast: PVC lost",
    );
    case_title(
        &fixtures::all_success_run(),
        Completed,
        "4 resources deployed",
    );
    // restart, run and watch say what they did.
    for (mode, title) in [
        (crate::config::Mode::Restart, "4 resources restarted"),
        (crate::config::Mode::Run, "4 resources completed"),
        (crate::config::Mode::Watch, "4 resources ready"),
    ] {
        let mut run = fixtures::all_success_run();
        run.done = mode.done();
        case_title(&run, Completed, title);
    }
    let one = vec![fixtures::successes().remove(0)];
    case_title(
        &RunOutcome::new(false, 0.2, one.clone()),
        Completed,
        "1 resource deployed",
    );
    case_title(
        &RunOutcome::new(false, 0.2, vec![]),
        Completed,
        "no resources to deploy",
    );
    case_title(
        &fixtures::dry_run_passed(),
        Completed,
        "dry run: 5 resources validated",
    );
    case_title(
        &fixtures::dry_run_rejected(),
        Completed,
        "dry run: 1 failed: apply rejected",
    );
    case_title(
        &RunOutcome::new(false, 0.0, vec![]),
        InProgress,
        "in progress: waiting for the first verdict",
    );
    case_title(
        &missing_image_run(),
        InProgress,
        "in progress: 1 failed fast: image not found",
    );
    case_title(
        &RunOutcome::new(false, 3.0, one),
        Cancelled,
        "cancelled: 1 resource deployed",
    );
    case_title(
        &fixtures::stopped_after_failure_run(),
        Completed,
        "1 failed fast: image not found; 2 unfinished",
    );
    case_title(
        &fixtures::dry_run_not_validated(),
        Completed,
        "dry run: 1 resource validated, 1 not validated by the server",
    );
}

#[test]
fn unfinished_resources_are_in_the_table_with_their_reason_but_get_no_annotation() {
    let run = fixtures::stopped_after_failure_run();
    let table = summary(&run, Stage::Completed, &ctx());
    assert!(
        table.contains("| Service/web | ⏹ unfinished | `stopped_after_failure` |"),
        "{table}"
    );
    let annotated: Vec<_> = annotations(&run, &ctx())
        .into_iter()
        .map(|a| a.title.unwrap_or_default())
        .collect();
    assert_eq!(annotated, ["Image not found: Deployment/web"]);
    let dry = summary(&fixtures::dry_run_not_validated(), Stage::Completed, &ctx());
    assert!(dry.contains("`not_validated`"), "{dry}");
}

#[track_caller]
fn case_conclusion(run: &RunOutcome, cancelled: bool, expected: Conclusion) {
    assert_eq!(conclusion(run, cancelled), expected);
}

#[test]
fn conclusions_follow_the_result_and_a_clean_dry_run_is_neutral() {
    case_conclusion(&fixtures::mixed_run(), false, Conclusion::Failure);
    case_conclusion(&fixtures::timed_out_run(), false, Conclusion::TimedOut);
    case_conclusion(&fixtures::all_success_run(), false, Conclusion::Success);
    case_conclusion(&fixtures::dry_run_passed(), false, Conclusion::Neutral);
    case_conclusion(&fixtures::dry_run_rejected(), false, Conclusion::Failure);
    case_conclusion(
        &fixtures::dry_run_not_validated(),
        false,
        Conclusion::Neutral,
    );
    case_conclusion(
        &fixtures::stopped_after_failure_run(),
        false,
        Conclusion::Failure,
    );
    case_conclusion(&fixtures::mixed_run(), true, Conclusion::Cancelled);
    case_conclusion(&fixtures::all_success_run(), true, Conclusion::Cancelled);
}

#[test]
fn the_summary_table_puts_hard_failures_first_then_timeouts() {
    let summary = summary(&fixtures::mixed_run(), Stage::Completed, &ctx());
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Resource"))
        .collect();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split(" | ").next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "| Deployment/web",
            "| Deployment/api",
            "| Deployment/worker",
            "| ConfigMap/web-config",
            "| Service/web",
            "| ClusterRole/shop-reader"
        ]
    );
    assert!(summary.starts_with("**FAILURE**: 2 failed, 1 timed out, 3 succeeded in 5m01s\n"));
}

#[test]
fn in_progress_and_cancelled_summaries_say_so() {
    let run = missing_image_run();
    let s = summary(&run, Stage::InProgress, &ctx());
    assert!(
        s.starts_with("**IN PROGRESS**: 1 failed, 2 succeeded so far\n"),
        "{s}"
    );
    let s = summary(&run, Stage::Cancelled, &ctx());
    assert!(
        s.starts_with("**CANCELLED** after 4.2s: 1 failed, 2 succeeded before the interruption\n"),
        "{s}"
    );
    let s = summary(
        &RunOutcome::new(false, 0.0, vec![]),
        Stage::InProgress,
        &ctx(),
    );
    assert!(
        s.starts_with("**IN PROGRESS**: no verdicts so far\n\nNo resources.\n"),
        "{s}"
    );
}

#[test]
fn namespaces_show_when_the_run_spans_several() {
    let mut billing = fixtures::missing_image();
    billing.resource.namespace = Some("billing".into());
    let run = RunOutcome::new(false, 5.0, vec![fixtures::missing_image(), billing]);
    let s = summary(&run, Stage::Completed, &ctx());
    assert!(
        s.contains("| Deployment/shop/web |") && s.contains("| Deployment/billing/web |"),
        "{s}"
    );
    let t = text(&run, &ctx()).unwrap();
    assert!(
        t.contains("### ❌ Image not found: Deployment/web (namespace billing)"),
        "{t}"
    );
}

#[test]
fn a_huge_run_fits_every_limit_and_says_what_it_left_out() {
    let mut outcomes = Vec::new();
    for n in 0..1_500 {
        let mut o = fixtures::crash_loop();
        o.resource.name = format!("api-{n}");
        if n < 3 {
            o.message = format!("{} 🚀", "x".repeat(70_000));
        }
        outcomes.push(o);
    }
    let run = RunOutcome::new(false, 600.0, outcomes);
    let output = check_output(&run, Stage::Completed, &ctx());
    assert!(output.title.chars().count() <= limits::TITLE_MAX_CHARS);
    assert!(output.summary.len() <= limits::TEXT_MAX);
    assert!(
        output
            .summary
            .contains("more resources, listed in the job log.")
    );
    let text = output.text.unwrap();
    assert!(text.len() <= limits::TEXT_MAX);
    assert!(text.contains("more problems, with their evidence in the job log."));
    // Every fence opened is closed: the cut happens inside blocks, not across them.
    assert_eq!(text.lines().filter(|l| l.starts_with("```")).count() % 2, 0);
    assert_eq!(output.annotations.len(), 1_500);
    for a in &output.annotations[..3] {
        assert!(a.message.len() <= limits::ANNOTATION_FIELD_MAX);
        assert!(
            a.message.ends_with("… (truncated: 4506 more characters)"),
            "{}",
            &a.message[65_000..]
        );
    }
}

#[test]
fn annotations_point_at_the_line_to_fix_with_the_right_level() {
    let found = annotations(&fixtures::mixed_run(), &ctx());
    let summary: Vec<(&str, usize, AnnotationLevel, &str)> = found
        .iter()
        .map(|a| {
            (
                a.path.as_str(),
                a.start_line,
                a.annotation_level,
                a.title.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "k8s/web.yaml",
                21,
                AnnotationLevel::Failure,
                "Image not found: Deployment/web"
            ),
            (
                "k8s/api.yaml",
                1,
                AnnotationLevel::Failure,
                "Crash loop: Deployment/api"
            ),
            (
                "k8s/worker.yaml",
                18,
                AnnotationLevel::Warning,
                "Timed out: registry slow: Deployment/worker"
            ),
        ]
    );
    assert!(found.iter().all(|a| a.start_line == a.end_line));
    let details = found[1].raw_details.as_deref().unwrap();
    assert!(details.contains(
        "Logs of pod api-5f8d7c6b9-k4m2p, container api (previous instance), last 25 of 30 lines:"
    ));
    assert!(details.ends_with("JavaScript heap out of memory"));
}

#[test]
fn problems_without_a_repository_file_get_no_annotation() {
    let mut from_stdin = fixtures::missing_image();
    from_stdin.source = Some(fixtures::span("-", 1));
    from_stdin.annotation_source = Some(fixtures::span("-", 21));
    let mut outside = fixtures::slow_registry();
    outside.annotation_source = Some(fixtures::span("/tmp/rendered/worker.yaml", 18));
    let run = RunOutcome::new(false, 5.0, vec![from_stdin, outside]);
    assert!(annotations(&run, &ctx()).is_empty());
    let t = text(&run, &ctx()).unwrap();
    assert!(t.contains("At `-:21`;"), "{t}");
    assert!(t.contains("At `/tmp/rendered/worker.yaml:18`;"), "{t}");
}

#[test]
fn cluster_text_cannot_break_out_of_its_code_block() {
    let mut outcome = fixtures::crash_loop();
    outcome.message =
        "exit 1\n```\n<img src=x onerror=alert(1)> [click](https://evil)\n\x1b[31mred".into();
    outcome.logs = Some(LogTail {
        pod: "api-5f8d7c6b9-k4m2p".into(),
        container: "api".into(),
        previous: false,
        lines: vec!["````".into(), "done\r".into()],
        unreadable: None,
    });
    let t = text(&RunOutcome::new(false, 2.0, vec![outcome]), &ctx()).unwrap();
    assert!(t.contains("````text\nexit 1\n```\n<img src=x onerror=alert(1)> [click](https://evil)\n␛[31mred\n````"), "{t}");
    assert!(t.contains("`````text\n````\ndone\n`````"), "{t}");
}

#[test]
fn secrets_are_masked_before_rendering() {
    let mut outcome = fixtures::crash_loop();
    outcome.message = "db password hunter2 rejected".into();
    outcome.events[0].message = "env DB_PASSWORD=hunter2".into();
    outcome
        .logs
        .as_mut()
        .unwrap()
        .lines
        .push("connecting with hunter2".into());
    let run =
        Redactor::new(["hunter2".to_owned()]).run(&RunOutcome::new(false, 2.0, vec![outcome]));
    let all = everything(&run);
    assert!(!all.contains("hunter2"), "{all}");
    assert!(all.contains("db password *** rejected"));
    assert!(all.contains("connecting with ***"));
}

#[test]
fn check_speaks_of_images_and_warns_about_the_ones_it_could_not_confirm() {
    let run = fixtures::check_run();
    case_title(
        &run,
        Stage::Completed,
        "3 images found, 1 missing, 1 could not be confirmed",
    );
    let headline = crate::render::summary(&run, &crate::render::Style::PLAIN);
    assert!(
        headline.starts_with(
            "CHECK FAILED: 3 images found, 1 missing, 1 could not be confirmed; 2 manifests valid"
        ),
        "{headline}"
    );
    assert!(
        headline.contains("Images not confirmed by their registry (1):"),
        "{headline}"
    );
    assert!(
        headline.contains("Valid (1):\n  Deployment/api"),
        "{headline}"
    );
    let commands = workflow_commands(&run, &ctx());
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(
        commands[0].starts_with("::error file=k8s/web.yaml,line=21,"),
        "{commands:?}"
    );
    assert!(
        commands[1].starts_with("::warning file=k8s/worker.yaml,line=18,"),
        "{commands:?}"
    );
    let levels: Vec<_> = annotations(&run, &ctx())
        .into_iter()
        .map(|a| a.annotation_level)
        .collect();
    assert_eq!(levels, [AnnotationLevel::Failure, AnnotationLevel::Warning]);
    // Images that passed stay in the report.
    let report = crate::render::report::to_json(&run);
    assert_eq!(report["resources"][2]["verdict"], "succeeded");
    assert_eq!(
        report["resources"][2]["message"],
        "manifest valid; found ghcr.io/acme/api:3.2"
    );

    let unsure = RunOutcome::new(false, 0.1, run.outcomes[1..].to_vec()).with_images(
        crate::vocab::outcome::ImageTally {
            images: 2,
            missing: 0,
            unconfirmed: 1,
            looked_up: true,
        },
    );
    assert_eq!(conclusion(&unsure, false), Conclusion::Neutral);
    assert!(
        crate::render::summary(&unsure, &crate::render::Style::PLAIN).starts_with(
            "CHECK UNCONFIRMED: 2 images found, none missing, 1 could not be confirmed"
        )
    );
}

#[test]
fn a_dry_run_puts_its_plan_on_the_pull_request() {
    let run = fixtures::dry_run_plan();
    snapshot("github_dry_run_plan", &everything(&run));
    let ctx = ctx();
    let summary = step_summary(&run, "deploy (prod/shop)", None, &ctx);
    assert!(
        summary.contains("### Plan: 1 created, 2 changed, 1 unchanged, 1 pruned, 1 not known"),
        "{summary}"
    );
    assert!(
        summary.contains("```diff\n- spec.replicas: 2\n+ spec.replicas: 3\n"),
        "{summary}"
    );
    assert!(
        title(&run, Stage::Completed)
            .ends_with("; 1 created, 2 changed, 1 unchanged, 1 pruned, 1 not known")
    );
}

#[test]
fn a_plan_too_large_for_the_check_run_is_cut_between_resources() {
    use crate::vocab::outcome::{Change, FieldChange};
    let mut run = fixtures::dry_run_plan();
    let template = run.outcomes[0].clone();
    run.outcomes = (0..400)
        .map(|i| {
            let mut o = template.clone();
            o.resource.name = format!("web-{i}");
            o.change = Some(Change::Changed {
                fields: (0..40)
                    .map(|f| FieldChange {
                        path: format!("data.key{f}"),
                        before: Some(format!("\"{}\"", "a".repeat(40))),
                        after: Some(format!("\"{}\"", "b".repeat(40))),
                    })
                    .collect(),
            });
            o
        })
        .collect();
    let text = text(&run, &ctx()).unwrap();
    assert!(text.len() <= limits::TEXT_MAX, "{}", text.len());
    assert!(text.contains("more resources' plans, listed in the job log."));
    // Every opened section is closed: the cut falls between resources.
    assert_eq!(
        text.matches("<details>").count(),
        text.matches("</details>").count()
    );
}

#[test]
fn secrets_from_the_manifests_are_masked_in_plan_values() {
    use crate::vocab::outcome::{Change, FieldChange};
    let mut run = fixtures::dry_run_plan();
    run.outcomes[0].change = Some(Change::Changed {
        fields: vec![FieldChange {
            path: "spec.template.spec.containers[name=web].args[0]".into(),
            before: Some("\"--password=hunter2-old\"".into()),
            after: Some("\"--password=hunter2-new\"".into()),
        }],
    });
    let redacted = Redactor::new(["hunter2-old".into(), "hunter2-new".into()]).run(&run);
    let text = text(&redacted, &ctx()).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("--password=***"), "{text}");
}

#[test]
fn the_check_run_table_groups_a_deploy_in_waves_by_wave() {
    let table = summary(&fixtures::waves_stopped_run(), Stage::Completed, &ctx());
    snapshot("check_run_summary_waves", &table);
}

#[test]
fn a_notice_is_a_warning_annotation_at_its_manifest_line() {
    let mut run = fixtures::all_success_run();
    let file = run.outcomes[0].source.as_ref().unwrap().file.clone();
    run.notices.push(crate::vocab::outcome::Notice {
        source: crate::vocab::outcome::SourceSpan { file, line: 6 },
        message: "Deployment/web sets spec.replicas: 2, but HorizontalPodAutoscaler/web sizes it: the count is left to the autoscaler (now 4)".to_owned(),
    });
    let found = annotations(&run, &ctx());
    let notice = found.last().unwrap();
    assert_eq!(
        (
            notice.start_line,
            notice.annotation_level,
            notice.message.as_str()
        ),
        (6, AnnotationLevel::Warning, run.notices[0].message.as_str())
    );
    assert!(!notice.path.is_empty());
    let summary = crate::render::summary(&run, &crate::render::Style::PLAIN);
    assert!(summary.contains("Warnings:\n  "), "{summary}");
    // Without a check run, a workflow command carries it.
    let commands = workflow_commands(&run, &ctx());
    let last = commands.last().unwrap();
    assert!(
        last.starts_with("::warning file=")
            && last.contains(
                ",line=6,title=deploy-action%3A warning::Deployment/web sets spec.replicas"
            ),
        "{last}"
    );
}
