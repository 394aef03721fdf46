//! Bearer-token authentication as kube-apiserver's token authenticators do it: a table of
//! static tokens and token files read again on every request, so that a test can rotate or
//! revoke a credential while its clients run and see the 401 a real cluster answers.

use super::status::ApiError;
use crate::clock::Clock;
use crate::scenario::{AuthSpec, TokenSpec};
use axum::http::{HeaderMap, header};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The group every authenticated user is in.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group whose members bypass authorization (kube-apiserver's privileged group).
pub const MASTERS: &str = "system:masters";

/// Who a request is from, as the API server's `user.Info` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user as authentication reports it: its own groups, a service account's groups
    /// (`system:serviceaccounts`, `system:serviceaccounts:NS`) for a name
    /// `system:serviceaccount:NS:NAME`, and `system:authenticated`.
    pub fn authenticated(name: &str, groups: &[String]) -> Self {
        let mut all: Vec<String> = groups.to_vec();
        if let Some((ns, _)) = service_account(name) {
            all.push("system:serviceaccounts".into());
            all.push(format!("system:serviceaccounts:{ns}"));
        }
        all.push(AUTHENTICATED.into());
        let mut seen = std::collections::HashSet::new();
        all.retain(|g| seen.insert(g.clone()));
        UserInfo {
            name: name.to_owned(),
            groups: all,
        }
    }

    /// The identity of the in-process client (`Sim::client`): kube-apiserver's own loopback
    /// user, a member of `system:masters`.
    pub fn loopback() -> Self {
        Self::authenticated("system:apiserver", &[MASTERS.to_owned()])
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// `(namespace, name)` of a service account user name `system:serviceaccount:NS:NAME`.
pub fn service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

/// A marker the in-process client puts on its requests: they come from the loopback user.
#[derive(Debug, Clone, Copy)]
pub struct Loopback;

#[derive(Debug, Clone)]
enum Source {
    Static(String),
    File(PathBuf),
}

#[derive(Debug, Clone)]
struct Entry {
    source: Source,
    user: String,
    groups: Vec<String>,
    until: Option<Duration>,
}

/// The token table of a running cluster.
#[derive(Debug)]
pub struct Authenticator {
    enabled: bool,
    clock: Clock,
    entries: Mutex<Vec<Entry>>,
}

impl Authenticator {
    pub fn new(spec: &AuthSpec, clock: Clock) -> Self {
        let entries = spec.tokens.iter().filter_map(entry).collect();
        Authenticator {
            enabled: spec.enabled(),
            clock,
            entries: Mutex::new(entries),
        }
    }

    /// Whether requests need a token (the scenario lists tokens or turns RBAC on).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Accept another token from now on.
    pub fn add(&self, token: &TokenSpec) {
        if let Some(e) = entry(token) {
            self.lock().push(e);
        }
    }

    /// Refuse a static token from the next request on; whether it was accepted before.
    pub fn revoke(&self, token: &str) -> bool {
        let mut entries = self.lock();
        let before = entries.len();
        entries.retain(|e| !matches!(&e.source, Source::Static(t) if t == token));
        entries.len() != before
    }

    /// Stop reading a token file; whether it was read before.
    pub fn revoke_file(&self, path: &std::path::Path) -> bool {
        let mut entries = self.lock();
        let before = entries.len();
        entries.retain(|e| !matches!(&e.source, Source::File(p) if p == path));
        entries.len() != before
    }

    /// The user a bearer token authenticates, now.
    pub fn user_for(&self, token: &str) -> Option<UserInfo> {
        let elapsed = self.clock.elapsed();
        let entries = self.lock().clone();
        entries
            .iter()
            .filter(|e| e.until.is_none_or(|u| elapsed < u))
            .find(|e| match &e.source {
                Source::Static(t) => t == token,
                // Read on every request: a rewritten file takes effect at once.
                Source::File(p) => std::fs::read_to_string(p)
                    .is_ok_and(|content| !content.trim().is_empty() && content.trim() == token),
            })
            .map(|e| UserInfo::authenticated(&e.user, &e.groups))
    }

    /// Who sent the request: `None` when authentication is off, the loopback user for the
    /// in-process client, else the user of its bearer token, or 401 Unauthorized.
    pub fn authenticate(
        &self,
        headers: &HeaderMap,
        loopback: bool,
    ) -> Result<Option<UserInfo>, ApiError> {
        if !self.enabled {
            return Ok(None);
        }
        let token = bearer(headers);
        if token.is_none() && loopback {
            return Ok(Some(UserInfo::loopback()));
        }
        token
            .and_then(|t| self.user_for(t))
            .map(Some)
            .ok_or_else(ApiError::unauthorized)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().expect("token table lock")
    }
}

fn entry(spec: &TokenSpec) -> Option<Entry> {
    let source = match (&spec.token, &spec.token_file) {
        (Some(t), None) => Source::Static(t.trim().to_owned()),
        (None, Some(p)) => Source::File(p.clone()),
        _ => return None,
    };
    Some(Entry {
        source,
        user: spec.user.clone(),
        groups: spec.groups.clone(),
        until: spec.until.map(|d| d.0),
    })
}

/// The token of `Authorization: Bearer TOKEN` (the scheme in any case, as the API server
/// reads it).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' '))
        .then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(auth: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(auth).unwrap());
        h
    }

    fn spec(tokens: Vec<TokenSpec>) -> AuthSpec {
        AuthSpec {
            tokens,
            rbac: false,
        }
    }

    #[test]
    fn static_tokens_name_users_with_their_groups() {
        let a = Authenticator::new(
            &spec(vec![
                TokenSpec::token("t1", "ci", &["devs"]),
                TokenSpec::token("t2", "system:serviceaccount:shop:deployer", &[]),
            ]),
            Clock::fixed(),
        );
        let ci = a
            .authenticate(&headers("Bearer t1"), false)
            .unwrap()
            .unwrap();
        assert_eq!(ci.name, "ci");
        assert_eq!(ci.groups, ["devs", "system:authenticated"]);
        let sa = a
            .authenticate(&headers("bearer t2"), false)
            .unwrap()
            .unwrap();
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:shop",
                "system:authenticated"
            ]
        );
        let err = a.authenticate(&headers("Bearer nope"), false).unwrap_err();
        assert_eq!(err.code, 401);
        assert!(a.authenticate(&HeaderMap::new(), false).is_err());
        assert!(a.authenticate(&headers("Basic dTpw"), false).is_err());
        // The in-process client without a token is the loopback superuser.
        let lo = a.authenticate(&HeaderMap::new(), true).unwrap().unwrap();
        assert!(lo.in_group(MASTERS));
    }

    #[test]
    fn revoked_tokens_and_rewritten_files_stop_working() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "first\n").unwrap();
        let a = Authenticator::new(
            &spec(vec![
                TokenSpec::token("t1", "ci", &[]),
                TokenSpec::token_file(&file, "rotating", &[]),
            ]),
            Clock::fixed(),
        );
        assert_eq!(a.user_for("first").unwrap().name, "rotating");
        std::fs::write(&file, "second").unwrap();
        assert!(a.user_for("first").is_none());
        assert_eq!(a.user_for("second").unwrap().name, "rotating");
        assert!(a.revoke("t1"));
        assert!(a.user_for("t1").is_none());
        assert!(!a.revoke("t1"));
        std::fs::remove_file(&file).unwrap();
        assert!(a.user_for("second").is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_with_until_is_refused_from_then_on() {
        let a = Authenticator::new(
            &spec(vec![
                TokenSpec::token("old", "ci", &[]).until(Duration::from_secs(30)),
            ]),
            Clock::fixed(),
        );
        assert!(a.user_for("old").is_some());
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert!(a.user_for("old").is_none());
    }

    #[test]
    fn disabled_authentication_lets_every_request_through_anonymously() {
        let a = Authenticator::new(&AuthSpec::default(), Clock::fixed());
        assert_eq!(a.authenticate(&HeaderMap::new(), false).unwrap(), None);
    }
}
