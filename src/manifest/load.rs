//! The loader's entry point: inputs in, validated manifests or every problem found out.

use super::document::{Manifest, collect_objects};
use super::error::{LoadError, Problem};
use super::json::parse_json_stream;
use super::source::{Source, read_inputs};
use super::validate::validate;
use super::yaml::{Stream, YamlError, parse_stream};

/// Reads, parses and statically validates the inputs (see `read_inputs` for how files,
/// directories and `-` are taken). `stdin` is standard input already read, used for `-`.
/// Returns the objects in input order, or all problems in input and line order.
pub fn load(inputs: &[String], stdin: Option<&str>) -> Result<Vec<Manifest>, LoadError> {
    let mut problems = Vec::new();
    if inputs.is_empty() {
        problems.push(
            Problem::new("", None, "no manifests given")
                .with_hint("pass -f PATH (a file or directory), or -f - to read stdin"),
        );
    }
    let mut manifests = Vec::new();
    let mut places = Vec::new();
    for read in read_inputs(inputs, stdin) {
        match read {
            Ok(source) => {
                parse_source(&source, &mut manifests, &mut problems);
                places.push(source.name);
            }
            Err(problem) => {
                places.push(problem.file.clone());
                problems.push(problem);
            }
        }
    }
    problems.extend(validate(&manifests));
    if problems.is_empty() && manifests.is_empty() {
        problems.push(
            Problem::new("", None, "no objects found in the inputs")
                .with_hint("directories are searched for .yaml, .yml and .json files"),
        );
    }
    finish(manifests, problems, &places)
}

/// Parses one already-read text; for callers that obtained manifests another way.
pub fn load_str(name: &str, text: &str) -> Result<Vec<Manifest>, LoadError> {
    let mut manifests = Vec::new();
    let mut problems = Vec::new();
    let source = Source {
        name: name.to_string(),
        text: text.to_string(),
    };
    parse_source(&source, &mut manifests, &mut problems);
    problems.extend(validate(&manifests));
    finish(manifests, problems, &[source.name])
}

/// Problems ordered by where their input came (in the order given), then by line.
fn finish(
    manifests: Vec<Manifest>,
    mut problems: Vec<Problem>,
    places: &[String],
) -> Result<Vec<Manifest>, LoadError> {
    if problems.is_empty() {
        return Ok(manifests);
    }
    let place = |file: &str| places.iter().position(|p| p == file);
    problems.sort_by_key(|p| (place(&p.file), p.line));
    Err(LoadError::Invalid(problems))
}

fn parse_source(source: &Source, manifests: &mut Vec<Manifest>, problems: &mut Vec<Problem>) {
    let mut stream = parse_stream(&source.text);
    let syntax_error = stream
        .errors
        .iter()
        .any(|e| matches!(e, YamlError::Syntax { .. }));
    if syntax_error && let Some(documents) = parse_json_stream(&source.text) {
        stream = Stream {
            documents,
            errors: Vec::new(),
        };
    }
    for error in &stream.errors {
        problems.push(yaml_problem(&source.name, error));
    }
    let first = manifests.len();
    for document in stream.documents {
        collect_objects(&source.name, document, manifests, problems);
    }
    let lines: Vec<&str> = source.text.lines().collect();
    for m in &mut manifests[first..] {
        m.origin = super::origin::of(&lines, m.line, &m.object);
    }
}

fn yaml_problem(file: &str, error: &YamlError) -> Problem {
    let problem = Problem::new(file, Some(error.line()), error.to_string());
    match error {
        YamlError::Syntax { .. } => {
            problem.with_hint("check indentation and quoting around this line")
        }
        YamlError::DuplicateKey { .. } => {
            problem.with_hint("a key may appear only once in a mapping")
        }
        _ => problem,
    }
}
