//! The process's environment, read once at the start of a run: where it runs (a GitHub
//! Actions runner, a terminal) and how it should look (`NO_COLOR`, `CI`).

use std::collections::BTreeMap;
use std::io::IsTerminal;

pub struct Environment {
    /// Every variable, as the Actions context reads them.
    pub vars: BTreeMap<String, String>,
    pub stdout_tty: bool,
    pub stderr_tty: bool,
}

impl Environment {
    pub fn read() -> Environment {
        Environment {
            vars: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
            stdout_tty: std::io::stdout().is_terminal(),
            stderr_tty: std::io::stderr().is_terminal(),
        }
    }

    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// `GITHUB_ACTIONS=true`: on an Actions runner, which reads workflow commands.
    pub fn github_actions(&self) -> bool {
        self.var("GITHUB_ACTIONS") == Some("true")
    }
}
