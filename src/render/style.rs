//! Colour as a value: renderers ask the style to paint, so turning colour off (`NO_COLOR`, CI,
//! a pipe) removes every escape byte in one place instead of in each renderer. Styles are
//! `anstyle`'s; not `anstream`, whose auto-detection would colour CI logs and miss
//! indicatif's own stderr writes, so the decision stays in `Style::detect`.

use crate::vocab::verdict::{RunResult, Verdict};

/// Whether rendered text may carry ANSI colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub color: bool,
}

/// What a piece of text means; the style decides how that looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Failed,
    TimedOut,
    Succeeded,
    /// Headers.
    Bold,
    /// Secondary detail (durations, places).
    Dim,
}

impl Tone {
    pub fn of_verdict(verdict: Verdict) -> Tone {
        match verdict {
            Verdict::Succeeded => Tone::Succeeded,
            Verdict::Failed => Tone::Failed,
            Verdict::TimedOut | Verdict::Unfinished => Tone::TimedOut,
        }
    }

    pub fn of_result(result: RunResult) -> Tone {
        match result {
            RunResult::Success => Tone::Succeeded,
            RunResult::Failure => Tone::Failed,
            RunResult::TimedOut | RunResult::Cancelled => Tone::TimedOut,
        }
    }

    fn style(self) -> anstyle::Style {
        use anstyle::AnsiColor;
        match self {
            Tone::Failed => AnsiColor::Red.on_default(),
            Tone::TimedOut => AnsiColor::Yellow.on_default(),
            Tone::Succeeded => AnsiColor::Green.on_default(),
            Tone::Bold => anstyle::Style::new().bold(),
            Tone::Dim => anstyle::Style::new().dimmed(),
        }
    }
}

impl Style {
    pub const PLAIN: Style = Style { color: false };
    pub const COLOR: Style = Style { color: true };

    /// The usual decision, from values the caller reads: colour only on a terminal, never
    /// when `NO_COLOR` is set to anything non-empty (no-color.org) or when `CI` is set,
    /// because CI logs are read as text and grepped.
    pub fn detect(is_terminal: bool, no_color: Option<&str>, ci: Option<&str>) -> Style {
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        let ci = ci.is_some_and(|v| !matches!(v, "" | "0" | "false"));
        Style {
            color: is_terminal && !no_color && !ci,
        }
    }

    /// `text` in `tone`; unchanged when colour is off.
    pub fn paint(&self, tone: Tone, text: &str) -> String {
        self.render(tone.style(), text)
    }

    /// `text` in `tone` and bold, for headers that carry a verdict.
    pub fn paint_bold(&self, tone: Tone, text: &str) -> String {
        self.render(tone.style().bold(), text)
    }

    fn render(self, style: anstyle::Style, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(is_terminal: bool, no_color: Option<&str>, ci: Option<&str>, color: bool) {
        assert_eq!(Style::detect(is_terminal, no_color, ci), Style { color });
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color_or_ci() {
        case(true, None, None, true);
        case(false, None, None, false);
        case(true, Some("1"), None, false);
        // no-color.org: an empty NO_COLOR does not count.
        case(true, Some(""), None, true);
        case(true, None, Some("true"), false);
        case(true, None, Some("false"), true);
        case(true, None, Some("0"), true);
    }

    #[test]
    fn plain_style_paints_nothing() {
        for tone in [
            Tone::Failed,
            Tone::TimedOut,
            Tone::Succeeded,
            Tone::Bold,
            Tone::Dim,
        ] {
            assert_eq!(Style::PLAIN.paint(tone, "web"), "web");
            assert_eq!(Style::PLAIN.paint_bold(tone, "web"), "web");
        }
    }

    #[test]
    fn colour_style_wraps_in_sgr_and_resets() {
        assert_eq!(
            Style::COLOR.paint(Tone::Failed, "failed"),
            "\x1b[31mfailed\x1b[0m"
        );
        assert_eq!(Style::COLOR.paint(Tone::TimedOut, "x"), "\x1b[33mx\x1b[0m");
        assert_eq!(Style::COLOR.paint(Tone::Succeeded, "x"), "\x1b[32mx\x1b[0m");
        assert_eq!(
            Style::COLOR.paint_bold(Tone::Succeeded, "SUCCESS"),
            "\x1b[1m\x1b[32mSUCCESS\x1b[0m"
        );
        assert_eq!(Style::COLOR.paint_bold(Tone::Bold, "h"), "\x1b[1mh\x1b[0m");
    }
}
