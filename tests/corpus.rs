//! The bad-input corpus: each case a command, its exit code and its exact output, so a
//! change in what users are told about broken manifests shows up in review.

#[test]
fn bad_inputs_are_refused_with_file_line_and_hint() {
    trycmd::TestCases::new()
        .register_bin(
            "deploy-action",
            std::path::Path::new(env!("CARGO_BIN_EXE_deploy-action")),
        )
        .case("tests/cmd/*.md");
}

/// Runs `deploy-action deploy --dry-run` on `args` in `dir`, with `stdin` piped in.
fn refused(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_deploy-action"))
        .args(["deploy", "--dry-run"])
        .args(args)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // The loader stops reading at the limit; a closed pipe after that is expected.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.ends_with("nothing was applied\n"), "{stderr}");
    stderr
}

fn config_map(i: usize) -> String {
    format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n")
}

#[test]
fn inputs_beyond_the_size_limit_are_refused_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 100 MiB on paper, nothing on disk; the size is checked before reading.
    let big = std::fs::File::create(dir.path().join("big.yaml")).unwrap();
    big.set_len(100 * 1024 * 1024).unwrap();
    let stderr = refused(dir.path(), &["-f", "big.yaml"], b"");
    assert!(
        stderr.contains("big.yaml: input too large: 100 MiB, over the 64 MiB limit\n  hint: "),
        "{stderr}"
    );
    // Two files under the limit each, over it together: the second is named.
    for name in ["a.yaml", "b.yaml"] {
        let file = std::fs::File::create(dir.path().join(name)).unwrap();
        file.set_len(40 * 1024 * 1024).unwrap();
    }
    let stderr = refused(dir.path(), &["-f", "a.yaml,b.yaml"], b"");
    assert!(
        stderr.contains("b.yaml: input too large: 40 MiB takes the inputs over the 64 MiB limit"),
        "{stderr}"
    );
    assert!(!stderr.contains("a.yaml:"), "{stderr}");
}

#[test]
fn stdin_beyond_the_size_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let line = config_map(0);
    let endless: Vec<u8> = line.bytes().cycle().take(70 * 1024 * 1024).collect();
    let stderr = refused(dir.path(), &["-f", "-"], &endless);
    assert!(
        stderr.contains("<stdin>: input too large: more than the 64 MiB limit\n  hint: "),
        "{stderr}"
    );
}

#[test]
fn more_than_ten_thousand_documents_are_refused_at_the_first_extra_one() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..10_001).map(config_map).collect();
    std::fs::write(dir.path().join("many.yaml"), text).unwrap();
    let stderr = refused(dir.path(), &["-f", "many.yaml"], b"");
    // Document 10,001 starts on line 10,000 * 5 + 2.
    assert!(
        stderr.contains(
            "many.yaml:50002: too many documents: the inputs hold more than 10000\n  hint: deploy fewer manifests per run"
        ),
        "{stderr}"
    );
}

#[test]
fn more_than_ten_thousand_aliases_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: &v v\ndata:\n  list:\n",
    );
    text.extend(std::iter::repeat_n("    - *v\n", 10_001));
    std::fs::write(dir.path().join("aliases.yaml"), text).unwrap();
    let stderr = refused(dir.path(), &["-f", "aliases.yaml"], b"");
    // The 10,001st alias is on line 8 + 10,001.
    assert!(
        stderr.contains(
            "aliases.yaml:10009: document contains excessive aliasing (more than 10000 aliases)"
        ),
        "{stderr}"
    );
}
