//! The problem list every loading and validation step appends to, so a user sees all
//! mistakes in their manifests at once instead of fixing them one run at a time.

use std::fmt;

use serde::Serialize;
use thiserror::Error;

/// One thing wrong with the manifests, located as precisely as the input allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The path as the user gave it (directory children joined, stdin shown as `<stdin>`);
    /// empty when the problem concerns the inputs as a whole.
    pub file: String,
    /// 1-based source line, when one is known.
    pub line: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

impl Problem {
    pub fn new(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Problem {
            file: file.into(),
            line,
            message: message.into(),
            hint: None,
        }
    }

    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `file:line` (or just `file`) for messages that point at another place.
    pub fn location(file: &str, line: Option<usize>) -> String {
        match line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", Problem::location(&self.file, self.line))?;
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

/// Renders problems one after another, the form the CLI prints and tests snapshot.
pub fn render_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Error)]
pub enum LoadError {
    /// Every problem found; loading never stops at the first one.
    #[error("found {} in the manifests:\n{}", count(.0.len()), render_problems(.0))]
    Invalid(Vec<Problem>),
}

impl LoadError {
    pub fn problems(&self) -> &[Problem] {
        match self {
            LoadError::Invalid(problems) => problems,
        }
    }
}

/// "1 problem", "3 problems".
pub fn count(n: usize) -> String {
    if n == 1 {
        "1 problem".to_string()
    } else {
        format!("{n} problems")
    }
}
