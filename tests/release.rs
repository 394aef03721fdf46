//! The release workflow cannot run here, so its order is what these tests hold: no tag
//! before its checksums are committed, nothing public before the provenance is signed, no
//! major tag before the release is published, and every target the action downloads built.

use serde_yaml_ng::Value;
use std::path::PathBuf;

fn workflow(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(".github/workflows")
        .join(name);
    serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The text of each step of `job` (its name, `uses` and `run`), in order.
fn steps(wf: &Value, job: &str) -> Vec<String> {
    wf["jobs"][job]["steps"]
        .as_sequence()
        .unwrap_or_else(|| panic!("job {job} has no steps"))
        .iter()
        .map(|s| {
            ["name", "uses", "run"]
                .iter()
                .filter_map(|k| s[*k].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// Index of the first step whose text contains `needle`.
#[track_caller]
fn step(steps: &[String], needle: &str) -> usize {
    steps
        .iter()
        .position(|s| s.contains(needle))
        .unwrap_or_else(|| panic!("no step contains {needle:?}"))
}

fn needs(wf: &Value, job: &str) -> Vec<String> {
    match &wf["jobs"][job]["needs"] {
        Value::String(s) => vec![s.clone()],
        Value::Sequence(v) => v
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_tag_is_made_only_by_the_workflow_and_only_on_the_commit_with_its_checksums() {
    let wf = workflow("release.yml");
    // Pushing a tag does not start a release (the tag would predate its checksums): the
    // workflow is started by hand and makes the tag itself.
    let on = &wf["on"];
    assert!(on["push"].is_null(), "{on:?}");
    assert!(!on["workflow_dispatch"].is_null(), "{on:?}");

    let publish = steps(&wf, "publish");
    let sums = step(&publish, "sha256sum deploy-action-*");
    let attest = step(&publish, "actions/attest-build-provenance@");
    let commit = step(&publish, "contents/.github/checksums/$TAG.txt");
    let tag = step(&publish, "-f \"ref=refs/tags/$TAG\"");
    let draft = step(&publish, "gh release create");
    assert!(
        sums < attest && attest < commit && commit < tag && tag < draft,
        "{publish:#?}"
    );
    // The tag names the commit holding the sums, and that commit holds nothing else new.
    assert_eq!(
        wf["jobs"]["publish"]["steps"][tag]["env"]["SHA"].as_str(),
        Some("${{ steps.commit.outputs.sha }}")
    );
    assert!(publish[commit].contains("changes more than its sums"));
}

#[test]
fn the_release_is_drafted_filled_and_checked_before_it_is_published() {
    let wf = workflow("release.yml");
    let publish = steps(&wf, "publish");
    let run = &publish[step(&publish, "gh release create")];
    let at = |needle: &str| {
        run.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {run}"))
    };
    assert!(run.contains("--draft --verify-tag"), "{run}");
    assert!(at("gh release upload") < at("sha256sum --check"), "{run}");
    assert!(at("sha256sum --check") < at("--draft=false"), "{run}");
    // The SBOMs are assets and are in the sums.
    let build = steps(&wf, "build");
    assert!(build[step(&build, "cargo-cyclonedx")].contains(".cdx.json"));
}

#[test]
fn the_major_tag_moves_last_and_only_to_a_published_release() {
    let wf = workflow("release.yml");
    assert_eq!(needs(&wf, "publish"), ["prepare", "build"]);
    assert_eq!(needs(&wf, "major-tag"), ["prepare", "publish"]);
    let major = steps(&wf, "major-tag");
    let moving = step(&major, "git/refs/tags/$major");
    assert!(
        major[moving].contains("isDraft == false"),
        "{}",
        major[moving]
    );
    assert_eq!(
        wf["jobs"]["major-tag"]["steps"][moving]["env"]["SHA"].as_str(),
        Some("${{ needs.publish.outputs.sha }}")
    );
    // Nothing before `major-tag` may write a tag named like a major version.
    let publish = steps(&wf, "publish").join("\n");
    assert!(!publish.contains("$major"), "{publish}");
}

#[test]
fn every_target_the_action_downloads_is_built_and_signed() {
    let wf = workflow("release.yml");
    let built: Vec<&str> = wf["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|e| e["target"].as_str())
        .collect();
    let action =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("action.yml"))
            .unwrap();
    let downloaded: Vec<&str> = action
        .lines()
        .filter_map(|l| {
            l.trim()
                .split_once(") target=")
                .map(|(_, t)| t.trim_end_matches(" ;;"))
        })
        .collect();
    assert_eq!(downloaded.len(), 4, "{downloaded:?}");
    for target in &downloaded {
        assert!(
            built.contains(target),
            "{target} is downloaded by action.yml but not built"
        );
    }
    let publish = steps(&wf, "publish");
    let sums = &publish[step(&publish, "sha256sum deploy-action-*")];
    assert!(sums.contains(&format!("-eq {}", built.len())), "{sums}");
    let permissions = &wf["jobs"]["publish"]["permissions"];
    assert_eq!(permissions["id-token"].as_str(), Some("write"));
    assert_eq!(permissions["attestations"].as_str(), Some("write"));
}

#[test]
fn what_a_release_ships_is_built_and_checked_with_the_dist_profile() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // The section's lines, up to the next section.
    let dist: Vec<&str> = manifest
        .lines()
        .skip_while(|l| l.trim() != "[profile.dist]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .map(str::trim)
        .collect();
    for line in [
        r#"inherits = "release""#,
        r#"lto = "thin""#,
        "codegen-units = 1",
    ] {
        assert!(
            dist.contains(&line),
            "[profile.dist] lacks {line}: {dist:?}"
        );
    }
    let wf = workflow("release.yml");
    let build = steps(&wf, "build");
    let builds: Vec<&String> = build
        .iter()
        .filter(|s| s.contains("cargo build") || s.contains("cargo zigbuild"))
        .collect();
    assert_eq!(builds.len(), 2, "{builds:?}");
    for s in builds {
        assert!(
            s.contains("--profile dist") && !s.contains("--release"),
            "{s}"
        );
    }
    let checked = &build[step(&build, "Check linkage")];
    assert!(
        checked.contains("target/$TARGET/dist/deploy-action"),
        "{checked}"
    );
}

#[test]
fn the_x86_64_linux_binary_is_optimized_by_a_profile_of_training_deploys() {
    let wf = workflow("release.yml");
    let build = steps(&wf, "build");
    let raw = &wf["jobs"]["build"]["steps"];
    let profile = step(&build, "scripts/pgo-profile.sh");
    let linux = step(&build, "cargo zigbuild");
    // The profile is made first, for x86_64 Linux alone (the instrumented binary runs on
    // the runner), and that build reads it.
    assert!(profile < linux, "{build:?}");
    assert_eq!(
        raw[profile]["if"].as_str(),
        Some("matrix.target == 'x86_64-unknown-linux-musl'")
    );
    let written = "scripts/pgo-profile.sh \"$RUNNER_TEMP/deploy-action.profdata\"";
    assert!(build[profile].contains(written), "{}", build[profile]);
    assert!(
        build[linux].contains("-Cprofile-use=$RUNNER_TEMP/deploy-action.profdata"),
        "{}",
        build[linux]
    );
    // llvm-profdata comes with the toolchain, of rustc's own LLVM version.
    let toolchain = &raw[step(&build, "dtolnay/rust-toolchain")];
    assert_eq!(toolchain["with"]["components"].as_str(), Some("llvm-tools"));
    // The instrumented build is of the profile shipped: the profile's functions are those
    // of the release build.
    let script = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/pgo-profile.sh"),
    )
    .unwrap();
    for needle in [
        "-Cprofile-generate=",
        "--profile dist",
        "bin/llvm-profdata",
        "\"$profdata\" merge",
    ] {
        assert!(script.contains(needle), "pgo-profile.sh lacks {needle}");
    }
}
