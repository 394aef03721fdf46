//! Putting untrusted text into GitHub Markdown without it turning into markup: a pod name
//! must not open a link, and a log line with backticks must not close its code block.

use crate::render::sanitize;

/// Inline text with Markdown punctuation backslash-escaped and control characters visible.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in sanitize(text).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '#' | '!' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An inline code span that holds any text: the fence is longer than any backtick run
/// inside, and `|` is escaped because GitHub splits table cells even inside code spans.
pub(super) fn code(text: &str) -> String {
    let text = sanitize(text).replace('|', "\\|");
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A fenced code block around already sanitized lines, its fence longer than any
/// backtick run inside so the content cannot end it.
pub(super) fn fenced(content: &str) -> String {
    fenced_as("text", content)
}

/// [`fenced`] with another info string (`diff` for the plan's colours).
pub(super) fn fenced_as(language: &str, content: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(content) + 1).max(3));
    format!("{fence}{language}\n{content}\n{fence}")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case_escape(input: &str, expected: &str) {
        assert_eq!(escape(input), expected);
    }

    #[test]
    fn inline_text_cannot_become_markup() {
        case_escape("Deployment/web", "Deployment/web");
        case_escape(
            "ClusterRole/system:auth-delegator",
            "ClusterRole/system:auth-delegator",
        );
        case_escape("[click](https://evil)", "\\[click\\](https://evil)");
        case_escape("<img src=x>", "\\<img src=x\\>");
        case_escape("a|b *c* _d_", "a\\|b \\*c\\* \\_d\\_");
        case_escape("line\nbreak", "line␊break");
    }

    #[track_caller]
    fn case_code(input: &str, expected: &str) {
        assert_eq!(code(input), expected);
    }

    #[test]
    fn code_spans_hold_backticks_and_pipes() {
        case_code("ghcr.io/acme/web:1.4.2", "`ghcr.io/acme/web:1.4.2`");
        case_code("a`b", "``a`b``");
        case_code("`edge", "`` `edge ``");
        case_code("a|b", "`a\\|b`");
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("plain"), "```text\nplain\n```");
        assert_eq!(fenced("x ``` y"), "````text\nx ``` y\n````");
        assert_eq!(fenced("`````"), "``````text\n`````\n``````");
    }
}
