//! Image behaviours: how pulling an image goes and how its containers run, looked up by
//! exact reference, then by glob, then the default.

use super::duration::Dur;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::time::Duration;

/// How a pull of the image ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullBehaviour {
    /// The pull succeeds after this long.
    Succeeds { after: Duration },
    /// The registry has no such repository or tag: containerd's "not found", forever.
    NotFound,
    /// The registry refuses us: "pull access denied ... insufficient_scope", forever.
    Unauthorized,
    /// The kubelet refuses the reference itself (InvalidImageName).
    InvalidName,
    /// These errors in turn, one per attempt (texts or short forms such as `429`,
    /// `503`, `timeout`), then the next behaviour.
    Errors {
        errors: Vec<String>,
        then: Box<PullBehaviour>,
    },
}

/// When a running container becomes Ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    After(Duration),
    Never,
}

/// A container that terminates by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub code: i32,
    pub oom: bool,
    /// Time from start to exit.
    pub after: Duration,
}

/// Everything the kubelet needs to know about one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageBehaviour {
    pub pull: PullBehaviour,
    pub ready: Readiness,
    /// `None`: runs until deleted.
    pub exit: Option<Exit>,
    /// Lines the container writes when it starts (each instance).
    pub logs: Vec<String>,
    /// The runtime cannot start the container (ContainerCannotRun) with this message.
    pub start_error: Option<String>,
    /// A rule applies to containers started this long after the cluster started, or later;
    /// earlier ones behave as the next matching rule (or the default) says. Models an image
    /// that changes under the same reference (a tag pushed again, a dependency gone), which
    /// only new containers see: what a rollout restart of an unchanged workload runs into.
    pub from: Duration,
}

impl Default for ImageBehaviour {
    fn default() -> Self {
        ImageBehaviour::pulls_in(Duration::from_secs(1))
    }
}

impl ImageBehaviour {
    pub fn pulls_in(after: Duration) -> Self {
        ImageBehaviour {
            pull: PullBehaviour::Succeeds { after },
            ready: Readiness::After(Duration::ZERO),
            exit: None,
            logs: Vec::new(),
            start_error: None,
            from: Duration::ZERO,
        }
    }

    /// This behaviour only for containers started `from` the cluster's start on.
    #[must_use]
    pub fn from(mut self, from: Duration) -> Self {
        self.from = from;
        self
    }

    pub fn not_found() -> Self {
        ImageBehaviour {
            pull: PullBehaviour::NotFound,
            ..Self::default()
        }
    }

    pub fn unauthorized() -> Self {
        ImageBehaviour {
            pull: PullBehaviour::Unauthorized,
            ..Self::default()
        }
    }

    /// Pull errors in turn, then a pull that succeeds after `then_after`.
    pub fn flaky(errors: &[&str], then_after: Duration) -> Self {
        ImageBehaviour {
            pull: PullBehaviour::Errors {
                errors: errors.iter().map(|e| (*e).to_owned()).collect(),
                then: Box::new(PullBehaviour::Succeeds { after: then_after }),
            },
            ..Self::default()
        }
    }

    /// Exits with `code` (or OOMKilled) `after` each start.
    pub fn crashing(code: i32, oom: bool, after: Duration, logs: &[&str]) -> Self {
        ImageBehaviour {
            exit: Some(Exit { code, oom, after }),
            logs: logs.iter().map(|l| (*l).to_owned()).collect(),
            ..Self::default()
        }
    }

    pub fn never_ready() -> Self {
        ImageBehaviour {
            ready: Readiness::Never,
            ..Self::default()
        }
    }
}

/// Image behaviours by reference; patterns may use `*` and `?`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageTable {
    pub default: ImageBehaviour,
    /// In file order; exact references win over patterns, then the first matching pattern.
    pub rules: Vec<(String, ImageBehaviour)>,
}

impl ImageTable {
    /// The behaviour of a container started at the cluster's start.
    pub fn lookup(&self, image: &str) -> &ImageBehaviour {
        self.lookup_at(image, Duration::ZERO)
    }

    /// The behaviour of a container started `elapsed` after the cluster started: rules
    /// whose `from` is later do not apply yet.
    pub fn lookup_at(&self, image: &str, elapsed: Duration) -> &ImageBehaviour {
        let rules = || self.rules.iter().filter(|(_, b)| b.from <= elapsed);
        rules()
            .find(|(pattern, _)| pattern == image)
            .or_else(|| rules().find(|(pattern, _)| glob_match(pattern, image)))
            .map_or(&self.default, |(_, b)| b)
    }
}

/// `*` matches any run of characters, `?` one character.
fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The map form of an image entry, before it becomes an [`ImageBehaviour`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawImage {
    pull: Option<Dur>,
    errors: Option<Vec<ErrorText>>,
    then: Option<ImageBehaviour>,
    crash: Option<RawCrash>,
    exit: Option<RawExit>,
    ready: Option<RawReady>,
    logs: Option<Lines>,
    start_error: Option<String>,
    from: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCrash {
    #[serde(default = "one")]
    exit_code: i32,
    #[serde(default)]
    oom: bool,
    #[serde(default)]
    after: Dur,
    logs: Option<Lines>,
}

fn one() -> i32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExit {
    #[serde(default)]
    code: i32,
    #[serde(default)]
    after: Dur,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawReady {
    Word(String),
    After(Dur),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Lines {
    One(String),
    Many(Vec<String>),
}

impl Lines {
    fn into_vec(self) -> Vec<String> {
        match self {
            Lines::One(s) => s.lines().map(str::to_owned).collect(),
            Lines::Many(v) => v,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorText {
    Text(String),
    Code(u16),
}

impl<'de> Deserialize<'de> for ImageBehaviour {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ImageBehaviour;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("not_found, unauthorized, invalid_name, or a map with pull/errors/crash/exit/ready/logs")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ImageBehaviour, E> {
                let pull = match v {
                    "not_found" => PullBehaviour::NotFound,
                    "unauthorized" => PullBehaviour::Unauthorized,
                    "invalid_name" => PullBehaviour::InvalidName,
                    other => {
                        return Err(E::custom(format!(
                            "unknown image behaviour {other:?}: expected not_found, unauthorized, invalid_name or a map"
                        )));
                    }
                };
                Ok(ImageBehaviour {
                    pull,
                    ..ImageBehaviour::default()
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ImageBehaviour, A::Error> {
                let raw = RawImage::deserialize(de::value::MapAccessDeserializer::new(map))?;
                raw.into_behaviour().map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl RawImage {
    fn into_behaviour(self) -> Result<ImageBehaviour, String> {
        let mut b = ImageBehaviour::default();
        if let Some(Dur(after)) = self.pull {
            b.pull = PullBehaviour::Succeeds { after };
        }
        if let Some(errors) = self.errors {
            let then = self.then.map_or(b.pull.clone(), |t| t.pull);
            b.pull = PullBehaviour::Errors {
                errors: errors
                    .into_iter()
                    .map(|e| match e {
                        ErrorText::Text(t) => t,
                        ErrorText::Code(c) => c.to_string(),
                    })
                    .collect(),
                then: Box::new(then),
            };
        } else if self.then.is_some() {
            return Err("`then` needs `errors`".into());
        }
        if self.crash.is_some() && self.exit.is_some() {
            return Err("use either `crash` or `exit`, not both".into());
        }
        if let Some(c) = self.crash {
            if c.exit_code == 0 && !c.oom {
                return Err(
                    "a crash needs a non-zero exit_code (use `exit` for clean exits)".into(),
                );
            }
            b.exit = Some(Exit {
                code: if c.oom { 137 } else { c.exit_code },
                oom: c.oom,
                after: c.after.0,
            });
            if let Some(logs) = c.logs {
                b.logs = logs.into_vec();
            }
        }
        if let Some(e) = self.exit {
            b.exit = Some(Exit {
                code: e.code,
                oom: false,
                after: e.after.0,
            });
        }
        match self.ready {
            None => {}
            Some(RawReady::After(Dur(d))) => b.ready = Readiness::After(d),
            Some(RawReady::Word(w)) if w == "never" => b.ready = Readiness::Never,
            Some(RawReady::Word(w)) => {
                return Err(format!("ready must be `never` or a duration, not {w:?}"));
            }
        }
        if let Some(logs) = self.logs {
            b.logs = logs.into_vec();
        }
        b.start_error = self.start_error;
        b.from = self.from.map_or(Duration::ZERO, |d| d.0);
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_shell_patterns() {
        assert!(glob_match("registry.local/*", "registry.local/shop/web:1"));
        assert!(glob_match("*:missing", "a/b:missing"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
        assert!(!glob_match("registry.local/*:v2", "registry.local/web:v1"));
    }

    #[test]
    fn exact_references_win_over_earlier_patterns() {
        let table = ImageTable {
            default: ImageBehaviour::default(),
            rules: vec![
                ("shop/*".into(), ImageBehaviour::never_ready()),
                ("shop/web:missing".into(), ImageBehaviour::not_found()),
            ],
        };
        assert_eq!(
            table.lookup("shop/web:missing").pull,
            PullBehaviour::NotFound
        );
        assert_eq!(table.lookup("shop/api:1").ready, Readiness::Never);
        assert_eq!(table.lookup("nginx:1.27"), &ImageBehaviour::default());
    }

    #[test]
    fn a_rule_from_a_later_moment_leaves_earlier_containers_alone() {
        let crashing =
            ImageBehaviour::crashing(1, false, Duration::ZERO, &[]).from(Duration::from_secs(60));
        let table = ImageTable {
            default: ImageBehaviour::default(),
            rules: vec![("shop/web:1".into(), crashing.clone())],
        };
        assert_eq!(table.lookup("shop/web:1"), &ImageBehaviour::default());
        let later = table.lookup_at("shop/web:1", Duration::from_secs(60));
        assert_eq!(later, &crashing);
        let parsed: ImageBehaviour =
            serde_yaml_ng::from_str("{crash: {exit_code: 1}, from: 60s}").unwrap();
        assert_eq!(parsed.from, Duration::from_secs(60));
    }
}
