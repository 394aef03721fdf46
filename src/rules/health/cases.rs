//! Runs the bundled library's cases (`cases/*.yaml`): each a situation a real controller
//! writes, judged through the whole custom-resource path (CRD in view, generation lag,
//! the rule), against the verdict, reason and message it must give.
//!
//! Rules and cases are read from disk here, so editing them needs no rebuild of this test;
//! `bundled_files_are_the_files_on_disk` keeps the compiled-in library the same set.

use crate::manifest::parse_stream;
use crate::pointer::Pointer;
use crate::rules::assess::assess;
use crate::rules::fixtures::snapshot_with;
use crate::rules::health::library::FILES;
use crate::rules::health::load::parse;
use crate::rules::health::rule::HealthRules;
use crate::rules::target::Target;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/rules/health")
        .join(sub)
}

fn names(sub: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir(sub))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            std::path::Path::new(n)
                .extension()
                .is_some_and(|e| e == "yaml")
        })
        .collect();
    names.sort();
    names
}

fn rules_on_disk() -> HealthRules {
    let mut rules = HealthRules::default();
    for name in names("library") {
        let text = std::fs::read_to_string(dir("library").join(&name)).unwrap();
        let parsed = parse(&text, &format!("bundled {name}"))
            .unwrap_or_else(|p| panic!("{}", crate::manifest::render_problems(&p)));
        rules.extend(parsed);
    }
    rules
}

/// A CRD for the case's kind that declares a status, as every bundled kind's CRD does.
fn crd_for(obj: &Value) -> Value {
    let api_version = obj["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.split_once('/').unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let scope = if obj.at("/metadata/namespace").is_some() {
        "Namespaced"
    } else {
        "Cluster"
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}"), "uid": format!("crd-{plural}"), "resourceVersion": "1"},
        "spec": {"group": group, "scope": scope,
            "names": {"plural": plural, "kind": kind, "listKind": format!("{kind}List")},
            "versions": [{"name": version, "served": true, "storage": true, "subresources": {"status": {}}}]},
        "status": {"conditions": [{"type": "Established", "status": "True"}]}
    })
}

struct Case {
    file: String,
    line: usize,
    situation: String,
    object: Value,
    manifest: Option<Value>,
    verdict: String,
    reason: Option<String>,
    message: String,
}

/// The cases files to run: all, or those `HEALTH_CASES` names (comma-separated file
/// names, for working on one project's rules).
fn cases() -> Vec<Case> {
    let only = std::env::var("HEALTH_CASES").ok();
    let mut all = Vec::new();
    for name in names("cases") {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|n| n.trim() == name))
        {
            continue;
        }
        let text = std::fs::read_to_string(dir("cases").join(&name)).unwrap();
        let stream = parse_stream(&text);
        assert!(stream.errors.is_empty(), "{name}: {:?}", stream.errors);
        for doc in &stream.documents {
            let list = doc.value["cases"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: expected `cases:`"));
            for (i, c) in list.iter().enumerate() {
                let text = |k: &str| c[k].as_str().map(str::to_owned);
                let line = doc.lines.get(&format!("/cases/{i}")).unwrap_or(0);
                let at = format!("{name}:{line}");
                assert!(text("source").is_some(), "{at}: a case names its source");
                let expect = &c["expect"];
                all.push(Case {
                    file: name.clone(),
                    line,
                    situation: text("situation").unwrap_or_else(|| panic!("{at}: no situation")),
                    object: c["object"].clone(),
                    manifest: c.get("manifest").cloned(),
                    verdict: expect["verdict"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{at}: no expect.verdict"))
                        .to_owned(),
                    reason: expect["reason"].as_str().map(str::to_owned),
                    message: expect["message"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{at}: no expect.message"))
                        .to_owned(),
                });
            }
        }
    }
    all
}

fn judge(case: &Case, rules: &Arc<HealthRules>) -> (String, Option<String>, String) {
    let obj = &case.object;
    let snap = snapshot_with(rules.clone(), &[obj.clone(), crd_for(obj)]);
    let declared = case.manifest.clone().unwrap_or_else(|| {
        json!({"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "metadata": {"name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"]},
            "spec": obj["spec"]})
    });
    let mut target = Target::from_manifest(&declared).unwrap();
    if target.id.namespace.is_none() {
        target.id.namespace = obj
            .at("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    let got = assess(&target, &snap);
    let verdict = match got.reason() {
        None => "succeeded".to_owned(),
        Some(r) => serde_json::to_value(r.verdict())
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned(),
    };
    (
        verdict,
        got.reason().map(|r| r.as_str().to_owned()),
        got.message().to_owned(),
    )
}

#[test]
fn bundled_files_are_the_files_on_disk() {
    let bundled: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
    assert_eq!(bundled, names("library"));
    assert_eq!(
        names("library"),
        names("cases"),
        "every rules file has a cases file"
    );
    for (name, text) in FILES {
        let disk = std::fs::read_to_string(dir("library").join(name)).unwrap();
        assert!(
            text == disk,
            "{name} differs from the compiled-in copy: rebuild"
        );
    }
    assert_eq!(*crate::rules::health::library::bundled(), rules_on_disk());
}

#[test]
fn every_bundled_rule_meets_its_cases() {
    let rules = Arc::new(rules_on_disk());
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let got = judge(case, &rules);
        let want = (
            case.verdict.clone(),
            case.reason.clone(),
            case.message.clone(),
        );
        if got != want {
            failures.push(format!(
                "{}:{} ({})\n    want {want:?}\n    got  {got:?}",
                case.file, case.line, case.situation
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_bundled_rule_has_cases_that_succeed_and_that_do_not() {
    let rules = rules_on_disk();
    let cases = cases();
    for rule in rules.iter() {
        if std::env::var("HEALTH_CASES").is_ok_and(|o| {
            !o.split(',')
                .any(|n| rule.origin.starts_with(&format!("bundled {}:", n.trim())))
        }) {
            continue;
        }
        let mine: Vec<&Case> = cases
            .iter()
            .filter(|c| {
                c.object["kind"] == rule.kind.as_str()
                    && c.object["apiVersion"]
                        .as_str()
                        .is_some_and(|a| a.starts_with(&format!("{}/", rule.group)))
            })
            .collect();
        assert!(
            mine.iter().any(|c| c.verdict == "succeeded"),
            "{}/{}: no case succeeds",
            rule.group,
            rule.kind
        );
        assert!(
            mine.iter().any(|c| c.verdict != "succeeded"),
            "{}/{}: every case succeeds",
            rule.group,
            rule.kind
        );
        if !rule.failed.is_empty() {
            assert!(
                mine.iter().any(|c| c.verdict == "failed"),
                "{}/{}: no case reaches its failed clauses",
                rule.group,
                rule.kind
            );
        }
    }
}

#[test]
fn the_readme_table_names_every_bundled_kind() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
    for rule in rules_on_disk().iter() {
        let (kind, group) = (format!("`{}`", rule.kind), format!("({})", rule.group));
        assert!(
            rows.iter().any(|r| {
                let first = r.split(" | ").next().unwrap_or("");
                first.contains(&kind) && first[first.find(&kind).unwrap()..].contains(&group)
            }),
            "README's table of bundled health rules lacks {}/{}",
            rule.group,
            rule.kind
        );
    }
}
