//! Reading health rules from YAML (a `--rules` file, a CRD's annotation, the bundled
//! library), refusing every mistake at once with its file and line, before anything is
//! applied.

use crate::manifest::{Document, Problem, parse_stream};
use crate::pointer::Pointer;
use crate::rules::health::expr::Expr;
use crate::rules::health::rule::{Clause, Generation, HealthRule};
use crate::vocab::verdict::{Reason, Verdict};
use serde_json::Value;
use std::path::Path;

/// The annotation a CRD carries its instances' health rule in (the same YAML as a rules
/// file; `group` and `kind` may be left out).
pub const HEALTH_RULES_ANNOTATION: &str = "deploy-action.io/health-rules";

const RULE_KEYS: [&str; 9] = [
    "group",
    "kind",
    "about",
    "variables",
    "generation",
    "paused",
    "failed",
    "waiting",
    "done",
];
const CLAUSE_KEYS: [&str; 3] = ["when", "message", "reason"];
const FORMAT_HINT: &str = "a rules file is `rules:` followed by a list of {group, kind, variables, generation, paused, failed, waiting, done}; each clause is {when: CEL, message: CEL, reason: a word of the vocabulary (failed: condition_failed by default; waiting: not_ready by default)}";

/// Reads a rules file.
pub fn load(path: &Path) -> Result<Vec<HealthRule>, Vec<Problem>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![
            Problem::new(&name, None, format!("cannot read the rules file: {e}"))
                .with_hint("--rules names a YAML file of health rules"),
        ]
    })?;
    parse(&text, &name)
}

/// Reads rules from YAML text; `file` names it in problems.
pub fn parse(text: &str, file: &str) -> Result<Vec<HealthRule>, Vec<Problem>> {
    parse_with(text, file, None, 0)
}

/// Reads a CRD's annotation: the rules must be for the kind it defines (`group`/`kind`
/// may be left out). `line` is where the annotation stands in its manifest (0 when the
/// CRD came from the cluster), so a problem points into the manifest.
pub fn parse_annotation(
    text: &str,
    file: &str,
    line: usize,
    defines: (&str, &str),
) -> Result<Vec<HealthRule>, Vec<Problem>> {
    parse_with(text, file, Some(defines), line)
}

fn parse_with(
    text: &str,
    file: &str,
    defines: Option<(&str, &str)>,
    offset: usize,
) -> Result<Vec<HealthRule>, Vec<Problem>> {
    let at = |line: usize| Some(line + offset).filter(|l| *l > 0);
    let stream = parse_stream(text);
    let mut problems: Vec<Problem> = stream
        .errors
        .iter()
        .map(|e| Problem::new(file, at(e.line()), e.to_string()))
        .collect();
    let mut rules = Vec::new();
    for doc in stream.documents.iter().filter(|d| !d.value.is_null()) {
        let mut reader = Reader {
            file,
            doc,
            offset,
            problems: &mut problems,
        };
        let Some(list) = doc.value.get("rules").and_then(Value::as_array) else {
            reader.shape("", "expected a `rules:` list".to_owned());
            continue;
        };
        reader.unknown_keys("", &doc.value, &["rules"]);
        for i in 0..list.len() {
            if let Some(rule) = reader.rule(&format!("/rules/{i}"), defines) {
                rules.push(rule);
            }
        }
    }
    problems.sort_by_key(|p| p.line);
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

struct Reader<'a> {
    file: &'a str,
    doc: &'a Document,
    offset: usize,
    problems: &'a mut Vec<Problem>,
}

impl Reader<'_> {
    fn line(&self, pointer: &str) -> usize {
        let line = self.doc.lines.get(pointer).unwrap_or(self.doc.line);
        line + self.offset
    }

    fn problem(&mut self, pointer: &str, message: String) {
        let line = self.line(pointer);
        self.problems
            .push(Problem::new(self.file, Some(line), message));
    }

    /// A problem with the file's shape, which the format's summary helps with.
    fn shape(&mut self, pointer: &str, message: String) {
        let line = self.line(pointer);
        self.problems
            .push(Problem::new(self.file, Some(line), message).with_hint(FORMAT_HINT));
    }

    fn unknown_keys(&mut self, pointer: &str, value: &Value, known: &[&str]) {
        for key in value.as_object().into_iter().flat_map(|m| m.keys()) {
            if !known.contains(&key.as_str()) {
                self.problem(
                    &format!("{pointer}/{key}"),
                    format!("unknown key {key:?} (known: {})", known.join(", ")),
                );
            }
        }
    }

    fn text(&mut self, pointer: &str, value: &Value, key: &str) -> Option<String> {
        match value.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            None => None,
            Some(_) => {
                self.problem(&format!("{pointer}/{key}"), format!("{key} must be a text"));
                None
            }
        }
    }

    fn rule(&mut self, pointer: &str, defines: Option<(&str, &str)>) -> Option<HealthRule> {
        let value = self.doc.value.at(pointer)?;
        if !value.is_object() {
            self.shape(pointer, "a rule must be a mapping".to_owned());
            return None;
        }
        self.unknown_keys(pointer, value, &RULE_KEYS);
        let group = self.text(pointer, value, "group");
        let kind = self.text(pointer, value, "kind");
        let (group, kind) = match (defines, group, kind) {
            (Some((g, k)), group, kind) => {
                if group.as_deref().is_some_and(|x| x != g)
                    || kind.as_deref().is_some_and(|x| x != k)
                {
                    self.problem(
                        pointer,
                        format!("a CRD's rule is for the kind it defines ({g}/{k})"),
                    );
                    return None;
                }
                (g.to_owned(), k.to_owned())
            }
            (None, Some(group), Some(kind)) => (group, kind),
            (None, group, kind) => {
                if group.is_none() {
                    self.problem(
                        pointer,
                        "a rule needs a group (e.g. cert-manager.io)".to_owned(),
                    );
                }
                if kind.is_none() {
                    self.problem(pointer, "a rule needs a kind (e.g. Certificate)".to_owned());
                }
                return None;
            }
        };
        let before = self.problems.len();
        let generation = match self.text(pointer, value, "generation").as_deref() {
            None | Some("status") => Generation::Status,
            Some("conditions") => Generation::Conditions,
            Some(other) => {
                self.problem(
                    &format!("{pointer}/generation"),
                    format!("generation {other:?}: say status (status.observedGeneration, the default) or conditions (each condition's own)"),
                );
                Generation::Status
            }
        };
        let variables = self.variables(pointer, value);
        let paused = self.clauses(pointer, value, "paused");
        let failed = self.clauses(pointer, value, "failed");
        let waiting = self.clauses(pointer, value, "waiting");
        let done = self.clauses(pointer, value, "done");
        if done.is_empty() && self.problems.len() == before {
            self.problem(
                pointer,
                format!("the rule for {group}/{kind} has no `done` clause: it could never succeed"),
            );
        }
        let origin = format!("{}:{}", self.file, self.line(pointer));
        (self.problems.len() == before).then_some(HealthRule {
            group,
            kind,
            origin,
            variables,
            paused,
            generation,
            failed,
            waiting,
            done,
        })
    }

    /// `variables: [{name, expression}]`, as a ValidatingAdmissionPolicy writes them.
    fn variables(&mut self, pointer: &str, rule: &Value) -> Vec<(String, Expr)> {
        let Some(list) = rule.get("variables") else {
            return Vec::new();
        };
        let at = format!("{pointer}/variables");
        let Some(list) = list.as_array() else {
            self.shape(
                &at,
                "variables must be a list of {name, expression}".to_owned(),
            );
            return Vec::new();
        };
        let mut named: Vec<(String, Expr)> = Vec::new();
        for (i, v) in list.iter().enumerate() {
            let at = format!("{at}/{i}");
            self.unknown_keys(&at, v, &["name", "expression"]);
            let name = self.text(&at, v, "name");
            let expression = self.text(&at, v, "expression");
            let (Some(name), Some(expression)) = (name, expression) else {
                self.shape(&at, "a variable needs a name and an expression".to_owned());
                continue;
            };
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || name.starts_with(|c: char| c.is_ascii_digit())
            {
                self.problem(
                    &format!("{at}/name"),
                    format!("variable name {name:?}: use letters, digits and _"),
                );
                continue;
            }
            if named.iter().any(|(n, _)| *n == name) {
                self.problem(
                    &format!("{at}/name"),
                    format!("variable {name} is named twice"),
                );
                continue;
            }
            if let Some(e) = self.expr(&format!("{at}/expression"), &expression) {
                named.push((name, e));
            }
        }
        named
    }

    fn clauses(&mut self, pointer: &str, rule: &Value, key: &str) -> Vec<Clause> {
        let Some(list) = rule.get(key) else {
            return Vec::new();
        };
        let Some(list) = list.as_array() else {
            self.shape(
                &format!("{pointer}/{key}"),
                format!("{key} must be a list of clauses"),
            );
            return Vec::new();
        };
        let mut clauses = Vec::new();
        for (i, clause) in list.iter().enumerate() {
            let at = format!("{pointer}/{key}/{i}");
            if !clause.is_object() {
                self.shape(&at, "a clause must be a mapping with `when`".to_owned());
                continue;
            }
            self.unknown_keys(&at, clause, &CLAUSE_KEYS);
            let Some(when) = self.text(&at, clause, "when") else {
                self.problem(&at, "a clause needs `when`, a CEL expression".to_owned());
                continue;
            };
            let when = self.expr(&format!("{at}/when"), &when);
            let message = self
                .text(&at, clause, "message")
                .and_then(|m| self.expr(&format!("{at}/message"), &m));
            let ends_in = if key == "failed" {
                Verdict::Failed
            } else {
                Verdict::TimedOut
            };
            let reason = match self.text(&at, clause, "reason") {
                None if key == "failed" => Reason::ConditionFailed,
                None => Reason::NotReady,
                Some(word) => {
                    let allowed: Vec<&str> = Reason::ALL
                        .iter()
                        .filter(|r| r.verdict() == ends_in && !matches!(key, "done" | "paused"))
                        .map(|r| r.as_str())
                        .collect();
                    match Reason::ALL
                        .iter()
                        .find(|r| r.as_str() == word && allowed.contains(&word.as_str()))
                    {
                        Some(r) => *r,
                        None if matches!(key, "done" | "paused") => {
                            self.problem(
                                &format!("{at}/reason"),
                                format!("a {key} clause takes no reason"),
                            );
                            continue;
                        }
                        None => {
                            self.problem(
                                &format!("{at}/reason"),
                                format!(
                                    "reason {word:?}: a {key} clause says one of {}",
                                    allowed.join(", ")
                                ),
                            );
                            continue;
                        }
                    }
                }
            };
            if let Some(when) = when {
                clauses.push(Clause {
                    when,
                    message,
                    reason,
                });
            }
        }
        clauses
    }

    fn expr(&mut self, pointer: &str, source: &str) -> Option<Expr> {
        match Expr::compile(source) {
            Ok(e) => Some(e),
            Err(e) => {
                self.problem(pointer, format!("invalid CEL {source:?}: {e}"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::render_problems;

    const GOOD: &str = "\
# health of a widget
rules:
  - group: acme.io
    kind: Widget
    about: the widget controller's words
    failed:
      - when: status.phase == 'Failed' && status.reason == 'InvalidSpec'
        message: \"'invalid spec: ' + status.message\"
    waiting:
      - when: \"!has(status.phase)\"
        reason: not_reconciled
    done:
      - when: status.phase == 'Running'
";

    #[test]
    fn reads_a_rules_file() {
        let rules = parse(GOOD, "rules.yaml").unwrap();
        assert_eq!(rules.len(), 1);
        let r = &rules[0];
        assert_eq!((r.group.as_str(), r.kind.as_str()), ("acme.io", "Widget"));
        assert_eq!(r.origin, "rules.yaml:3");
        assert_eq!((r.failed.len(), r.waiting.len(), r.done.len()), (1, 1, 1));
        assert_eq!(r.waiting[0].reason, Reason::NotReconciled);
    }

    #[test]
    fn refuses_every_mistake_with_its_line() {
        let bad = "\
rules:
  - group: acme.io
    kind: Widget
    done:
      - when: status.phase ==
      - when: stauts.phase == 'Running'
        mesage: \"'x'\"
    waiting:
      - when: \"true\"
        reason: crash_loop
  - group: acme.io
    failed:
      - when: \"true\"
";
        let problems = parse(bad, "rules.yaml").unwrap_err();
        let text = render_problems(&problems);
        let lines: Vec<(Option<usize>, &str)> = problems
            .iter()
            .map(|p| (p.line, p.message.split(':').next().unwrap_or("")))
            .collect();
        assert_eq!(
            lines,
            vec![
                (Some(5), "invalid CEL \"status.phase ==\""),
                (Some(6), "invalid CEL \"stauts.phase == 'Running'\""),
                (Some(7), "unknown key \"mesage\" (known"),
                (Some(10), "reason \"crash_loop\""),
                (Some(11), "a rule needs a kind (e.g. Certificate)"),
            ],
            "{text}"
        );
        assert!(text.contains("Syntax error"), "{text}");
        assert!(!text.contains("hint:"), "{text}");
    }

    #[test]
    fn a_rule_that_can_never_succeed_is_refused() {
        let problems = parse(
            "rules:\n- group: acme.io\n  kind: Widget\n  failed:\n  - when: \"true\"\n",
            "r.yaml",
        )
        .unwrap_err();
        assert_eq!(
            problems[0].to_string().lines().next(),
            Some(
                "r.yaml:2: the rule for acme.io/Widget has no `done` clause: it could never succeed"
            )
        );
        let problems = parse("- group: acme.io\n", "r.yaml").unwrap_err();
        assert_eq!(problems[0].message, "expected a `rules:` list");
    }

    #[test]
    fn a_crd_annotation_names_only_its_own_kind() {
        let text = "rules:\n- done:\n  - when: status.phase == 'Running'\n";
        let rules = parse_annotation(text, "crds.yaml", 10, ("acme.io", "Widget")).unwrap();
        assert_eq!(rules[0].kind, "Widget");
        assert_eq!(rules[0].origin, "crds.yaml:12");
        let other = "rules:\n- kind: Gadget\n  done:\n  - when: \"true\"\n";
        let problems = parse_annotation(other, "crds.yaml", 10, ("acme.io", "Widget")).unwrap_err();
        assert_eq!(
            (problems[0].line, problems[0].message.as_str()),
            (
                Some(12),
                "a CRD's rule is for the kind it defines (acme.io/Widget)"
            )
        );
    }
}
