//! The corpus of recorded cluster states (tests/data/states): each one replayed literally
//! by kube-sim and judged by `watch`, every disagreement with its expected verdict listed
//! in one failure so a single run shows them all.

use crate::support::{config, run_with};
use deploy_action::config::{Config, Mode};
use deploy_action::rules::{self, Snapshot, Target, kinds, settle};
use deploy_action::vocab::verdict::{Reason, Verdict};
use kube_sim::{Scenario, Sim};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Paused time each state gets to reach its verdicts (settle windows included).
const TIMEOUT: Duration = Duration::from_secs(30);
const MIN_CASES: usize = 40;
/// The stability window as the CLI sets it by default: every state is judged as a user's
/// run would judge it, window included.
const SETTLE: Duration = Duration::from_secs(10);

/// One file of the corpus (see tests/data/states/README.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// Set when the expectation is right but the current rules are known to get it wrong.
    known_gap: Option<String>,
    expect: Vec<Expect>,
    objects: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// `Kind/name`, or `Kind/namespace/name` when the name alone is ambiguous.
    target: String,
    verdict: Verdict,
    reason: Option<Reason>,
}

/// One disagreement between a file's expectation and deploy-action's verdict.
struct Mismatch {
    file: String,
    target: String,
    expected: String,
    got: String,
    message: String,
    known_gap: Option<String>,
}

fn state_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/states");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// The header every case carries: where the situation was ported from, and why it matters.
fn check_header(file: &str, text: &str) {
    let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    assert!(
        header.iter().any(|l| l.starts_with("# source: ")),
        "{file}: the comment header needs a `# source: ` line naming the test it was ported from"
    );
    assert!(
        header.iter().any(|l| l.starts_with("# why: ")),
        "{file}: the comment header needs a `# why: ` line"
    );
}

/// The object a target names, and the manifest deploy-action is given for it: identity,
/// labels, annotations and spec, as the user's file would have them.
fn manifest_for(file: &str, target: &str, objects: &[Value]) -> (Value, String) {
    let parts: Vec<&str> = target.split('/').collect();
    let (kind, namespace, name) = match parts[..] {
        [kind, name] => (kind, None, name),
        [kind, ns, name] => (kind, Some(ns), name),
        _ => panic!("{file}: target {target:?} is not Kind/name or Kind/namespace/name"),
    };
    let matching: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
        .collect();
    let [object] = matching[..] else {
        panic!(
            "{file}: target {target:?} matches {} objects",
            matching.len()
        )
    };
    let mut metadata = Map::new();
    for k in ["name", "namespace", "labels", "annotations"] {
        if let Some(v) = object["metadata"].get(k) {
            metadata.insert(k.into(), v.clone());
        }
    }
    if let Some(a) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        a.retain(|k, _| !k.starts_with("kubectl.kubernetes.io/"));
    }
    let mut manifest = json!({"apiVersion": object["apiVersion"], "kind": kind,
                              "metadata": metadata});
    for k in ["spec", "data"] {
        if let Some(v) = object.get(k) {
            manifest[k] = v.clone();
        }
    }
    let display = format!(
        "{kind}/{}{name}",
        object["metadata"]["namespace"]
            .as_str()
            .map(|ns| format!("{ns}/"))
            .unwrap_or_default()
    );
    (manifest, display)
}

async fn judge(file: &str, case: &Case) -> Vec<Mismatch> {
    let sim = Sim::start(
        Scenario::builder()
            .no_nodes()
            .at(Duration::ZERO, case.objects.clone())
            .try_build()
            .unwrap_or_else(|e| panic!("{file}: kube-sim cannot replay it: {e}")),
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    let targets: Vec<(&Expect, Value, String)> = case
        .expect
        .iter()
        .map(|e| {
            let (manifest, display) = manifest_for(file, &e.target, &case.objects);
            (e, manifest, display)
        })
        .collect();
    let yaml = targets
        .iter()
        // JSON is YAML, and it quotes what YAML 1.1 would read as booleans (`yes`).
        .map(|(_, m, _)| serde_json::to_string_pretty(m).unwrap())
        .collect::<Vec<_>>()
        .join("\n---\n");
    let config = Config {
        settle: SETTLE,
        ..config(Mode::Watch, TIMEOUT)
    };
    let run = run_with(&sim, file, &yaml, config)
        .await
        .unwrap_or_else(|e| panic!("{file}: watch did not run: {e}"));
    let show = |v: Verdict, r: Option<Reason>| match r {
        Some(r) => format!("{v} {r}"),
        None => v.to_string(),
    };
    let mut out = Vec::new();
    for (expect, manifest, display) in &targets {
        let found = run.outcomes.iter().find(|o| {
            o.resource.kind == manifest["kind"]
                && o.resource.name == manifest["metadata"]["name"]
                && manifest["metadata"]["namespace"]
                    .as_str()
                    .is_none_or(|ns| o.resource.namespace.as_deref() == Some(ns))
        });
        let expected = show(expect.verdict, expect.reason);
        let (got, message) = match found {
            Some(o) => (show(o.verdict, o.reason), o.message.clone()),
            None => ("(no outcome)".to_owned(), String::new()),
        };
        if got != expected {
            out.push(Mismatch {
                file: file.to_owned(),
                target: display.clone(),
                expected,
                got,
                message,
                known_gap: case.known_gap.clone(),
            });
        }
    }
    out
}

fn table(rows: &[&Mismatch], gap: bool) -> String {
    let mut s =
        String::from("| file | target | expected | got | message |\n|---|---|---|---|---|\n");
    for m in rows {
        let message = match (&m.known_gap, gap) {
            (Some(g), true) => format!("known gap: {g}; {}", m.message),
            _ => m.message.clone(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            m.file,
            m.target,
            m.expected,
            m.got,
            message.replace('\n', " ")
        ));
    }
    s
}

/// Known gaps do not fail the test, but a run should show them (with `--nocapture`).
#[expect(
    clippy::print_stderr,
    reason = "known gaps are reported, not failed: stderr is where a test reports"
)]
fn report_known_gaps(gaps: &[&Mismatch], gaps_that_pass: &[String], targets: usize, files: usize) {
    if !gaps.is_empty() {
        eprintln!(
            "{} of {targets} targets in {files} files disagree because of known rule gaps:\n{}",
            gaps.len(),
            table(gaps, true)
        );
    }
    if !gaps_that_pass.is_empty() {
        eprintln!(
            "marked known_gap but now judged as expected (drop the mark): {}",
            gaps_that_pass.join(", ")
        );
    }
}

#[tokio::test(start_paused = true)]
async fn every_recorded_state_gets_its_expected_verdict() {
    let files = state_files();
    assert!(
        files.len() >= MIN_CASES,
        "tests/data/states holds {} cases; the corpus must keep at least {MIN_CASES}",
        files.len()
    );
    let mut mismatches = Vec::new();
    let mut gaps_that_pass = Vec::new();
    let mut targets = 0;
    for path in &files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        check_header(&file, &text);
        let case: Case = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!case.expect.is_empty(), "{file}: expects nothing");
        for e in &case.expect {
            assert!(
                e.reason.is_none_or(|r| r.verdict() == e.verdict),
                "{file}: reason {:?} does not belong to verdict {}",
                e.reason,
                e.verdict
            );
            assert_eq!(
                e.reason.is_none(),
                e.verdict == Verdict::Succeeded,
                "{file}: a failed or timed-out target names a reason, a success none"
            );
        }
        targets += case.expect.len();
        let found = judge(&file, &case).await;
        if found.is_empty() && case.known_gap.is_some() {
            gaps_that_pass.push(file.clone());
        }
        mismatches.extend(found);
    }
    let (gaps, real): (Vec<&Mismatch>, Vec<&Mismatch>) =
        mismatches.iter().partition(|m| m.known_gap.is_some());
    report_known_gaps(&gaps, &gaps_that_pass, targets, files.len());
    assert!(
        real.is_empty(),
        "{} of {targets} targets in {} files got a verdict other than expected:\n{}",
        real.len(),
        files.len(),
        table(&real, false)
    );
}

/// Whether `obj` is in a watch scope of `target` as its kind's row declares them: its own
/// kind and namespace, each kind the row watches, and the Events of its namespace.
fn watched_for(target: &Target, obj: &Value) -> bool {
    let group_of = |av: &str| av.split_once('/').map_or("", |(g, _)| g).to_owned();
    let (group, kind) = (
        group_of(obj["apiVersion"].as_str().unwrap_or_default()),
        obj["kind"].as_str().unwrap_or_default(),
    );
    let namespace = obj["metadata"]["namespace"].as_str();
    let near = namespace == target.id.namespace.as_deref();
    let row = kinds::of(target.group(), target.kind());
    (group == target.group() && kind == target.kind() && near)
        || (kind == "Event" && group.is_empty() && near)
        || row
            .watches
            .iter()
            .any(|w| w.kind == kind && w.kind_group() == group && (w.cluster || near))
}

/// The registry's watches are what the judging loop lists: a rule that reads a kind its
/// row does not watch judges on a view without it. On every recorded state, each target's
/// rule and stability window must see the same with only its watched kinds as with all.
#[test]
fn every_rule_reads_only_what_its_kinds_row_watches() {
    let mut checked = 0;
    let mut unwatched = Vec::new();
    for path in state_files() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let case: Case = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut everything = Snapshot::new();
        for obj in &case.objects {
            everything.upsert(obj.clone()).unwrap();
        }
        for e in &case.expect {
            let (manifest, display) = manifest_for(&file, &e.target, &case.objects);
            let target = Target::from_manifest(&manifest).unwrap();
            let mut watched = Snapshot::new();
            for obj in case.objects.iter().filter(|o| watched_for(&target, o)) {
                watched.upsert(obj.clone()).unwrap();
            }
            let pods = |snapshot: &Snapshot| -> Vec<Option<String>> {
                let obj = snapshot.live(&target.key());
                obj.map(|obj| settle::pods_of(&target, &obj, snapshot))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| p.metadata.name)
                    .collect()
            };
            let seen = (rules::assess(&target, &watched), pods(&watched));
            let all = (rules::assess(&target, &everything), pods(&everything));
            if seen != all {
                unwatched.push(format!(
                    "{file}: {display}: {seen:?} watched, {all:?} with all"
                ));
            }
            checked += 1;
        }
    }
    assert!(checked >= MIN_CASES, "only {checked} targets checked");
    assert!(
        unwatched.is_empty(),
        "judged on what their rows in rules::kinds do not watch:\n{}",
        unwatched.join("\n")
    );
}
