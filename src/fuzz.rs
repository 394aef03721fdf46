//! Property tests standing in for cargo-fuzz (which needs a nightly toolchain these runners
//! lack): the manifest loader and the pull-error classifier, fed generated and mutated text
//! seeded from the test fixtures, must never panic, hang or exceed their limits.
//!
//! `PROPTEST_CASES=N cargo test --lib fuzz` runs N cases per property (256 by default).

use proptest::prelude::*;

use crate::manifest::load_str;
use crate::manifest::tests::fixtures::{CRD_AND_CR, HELM, KUSTOMIZE, LIST, POD_JSON, WEB};
use crate::rules::images::pull_error::classify;

/// YAML's structural pieces, so generated text reaches deep into the parser and walker.
const YAML_PIECES: &[&str] = &[
    "\n",
    "  ",
    "- ",
    ": ",
    "---\n",
    "...\n",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<: ",
    "? ",
    "!!str ",
    "!!int ",
    "!!float ",
    "|\n",
    ">-\n",
    "\"",
    "'",
    "#",
    "\t",
    "key",
    "kind: Deployment",
    "apiVersion: apps/v1",
    "metadata:",
    "name: x",
    "image: ",
    "~",
    "null",
    ".nan",
    "1e400",
    "0x1F",
    "yes",
    "\\",
    "\u{feff}",
    "é",
    "\u{0}",
];

/// The loader tests' fixtures and the bad-input corpus (tests/cmd/bad-inputs.in).
const SEEDS: &[&str] = &[
    WEB,
    HELM,
    KUSTOMIZE,
    POD_JSON,
    LIST,
    CRD_AND_CR,
    include_str!("../tests/cmd/bad-inputs.in/alias-bomb.yaml"),
    include_str!("../tests/cmd/bad-inputs.in/duplicate-key.yaml"),
    include_str!("../tests/cmd/bad-inputs.in/broken.json"),
    include_str!("../tests/cmd/bad-inputs.in/merge-scalar.yaml"),
    include_str!("../tests/cmd/bad-inputs.in/no-image.yaml"),
    include_str!("../tests/cmd/bad-inputs.in/bad-timeout.yaml"),
];

/// Registry and kubelet wording, so mutations land near the phrases the classifier reads.
const PULL_ERRORS: &[&str] = &[
    "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nope:1\": failed to resolve reference: docker.io/library/nope:1: not found",
    "Error response from daemon: pull access denied for nope, repository does not exist or may require 'docker login'",
    "failed to authorize: failed to fetch anonymous token: unexpected status from GET request: 401 Unauthorized",
    "dial tcp 10.0.0.1:443: i/o timeout",
    "unexpected status code 503 Service Unavailable",
    "couldn't parse image name \"UPPER:case\": invalid reference format",
    "toomanyrequests: You have reached your pull rate limit (HTTP code 429)",
];

fn yaml_like() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(YAML_PIECES), 0..200).prop_map(|p| p.concat())
}

/// A seed with one byte range deleted, replaced or duplicated.
fn mutated(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        prop::sample::select(seeds),
        any::<prop::sample::Index>(),
        0..64_usize,
        0..3_u8,
        ".{0,8}",
    )
        .prop_map(|(seed, at, len, how, insert)| {
            let mut start = at.index(seed.len() + 1);
            while !seed.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + len).min(seed.len());
            while !seed.is_char_boundary(end) {
                end -= 1;
            }
            let (head, cut, tail) = (&seed[..start], &seed[start..end], &seed[end..]);
            match how {
                0 => format!("{head}{tail}"),
                1 => format!("{head}{insert}{tail}"),
                _ => format!("{head}{cut}{cut}{tail}"),
            }
        })
}

/// Loading returns objects or problems; every problem names a line inside the text.
fn loads_sanely(text: &str) -> Result<(), TestCaseError> {
    // YAML breaks lines at `\n`, `\r\n` and a lone `\r`; one past the end is where an
    // unterminated construct is reported.
    let lines = text.replace("\r\n", "\n").matches(['\n', '\r']).count() + 2;
    if let Err(e) = load_str("fuzz.yaml", text) {
        for problem in e.problems() {
            prop_assert!(
                problem.line.is_none_or(|l| (1..=lines).contains(&l)),
                "{problem}"
            );
            prop_assert!(!problem.message.is_empty());
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn loader_survives_arbitrary_text(text in "\\PC{0,400}") {
        loads_sanely(&text)?;
    }

    #[test]
    fn loader_survives_generated_yaml(text in yaml_like()) {
        loads_sanely(&text)?;
    }

    #[test]
    fn loader_survives_mutated_fixtures(text in mutated(SEEDS)) {
        loads_sanely(&text)?;
    }

    // Beyond not panicking: registries and runtimes vary their capitals, so the class may not.
    #[test]
    fn classifier_survives_arbitrary_text(text in "\\PC{0,300}") {
        prop_assert_eq!(classify(&text), classify(&text.to_ascii_uppercase()));
    }

    #[test]
    fn classifier_survives_mutated_pull_errors(text in mutated(PULL_ERRORS)) {
        prop_assert_eq!(classify(&text), classify(&text.to_ascii_uppercase()));
    }
}
