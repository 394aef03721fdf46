//! Last line of defence for secrets: deploy-action never renders Secret data, but a
//! container log or an admission message can quote a value. One [`Redactor`], made at the
//! edge from the manifests' Secret values and the GitHub token, masks the text that came
//! from the cluster in every event and in the finished run before any output sees them:
//! the terminal, the summary, the report and GitHub all receive what it returns.

use crate::vocab::events::RunEvent;
use crate::vocab::outcome::{Change, Outcome, RunOutcome};
use serde_json::Value;
use std::ops::Range;
use std::sync::Arc;

/// The values no output may show, and the one place outputs get their data through.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        Redactor {
            secrets: secrets.into_iter().collect(),
        }
    }

    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    pub fn text(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }

    /// `run` with every secret masked in the text that came from the cluster (messages,
    /// events, log lines, planned values), before any of it is rendered, so GitHub's
    /// limits apply to what is really sent. Names and manifest places are kept: they come
    /// from the user's files, and annotations need them whole.
    pub fn run(&self, run: &RunOutcome) -> RunOutcome {
        let mut run = run.clone();
        for outcome in &mut run.outcomes {
            self.outcome(outcome);
        }
        for notice in &mut run.notices {
            notice.message = self.text(&notice.message);
        }
        run
    }

    fn outcome(&self, outcome: &mut Outcome) {
        let mask = |text: &mut String| *text = self.text(text);
        mask(&mut outcome.message);
        if let Some(Change::Changed { fields }) = &mut outcome.change {
            for field in fields {
                for value in [&mut field.before, &mut field.after].into_iter().flatten() {
                    mask(value);
                }
                mask(&mut field.path);
            }
        }
        for event in &mut outcome.events {
            mask(&mut event.message);
            mask(&mut event.reason);
        }
        if let Some(logs) = &mut outcome.logs {
            logs.lines.iter_mut().for_each(mask);
            logs.unreadable.iter_mut().for_each(mask);
        }
    }

    /// `event` with the same text masked as in [`Redactor::run`]: states, warnings, log
    /// lines and verdicts.
    pub fn event(&self, mut event: RunEvent) -> RunEvent {
        match &mut event {
            RunEvent::Waiting { state, .. } => *state = self.text(state),
            RunEvent::Verdict(outcome) => {
                // Masked in a copy, kept only if masking changed it: an unmasked verdict
                // stays shared with the judging loop's.
                let mut masked = Outcome::clone(outcome);
                self.outcome(&mut masked);
                if masked != **outcome {
                    *outcome = Arc::new(masked);
                }
            }
            RunEvent::WatchTrouble(message)
            | RunEvent::Warning(message)
            | RunEvent::Note(message) => {
                *message = self.text(message);
            }
            RunEvent::Status(pending) => {
                for (_, state) in pending {
                    *state = self.text(state);
                }
            }
            RunEvent::Log { line, .. } => *line = self.text(line),
            RunEvent::Loaded { .. }
            | RunEvent::Target { .. }
            | RunEvent::Validating
            | RunEvent::Phase(_)
            | RunEvent::Wave { .. }
            | RunEvent::Applied { .. }
            | RunEvent::ImagesChecked(_)
            | RunEvent::FailFast { .. }
            | RunEvent::Started { .. } => {}
        }
        event
    }
}

const MASK: &str = "***";

/// `text` with every occurrence of every secret replaced by `***`.
///
/// Occurrences that overlap or touch (of the same or different secrets) are masked as one,
/// so no fragment of either leaks. A multi-line secret (a PEM key) is also masked line by
/// line, as GitHub Actions does, because renderers indent or split multi-line text.
/// Empty and whitespace-only secrets (or lines) are ignored: masking them would mask
/// everything.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let needles = needles(secrets);
    if needles.is_empty() {
        return text.to_owned();
    }
    let mut hits: Vec<Range<usize>> = needles.iter().flat_map(|n| occurrences(text, n)).collect();
    hits.sort_by_key(|r| (r.start, r.end));

    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut hits = hits.into_iter().peekable();
    while let Some(mut hit) = hits.next() {
        while let Some(next) = hits.peek().filter(|n| n.start <= hit.end) {
            hit.end = hit.end.max(next.end);
            hits.next();
        }
        out.push_str(&text[copied..hit.start]);
        out.push_str(MASK);
        copied = hit.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// `value` with [`redact`] applied to every string in it (keys stay), for the JSON report:
/// redacting its serialized text would miss secrets that JSON escaping changed.
pub fn redact_json(value: &Value, secrets: &[String]) -> Value {
    match value {
        Value::String(s) => Value::String(redact(s, secrets)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_json(v, secrets)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_json(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn needles(secrets: &[String]) -> Vec<&str> {
    let mut needles = Vec::new();
    for secret in secrets {
        if secret.trim().is_empty() {
            continue;
        }
        needles.push(secret.as_str());
        if secret.contains('\n') {
            needles.extend(secret.lines().filter(|l| !l.trim().is_empty()));
        }
    }
    needles
}

/// Byte ranges of all occurrences, overlapping ones included ("aa" in "aaa" twice).
fn occurrences(text: &str, needle: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(needle).map(|i| from + i) {
        found.push(at..at + needle.len());
        // Step one character, not one byte, to stay on a char boundary.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(text: &str, secrets: &[&str], expected: &str) {
        let secrets: Vec<String> = secrets.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(redact(text, &secrets), expected);
    }

    #[test]
    fn masks_every_occurrence_of_every_secret() {
        case(
            "connecting to postgres://app:hunter2@db:5432 (password hunter2)",
            &["hunter2"],
            "connecting to postgres://app:***@db:5432 (password ***)",
        );
        case("token=abc key=xyz", &["abc", "xyz"], "token=*** key=***");
        case("nothing to hide", &["hunter2"], "nothing to hide");
        case("no secrets given", &[], "no secrets given");
    }

    #[test]
    fn empty_secrets_are_ignored_instead_of_masking_everything() {
        case("abc", &["", "  ", "\n"], "abc");
    }

    #[test]
    fn overlapping_secrets_leak_no_fragment() {
        // Replacing "abc" first would leave "***def" and leak "def".
        case("key abcdef end", &["abc", "abcdef"], "key *** end");
        case("key abcdef end", &["abcd", "cdef"], "key *** end");
        case("aaaa", &["aa"], "***");
        case("s3cr3t", &["s3cr3t", "cr"], "***");
    }

    #[test]
    fn multi_line_secrets_are_masked_line_by_line_too() {
        let pem = "-----BEGIN KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0BAQEF\n-----END KEY-----";
        case(pem, &[pem], "***");
        // The summary indents a multi-line message, so the whole secret no longer matches.
        case(
            "  -----BEGIN KEY-----\n  MIIEvQIBADANBg\n  kqhkiG9w0BAQEF",
            &[pem],
            "  ***\n  ***\n  ***",
        );
    }

    #[test]
    fn non_ascii_text_and_secrets_keep_char_boundaries() {
        case("pässwört=ñandú ñandú", &["ñandú"], "pässwört=*** ***");
        case("ééé", &["éé"], "***");
    }

    #[test]
    fn json_strings_are_redacted_at_any_depth() {
        let report = serde_json::json!({
            "message": "admission webhook \"deny\" denied: value \"hunter2\"",
            "resources": [{"name": "web", "replicas": 3, "logs": ["pw=hunter2"]}],
        });
        let redacted = redact_json(&report, &["hunter2".to_owned()]);
        assert_eq!(
            redacted,
            serde_json::json!({
                "message": "admission webhook \"deny\" denied: value \"***\"",
                "resources": [{"name": "web", "replicas": 3, "logs": ["pw=***"]}],
            })
        );
    }

    #[test]
    fn events_lose_the_cluster_text_that_quotes_a_secret_and_keep_names() {
        let redactor = Redactor::new(["hunter2".to_owned()]);
        let id = crate::render::fixtures::id("v1", "Pod", Some("shop"), "hunter2-job");
        let waiting = RunEvent::Waiting {
            id: id.clone(),
            state: "waiting: password hunter2 rejected".into(),
        };
        assert_eq!(
            redactor.event(waiting),
            RunEvent::Waiting {
                id: id.clone(),
                state: "waiting: password *** rejected".into()
            }
        );
        let log = RunEvent::Log {
            pod: "migrate".into(),
            container: "db".into(),
            line: "PGPASSWORD=hunter2".into(),
        };
        let RunEvent::Log { line, .. } = redactor.event(log) else {
            unreachable!()
        };
        assert_eq!(line, "PGPASSWORD=***");
        let mut outcome = crate::render::fixtures::crash_loop();
        outcome.message = "exited: hunter2".into();
        let RunEvent::Verdict(masked) = redactor.event(RunEvent::Verdict(Arc::new(outcome))) else {
            unreachable!()
        };
        assert_eq!(masked.message, "exited: ***");
        let applied = RunEvent::Applied { id, dry_run: false };
        assert_eq!(redactor.event(applied.clone()), applied);
    }

    #[test]
    fn a_verdict_with_nothing_to_mask_stays_shared_and_one_with_a_secret_is_copied() {
        let redactor = Redactor::new(["hunter2".to_owned()]);
        let clean = Arc::new(crate::render::fixtures::crash_loop());
        let RunEvent::Verdict(passed) = redactor.event(RunEvent::Verdict(clean.clone())) else {
            unreachable!()
        };
        // The judging loop's verdict and the one the outputs keep are one allocation.
        assert!(Arc::ptr_eq(&passed, &clean));
        let mut secret = crate::render::fixtures::crash_loop();
        secret.events[0].message = "pulled with token hunter2".into();
        let secret = Arc::new(secret);
        let RunEvent::Verdict(masked) = redactor.event(RunEvent::Verdict(secret.clone())) else {
            unreachable!()
        };
        assert!(!Arc::ptr_eq(&masked, &secret));
        assert_eq!(masked.events[0].message, "pulled with token ***");
        // The loop's own copy is left as it was (the report is redacted on its own way).
        assert_eq!(secret.events[0].message, "pulled with token hunter2");
    }
}
