//! Who may call the simulated API server: bearer tokens (written out, or read from a file a
//! test can rewrite to rotate them) and whether RBAC authorizes each request, as a real
//! cluster's `--token-auth-file` and `--authorization-mode=RBAC` decide it.

use super::Dur;
use serde::Deserialize;
use std::path::PathBuf;

/// The `auth:` section of a scenario. Authentication is on when it lists a token or turns
/// RBAC on; off (every request served, as before) otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSpec {
    #[serde(default)]
    pub tokens: Vec<TokenSpec>,
    /// Authorize every request by the Roles, ClusterRoles and their bindings in the store.
    #[serde(default)]
    pub rbac: bool,
}

impl AuthSpec {
    /// Whether requests must carry a valid bearer token.
    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty() || self.rbac
    }
}

/// One bearer token and the user it authenticates.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSpec {
    /// The token itself; exactly one of `token` and `token_file` is given.
    #[serde(default)]
    pub token: Option<String>,
    /// A file whose content (trimmed) is the token, read again on every request: write a
    /// new token to it and the old one is refused from the next request on.
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    pub user: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// Refused from this long after the cluster started (a revocation at a time).
    #[serde(default)]
    pub until: Option<Dur>,
}

impl TokenSpec {
    /// A static token for `user`.
    pub fn token(token: &str, user: &str, groups: &[&str]) -> Self {
        TokenSpec {
            token: Some(token.to_owned()),
            token_file: None,
            user: user.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            until: None,
        }
    }

    /// A token read from `path` on every request, for `user`.
    pub fn token_file(path: impl Into<PathBuf>, user: &str, groups: &[&str]) -> Self {
        TokenSpec {
            token: None,
            token_file: Some(path.into()),
            user: user.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            until: None,
        }
    }

    /// Refuse the token from `at` after the cluster started on.
    pub fn until(mut self, at: std::time::Duration) -> Self {
        self.until = Some(Dur(at));
        self
    }

    /// Why the entry cannot be used, if it cannot.
    pub fn problem(&self) -> Option<String> {
        match (&self.token, &self.token_file) {
            (Some(_), Some(_)) => Some(format!(
                "token of user {:?} gives both token and token_file",
                self.user
            )),
            (None, None) => Some(format!(
                "token of user {:?} needs token or token_file",
                self.user
            )),
            (Some(t), None) if t.trim().is_empty() => {
                Some(format!("token of user {:?} is empty", self.user))
            }
            _ if self.user.is_empty() => Some("a token needs a user".into()),
            _ => None,
        }
    }
}
