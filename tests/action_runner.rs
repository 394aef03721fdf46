//! A small runner for `action.yml` itself: it executes the composite steps' `run:` blocks
//! with bash as GitHub does (`bash --noprofile --norc -eo pipefail`), their `env:` mapping
//! evaluated from inputs and earlier steps' outputs, in a simulated runner environment
//! (RUNNER_OS, RUNNER_TEMP, GITHUB_OUTPUT per step, GITHUB_STEP_SUMMARY, GITHUB_ENV, CI), masks
//! what `::add-mask::` registers in the log as the runner does, and
//! stands in for `actions/cache` (and its `restore` and `save`) with a directory per key. Expressions it cannot evaluate
//! make the test fail, so action.yml cannot quietly depend on more than is tested here.

use serde_yaml_ng::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One simulated job: a runner temp dir, a workspace, and a cache that outlives runs.
pub struct Runner {
    pub root: tempfile::TempDir,
    /// The folder `GITHUB_ACTION_PATH` points at.
    pub action_path: PathBuf,
    /// Extra environment (e.g. PATH with fake tools first).
    pub env: BTreeMap<String, String>,
}

/// What one run of the action left behind.
#[derive(Debug)]
pub struct Run {
    /// The exit code of the first step that failed, else 0.
    pub exit: i32,
    pub outputs: BTreeMap<String, String>,
    pub summary: String,
    /// Everything the steps printed, in order.
    pub log: String,
    /// Names of the steps that ran.
    pub ran: Vec<String>,
}

type Outputs = BTreeMap<String, BTreeMap<String, String>>;

impl Runner {
    pub fn new(action_path: &Path) -> Runner {
        let root = tempfile::tempdir().expect("tempdir");
        for dir in ["temp", "workspace", "cache"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("runner dirs");
        }
        Runner {
            root,
            action_path: action_path.to_owned(),
            env: BTreeMap::new(),
        }
    }

    pub fn workspace(&self) -> PathBuf {
        self.root.path().join("workspace")
    }

    fn temp(&self) -> PathBuf {
        self.root.path().join("temp")
    }

    /// Run the action with `inputs` (the rest take their defaults).
    pub fn run(&self, inputs: &[(&str, &str)]) -> Run {
        let text =
            std::fs::read_to_string(self.action_path.join("action.yml")).expect("action.yml");
        let action: Value = serde_yaml_ng::from_str(&text).expect("action.yml parses");
        let mut input_values: BTreeMap<String, String> = BTreeMap::new();
        for (name, spec) in action["inputs"].as_mapping().expect("inputs") {
            let default = spec["default"].as_str().unwrap_or_default();
            let default = if default == "${{ github.token }}" {
                ""
            } else {
                default
            };
            input_values.insert(name.as_str().unwrap().to_owned(), default.to_owned());
        }
        for (k, v) in inputs {
            assert!(input_values.contains_key(*k), "action.yml has no input {k}");
            input_values.insert((*k).to_owned(), (*v).to_owned());
        }
        let summary_file = self.temp().join("step_summary.md");
        std::fs::write(&summary_file, "").unwrap();
        let mut outputs: Outputs = BTreeMap::new();
        let mut run = Run {
            exit: 0,
            outputs: BTreeMap::new(),
            summary: String::new(),
            log: String::new(),
            ran: Vec::new(),
        };
        let mut saves: Vec<(String, PathBuf)> = Vec::new();
        let mut masks: Vec<String> = Vec::new();
        let steps = action["runs"]["steps"].as_sequence().expect("steps");
        for (i, step) in steps.iter().enumerate() {
            let ctx = Ctx {
                inputs: &input_values,
                steps: &outputs,
                failed: run.exit != 0,
                temp: &self.temp(),
            };
            let condition = step["if"].as_str().unwrap_or("success()");
            if !ctx.condition(condition) {
                continue;
            }
            let name = step["name"].as_str().unwrap_or("step").to_owned();
            run.ran.push(name.clone());
            let id = step["id"]
                .as_str()
                .map_or_else(|| format!("__{i}"), str::to_owned);
            if let Some(uses) = step["uses"].as_str() {
                let path = PathBuf::from(ctx.expand(step["with"]["path"].as_str().unwrap()));
                let key = ctx.expand(step["with"]["key"].as_str().unwrap());
                let stored = self.root.path().join("cache").join(&key);
                let action = uses.split('@').next().unwrap_or_default();
                match action {
                    // restore now; `actions/cache` also saves in its post step (job end)
                    "actions/cache" | "actions/cache/restore" => {
                        let hit = stored.exists();
                        if hit {
                            copy_dir(&stored, &path);
                        } else if action == "actions/cache" {
                            saves.push((key, path));
                        }
                        outputs
                            .entry(id)
                            .or_default()
                            .insert("cache-hit".into(), hit.to_string());
                    }
                    // saves at once, whatever the job's result later
                    "actions/cache/save" => {
                        if path.exists() && !stored.exists() {
                            copy_dir(&path, &stored);
                        }
                    }
                    other => panic!("the runner simulates actions/cache only, not {other}"),
                }
                continue;
            }
            let script = step["run"].as_str().expect("a run: or uses: step");
            let output_file = self.temp().join(format!("output_{i}"));
            std::fs::write(&output_file, "").unwrap();
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .current_dir(self.workspace())
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", self.root.path())
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .env("RUNNER_TEMP", self.temp())
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", &self.action_path)
                .env("GITHUB_WORKSPACE", self.workspace())
                .env("GITHUB_REPOSITORY", "acme/shop")
                .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
                .env("GITHUB_SERVER_URL", "https://github.com")
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_ENV", self.temp().join("env"))
                .env("GITHUB_STEP_SUMMARY", &summary_file)
                // What a hosted runner sets; not NO_COLOR.
                .env("CI", "true");
            for (k, v) in &self.env {
                cmd.env(k, v);
            }
            if let Some(env) = step["env"].as_mapping() {
                for (k, v) in env {
                    let value = match v {
                        Value::String(s) => ctx.expand(s),
                        other => serde_yaml_ng::to_string(other).unwrap().trim().to_owned(),
                    };
                    cmd.env(k.as_str().unwrap(), value);
                }
            }
            let out = cmd.output().expect("bash runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            // As the runner does: `::add-mask::` registers a value, which the log shows
            // as *** from then on (the command line itself is not shown).
            for line in stdout.lines() {
                if let Some(value) = line.strip_prefix("::add-mask::") {
                    masks.push(value.to_owned());
                }
            }
            let mut shown = String::new();
            for line in stdout.lines().filter(|l| !l.starts_with("::add-mask::")) {
                shown.push_str(line);
                shown.push('\n');
            }
            run.log.push_str(&format!("## {name}\n"));
            run.log.push_str(&masked(&shown, &masks));
            run.log
                .push_str(&masked(&String::from_utf8_lossy(&out.stderr), &masks));
            let written = std::fs::read_to_string(&output_file).unwrap_or_default();
            outputs.insert(id, parse_outputs(&written));
            if !out.status.success() && run.exit == 0 {
                run.exit = out.status.code().unwrap_or(-1);
            }
        }
        // actions/cache saves in its post step, at the end of the job, what it did not find.
        if run.exit == 0 {
            for (key, path) in saves {
                if path.exists() {
                    copy_dir(&path, &self.root.path().join("cache").join(key));
                }
            }
        }
        let ctx = Ctx {
            inputs: &input_values,
            steps: &outputs,
            failed: run.exit != 0,
            temp: &self.temp(),
        };
        for (name, spec) in action["outputs"].as_mapping().expect("outputs") {
            let value = ctx.expand(spec["value"].as_str().expect("output value"));
            run.outputs.insert(name.as_str().unwrap().to_owned(), value);
        }
        run.summary = std::fs::read_to_string(&summary_file).unwrap_or_default();
        run
    }
}

/// `text` with every registered value replaced by `***`, longest first.
fn masked(text: &str, masks: &[String]) -> String {
    let mut values: Vec<&String> = masks.iter().filter(|m| !m.trim().is_empty()).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values
        .iter()
        .fold(text.to_owned(), |t, v| t.replace(v.as_str(), "***"))
}

/// Copies a cached directory the way `actions/cache` does, from another process: `cp`,
/// not `std::fs::copy`. A file this test process holds open for writing is inherited by
/// any child another test thread forks meanwhile, until that child execs; a binary
/// restored that way and run at once failed once with "Text file busy".
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let status = std::process::Command::new("cp")
        .arg("-pR")
        .arg(from.join("."))
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -pR {} {}: {status}",
        from.display(),
        to.display()
    );
}

/// `name=value` lines and `name<<DELIM` heredocs, as the runner reads GITHUB_OUTPUT.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_owned(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            out.insert(name.to_owned(), value.to_owned());
        }
    }
    out
}

/// The expression context: only what action.yml uses.
struct Ctx<'a> {
    inputs: &'a BTreeMap<String, String>,
    steps: &'a Outputs,
    failed: bool,
    temp: &'a Path,
}

impl Ctx<'_> {
    /// `${{ ... }}` substituted in `text`.
    fn expand(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("closed expression") + start;
            out.push_str(&self.eval(rest[start + 3..end].trim()));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    fn condition(&self, expr: &str) -> bool {
        let expr = expr.trim();
        let expr = expr
            .strip_prefix("${{")
            .and_then(|e| e.strip_suffix("}}"))
            .unwrap_or(expr)
            .trim();
        match expr {
            "always()" => true,
            "success()" => !self.failed,
            "failure()" => self.failed,
            _ => !self.failed && truthy(&self.eval(expr)),
        }
    }

    fn eval(&self, expr: &str) -> String {
        if let Some((a, b)) = expr.split_once("||") {
            let a = self.eval(a.trim());
            return if truthy(&a) { a } else { self.eval(b.trim()) };
        }
        if let Some((a, b)) = expr.split_once("&&") {
            let a = self.eval(a.trim());
            return if truthy(&a) { self.eval(b.trim()) } else { a };
        }
        for (op, equal) in [("!=", false), ("==", true)] {
            if let Some((a, b)) = expr.split_once(op) {
                let same = self.eval(a.trim()) == self.eval(b.trim());
                return (same == equal).to_string();
            }
        }
        if let Some(lit) = expr.strip_prefix('\'').and_then(|e| e.strip_suffix('\'')) {
            return lit.to_owned();
        }
        if let Some(name) = expr.strip_prefix("inputs.") {
            return self.inputs.get(name).cloned().unwrap_or_default();
        }
        if let Some(path) = expr.strip_prefix("steps.") {
            let (id, rest) = path.split_once(".outputs").expect("steps.ID.outputs");
            let name = rest
                .strip_prefix('.')
                .map(str::to_owned)
                .or_else(|| {
                    rest.strip_prefix("['")
                        .and_then(|r| r.strip_suffix("']"))
                        .map(str::to_owned)
                })
                .expect("an output name");
            return self
                .steps
                .get(id)
                .and_then(|o| o.get(&name))
                .cloned()
                .unwrap_or_default();
        }
        match expr {
            "github.action_repository" => "acme/deploy-action".to_owned(),
            "github.token" => String::new(),
            "runner.temp" => self.temp.display().to_string(),
            other => panic!("the action runner cannot evaluate `{other}`"),
        }
    }
}

fn truthy(value: &str) -> bool {
    !value.is_empty() && value != "false"
}
