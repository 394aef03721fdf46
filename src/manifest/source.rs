//! Expands the user's `-f` inputs (files, directories, `-` for stdin) into named texts,
//! the only place in the loader that touches the file system.

use std::collections::HashSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::error::Problem;
use super::limits::{MAX_INPUT_BYTES, mib};

/// How stdin is shown in messages.
pub const STDIN_NAME: &str = "<stdin>";

const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// One text to parse, named as the user will recognise it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// Reads every input in order. Directories are walked recursively in path order, keeping
/// `.yaml`/`.yml`/`.json` files and skipping hidden entries; a file named explicitly is read
/// whatever its name. `stdin` is the already-read standard input for `-`.
/// Texts and the problems of inputs that could not be read come back in input order.
/// Together the texts stay within [`MAX_INPUT_BYTES`]; an input that would go beyond is
/// refused (a file before it is read) and the ones after it are not read.
pub fn read_inputs(inputs: &[String], stdin: Option<&str>) -> Vec<Result<Source, Problem>> {
    let mut read = Vec::new();
    let mut stdin_used = false;
    let mut budget = Budget::default();
    for input in inputs {
        if input == "-" {
            match stdin {
                _ if stdin_used => read.push(Err(Problem::new(
                    STDIN_NAME,
                    None,
                    "stdin is given more than once",
                )
                .with_hint("pass `-f -` once; stdin can only be read one time"))),
                Some(text) => read.push(budget.take(STDIN_NAME, text.len()).map(|()| Source {
                    name: STDIN_NAME.to_string(),
                    text: strip_bom(text).to_string(),
                })),
                None => read.push(Err(Problem::new(
                    STDIN_NAME,
                    None,
                    "stdin is not available",
                ))),
            }
            stdin_used = true;
            continue;
        }
        let path = Path::new(input);
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let mut files = Vec::new();
                let mut visited = HashSet::new();
                walk(path, &mut files, &mut visited, &mut read);
                files.sort();
                read.extend(
                    files
                        .iter()
                        .map(|(file, len)| read_file(file, *len, &mut budget)),
                );
            }
            Ok(meta) => read.push(read_file(path, meta.len(), &mut budget)),
            Err(e) => read.push(Err(io_problem(input, &e))),
        }
    }
    read
}

/// Bytes read so far, against [`MAX_INPUT_BYTES`].
#[derive(Default)]
struct Budget {
    used: usize,
    exceeded: bool,
}

impl Budget {
    /// Counts `len` more bytes of `name`, or refuses them (and everything after) if they
    /// would take the inputs beyond the limit.
    fn take(&mut self, name: &str, len: usize) -> Result<(), Problem> {
        if self.exceeded {
            return Err(Problem::new(
                name,
                None,
                "not read: the inputs before it already reach the size limit",
            ));
        }
        if self.used.saturating_add(len) <= MAX_INPUT_BYTES {
            self.used += len;
            return Ok(());
        }
        self.exceeded = true;
        let limit = mib(MAX_INPUT_BYTES);
        let message = if name == STDIN_NAME && len > MAX_INPUT_BYTES {
            // Read only to one byte past the limit: its real size is unknown.
            format!("input too large: more than the {limit} limit")
        } else if len > MAX_INPUT_BYTES {
            format!("input too large: {}, over the {limit} limit", mib(len))
        } else {
            format!(
                "input too large: {} takes the inputs over the {limit} limit",
                mib(len)
            )
        };
        Err(Problem::new(name, None, message)
            .with_hint("deploy fewer manifests per run; generated or vendored files may have been picked up from a directory"))
    }
}

fn walk(
    dir: &Path,
    files: &mut Vec<(PathBuf, u64)>,
    visited: &mut HashSet<PathBuf>,
    problems: &mut Vec<Result<Source, Problem>>,
) {
    // Symlinked directories are followed, but each real directory only once.
    if let Ok(real) = fs::canonicalize(dir)
        && !visited.insert(real)
    {
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return problems.push(Err(io_problem(&dir.display().to_string(), &e))),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = dir.join(&name);
        match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, files, visited, problems),
            Ok(meta) if has_manifest_extension(&path) => files.push((path, meta.len())),
            Ok(_) => {}
            Err(e) => problems.push(Err(io_problem(&path.display().to_string(), &e))),
        }
    }
}

fn has_manifest_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e))
}

/// Reads `path`, whose size (`len`, from the metadata already read) is counted first.
fn read_file(path: &Path, len: u64, budget: &mut Budget) -> Result<Source, Problem> {
    let name = path.display().to_string();
    budget.take(&name, usize::try_from(len).unwrap_or(usize::MAX))?;
    let bytes = fs::read(path).map_err(|e| io_problem(&name, &e))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source {
            text: strip_bom(&text).to_string(),
            name,
        }),
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            #[expect(
                clippy::naive_bytecount,
                reason = "one count on an error path; not worth the bytecount dependency"
            )]
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            Err(Problem::new(name, Some(line), "file is not valid UTF-8")
                .with_hint("manifests must be UTF-8 encoded YAML or JSON"))
        }
    }
}

fn io_problem(name: &str, error: &std::io::Error) -> Problem {
    match error.kind() {
        ErrorKind::NotFound => Problem::new(name, None, "no such file or directory"),
        ErrorKind::PermissionDenied => Problem::new(name, None, "permission denied"),
        _ => Problem::new(name, None, format!("failed to read: {error}")),
    }
}

fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}
