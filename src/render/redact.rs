//! Last line of defence for secrets: deploy-action never renders Secret data, but a
//! container log or an admission message can quote a value, so callers that know the
//! sensitive values mask them in any rendered text before it leaves the process.

use serde_json::Value;
use std::ops::Range;

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
}
