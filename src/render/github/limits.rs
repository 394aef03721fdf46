//! Every size and count limit GitHub puts on what we send, enforced in one place. GitHub
//! answers an oversized field with 422 (losing the whole check run) or silently drops an
//! oversized job summary, so text is cut to fit with a visible marker, and nothing here fails.

use std::borrow::Cow;

/// Check run `output.summary` and `output.text`: 65,535 characters. Counted here in UTF-8
/// bytes, which bounds the character count too whichever unit GitHub really counts.
pub const TEXT_MAX: usize = 65_535;
/// Annotation `message` and `raw_details`: 64 KB; one byte less, in bytes, to be safe.
pub const ANNOTATION_FIELD_MAX: usize = 64 * 1024 - 1;
/// Check run and annotation `title`: 255 characters.
pub const TITLE_MAX_CHARS: usize = 255;
/// Annotations per create or update request; more need further PATCH calls.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;
/// The runner cuts a workflow-command message at 4,096 characters.
pub const COMMAND_MESSAGE_MAX_CHARS: usize = 4_096;
/// The runner shows at most 10 workflow commands of each level per step.
pub const COMMANDS_PER_LEVEL: usize = 10;
/// `GITHUB_STEP_SUMMARY` must stay under 1 MiB or the whole summary is dropped.
pub const STEP_SUMMARY_MAX: usize = 1024 * 1024 - 1;

/// Check run and annotation titles: one line, at most 255 characters.
pub fn title(text: &str) -> String {
    fit(&one_line(text), TITLE_MAX_CHARS, Unit::Chars)
}

/// Check run `summary` and `text`.
pub fn text(text: &str) -> String {
    fit(text, TEXT_MAX, Unit::Bytes)
}

/// Annotation `message` and `raw_details`.
pub fn annotation_field(text: &str) -> String {
    fit(text, ANNOTATION_FIELD_MAX, Unit::Bytes)
}

/// A workflow-command message, before escaping: the runner's cut would drop our marker.
pub fn command_message(text: &str) -> String {
    fit(text, COMMAND_MESSAGE_MAX_CHARS, Unit::Chars)
}

/// The Markdown written to `GITHUB_STEP_SUMMARY`.
pub fn step_summary(text: &str) -> String {
    fit(text, STEP_SUMMARY_MAX, Unit::Bytes)
}

/// Any text cut to `max_bytes` UTF-8 bytes, for blocks inside a larger field.
pub fn fit_bytes(text: &str, max_bytes: usize) -> String {
    fit(text, max_bytes, Unit::Bytes)
}

/// How many of `total` workflow commands of one level to print, and how many to fold into
/// one closing "N more" command, so that the count shown never exceeds the runner's 10.
pub fn commands_per_level(total: usize) -> (usize, usize) {
    if total <= COMMANDS_PER_LEVEL {
        (total, 0)
    } else {
        (COMMANDS_PER_LEVEL - 1, total - (COMMANDS_PER_LEVEL - 1))
    }
}

/// Annotations grouped into requests GitHub accepts.
pub fn annotation_batches<T>(annotations: &[T]) -> std::slice::Chunks<'_, T> {
    annotations.chunks(ANNOTATIONS_PER_REQUEST)
}

/// Characters above U+FFFF (emoji, some CJK) have been rejected by the Checks API;
/// each becomes U+FFFD.
pub fn bmp_only(text: &str) -> Cow<'_, str> {
    if text.chars().all(|c| u32::from(c) <= 0xFFFF) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(
            text.chars()
                .map(|c| if u32::from(c) > 0xFFFF { '\u{FFFD}' } else { c })
                .collect(),
        )
    }
}

/// Line breaks and other whitespace runs become single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Clone, Copy)]
enum Unit {
    Bytes,
    Chars,
}

impl Unit {
    fn len(self, text: &str) -> usize {
        match self {
            Unit::Bytes => text.len(),
            Unit::Chars => text.chars().count(),
        }
    }

    /// The byte index where the first `n` units of `text` end.
    fn prefix_end(self, text: &str, n: usize) -> usize {
        match self {
            Unit::Bytes => text.floor_char_boundary(n),
            Unit::Chars => text.char_indices().nth(n).map_or(text.len(), |(i, _)| i),
        }
    }
}

fn marker(dropped_chars: usize) -> String {
    format!("… (truncated: {dropped_chars} more characters)")
}

/// `text` (BMP only) in at most `max` units; when cut, the marker says how much went.
fn fit(text: &str, max: usize, unit: Unit) -> String {
    let text = bmp_only(text);
    if unit.len(&text) <= max {
        return text.into_owned();
    }
    let total_chars = text.chars().count();
    // The marker for every character is the longest one this cut can need.
    let reserve = unit.len(&marker(total_chars)) + 1;
    if max <= reserve {
        return text[..unit.prefix_end(&text, max)].to_owned();
    }
    let mut kept = &text[..unit.prefix_end(&text, max - reserve)];
    // Multi-line text (logs, events) reads better cut after a whole line, unless that
    // would throw away most of what fits.
    let separator = match kept.rfind('\n') {
        Some(at) if at >= kept.len() / 2 => {
            kept = &kept[..at];
            '\n'
        }
        _ => ' ',
    };
    let dropped = total_chars - kept.chars().count();
    format!("{kept}{separator}{}", marker(dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(actual: &str, max_bytes: usize, expected: &str) {
        assert!(actual.len() <= max_bytes, "{} > {max_bytes}", actual.len());
        assert_eq!(actual, expected);
    }

    #[test]
    fn short_text_passes_unchanged() {
        case(&text("FAILURE: 1 failed"), TEXT_MAX, "FAILURE: 1 failed");
        case(&fit_bytes("", 10), 10, "");
        assert_eq!(command_message(&"x".repeat(4_096)).len(), 4_096);
    }

    #[test]
    fn long_text_is_cut_with_a_marker_counting_what_went() {
        let long = "a".repeat(70_000);
        let cut = text(&long);
        assert_eq!(cut.len(), TEXT_MAX - 1);
        assert!(
            cut.ends_with(" … (truncated: 4504 more characters)"),
            "{}",
            &cut[65_400..]
        );
        let (kept, _) = cut.split_once(" …").unwrap();
        assert_eq!(kept.len() + 4_504, 70_000);
        // Multi-line text is cut after a whole line, the marker on a line of its own.
        let lines = "log line\n".repeat(100);
        case(
            &fit_bytes(&lines, 80),
            80,
            "log line\nlog line\nlog line\nlog line\n… (truncated: 865 more characters)",
        );
    }

    #[test]
    fn multi_byte_text_is_cut_on_a_character_boundary() {
        let long = "ü".repeat(40_000);
        let cut = text(&long);
        assert!(cut.len() <= TEXT_MAX);
        assert!(
            cut.ends_with(" … (truncated: 7252 more characters)"),
            "{}",
            &cut[65_400..]
        );
        // Counted in characters, a workflow command keeps 4,096 of them, not bytes.
        let cut = command_message(&"ü".repeat(5_000));
        assert_eq!(cut.chars().count(), COMMAND_MESSAGE_MAX_CHARS - 1);
        assert!(cut.ends_with("ü … (truncated: 940 more characters)"));
    }

    #[test]
    fn titles_are_one_line_and_at_most_255_characters() {
        assert_eq!(
            title("Image not found:\n  Deployment/web\r\n"),
            "Image not found: Deployment/web"
        );
        let long = title(&"Deployment/web ".repeat(40));
        assert_eq!(long.chars().count(), TITLE_MAX_CHARS);
        assert!(
            long.ends_with("… (truncated: 379 more characters)"),
            "{long}"
        );
        assert!(!long.contains('\n'));
    }

    #[test]
    fn characters_above_the_basic_plane_are_replaced() {
        assert_eq!(bmp_only("deployed 🚀 ✅ ok"), "deployed \u{FFFD} ✅ ok");
        assert!(matches!(bmp_only("plain ✅ — ü"), Cow::Borrowed(_)));
        assert_eq!(annotation_field("pod 𝕏 crashed"), "pod \u{FFFD} crashed");
        assert_eq!(title("🚀 deployed"), "\u{FFFD} deployed");
    }

    #[test]
    fn annotation_fields_and_step_summaries_fit_their_limits() {
        let details = "Warning Failed Pod/web: 429 Too Many Requests\n".repeat(2_000);
        let cut = annotation_field(&details);
        assert!(cut.len() <= ANNOTATION_FIELD_MAX && cut.len() > ANNOTATION_FIELD_MAX - 100);
        assert!(cut.ends_with("more characters)"));
        let summary = "| Deployment/web | failed |\n".repeat(50_000);
        let cut = step_summary(&summary);
        assert!(cut.len() < 1024 * 1024);
        assert!(cut.ends_with("more characters)"));
    }

    #[test]
    fn tiny_limits_cut_without_room_for_a_marker() {
        assert_eq!(fit_bytes("abcdefghij", 4), "abcd");
        assert_eq!(fit_bytes("üüü", 3), "ü");
    }

    #[track_caller]
    fn case_commands(total: usize, expected: (usize, usize)) {
        let (shown, folded) = commands_per_level(total);
        assert_eq!((shown, folded), expected);
        assert!(shown + usize::from(folded > 0) <= COMMANDS_PER_LEVEL);
    }

    #[test]
    fn at_most_ten_commands_per_level_the_last_one_folding_the_rest() {
        case_commands(0, (0, 0));
        case_commands(10, (10, 0));
        case_commands(11, (9, 2));
        case_commands(120, (9, 111));
    }

    #[test]
    fn annotations_go_fifty_to_a_request() {
        let items: Vec<usize> = (0..120).collect();
        let sizes: Vec<usize> = annotation_batches(&items).map(<[usize]>::len).collect();
        assert_eq!(sizes, [50, 50, 20]);
        assert_eq!(annotation_batches::<usize>(&[]).count(), 0);
    }
}
