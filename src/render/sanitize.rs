//! Text from the cluster (messages, events, container logs) is printed verbatim, except for
//! control characters: an ANSI escape or a `\r` in a log line must not repaint the
//! reader's terminal or hide earlier output, so each becomes a visible stand-in.

/// One line of untrusted text, safe to print: every control character except `\t` is
/// replaced. C0 controls and DEL become their Unicode control pictures (`␛`, `␍`, `␊`,
/// ...) so the reader still sees what was there; C1 controls (including the one-byte CSI
/// U+009B) become U+FFFD.
pub fn sanitize(text: &str) -> String {
    text.chars().map(stand_in).collect()
}

/// Untrusted text that may span lines, split at its line breaks (`\n` or `\r\n`) with
/// each line sanitized; a trailing line break yields no empty last line.
pub(crate) fn sanitized_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().map(sanitize)
}

fn stand_in(c: char) -> char {
    match c {
        '\t' => '\t',
        // U+2400..U+241F picture U+0000..U+001F one to one.
        '\0'..='\x1f' => char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{FFFD}'),
        '\x7f' => '\u{2421}',
        c if c.is_control() => '\u{FFFD}',
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(input: &str, expected: &str) {
        assert_eq!(sanitize(input), expected);
    }

    #[test]
    fn control_characters_become_visible_stand_ins() {
        // A coloured log line keeps its text; the escape can no longer act.
        case("\x1b[31mERROR\x1b[0m db down", "␛[31mERROR␛[0m db down");
        // Clear screen + cursor home, as some CLIs print.
        case("\x1b[2J\x1b[H", "␛[2J␛[H");
        // A progress bar redraw: the first part must not be overwritten.
        case(
            "downloading 10%\rdownloading 100%",
            "downloading 10%␍downloading 100%",
        );
        case("bell\x07 nul\0 del\x7f", "bell␇ nul␀ del␡");
        case("a\nb", "a␊b");
        // The one-byte CSI of C1 controls works on some terminals too.
        case("\u{9b}31mred", "\u{FFFD}31mred");
    }

    #[test]
    fn tabs_and_ordinary_text_pass_unchanged() {
        case("key\tvalue", "key\tvalue");
        case(
            r#"Failed to pull image "ghcr.io/acme/web:1.4.2": not found"#,
            r#"Failed to pull image "ghcr.io/acme/web:1.4.2": not found"#,
        );
        case(
            "Größe überschritten — 内存不足 ✓",
            "Größe überschritten — 内存不足 ✓",
        );
        case("", "");
    }

    #[test]
    fn multi_line_text_splits_at_line_breaks_only() {
        let lines: Vec<String> = sanitized_lines("exit code 137\r\nOOMKilled\x1b[0m\n").collect();
        assert_eq!(lines, ["exit code 137", "OOMKilled␛[0m"]);
        assert_eq!(sanitized_lines("").count(), 0);
    }
}
