//! The loader's entry point: inputs in, validated manifests or every problem found out.

use super::document::{Manifest, collect_objects};
use super::error::{LoadError, Problem};
use serde::de::IgnoredAny;

use super::json::parse_json_stream;
use super::limits::MAX_DOCUMENTS;
use super::source::{Source, read_inputs};
use super::validate::validate;
use super::yaml::{Stream, YamlError, parse_stream_capped};

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
    let mut documents = 0;
    for read in read_inputs(inputs, stdin) {
        match read {
            Ok(source) => {
                parse_source(&source, &mut documents, &mut manifests, &mut problems);
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
    parse_source(&source, &mut 0, &mut manifests, &mut problems);
    problems.extend(validate(&manifests));
    finish(manifests, problems, &[source.name])
}

/// Problems ordered by where their input came (in the order given), then by line.
fn finish(
    mut manifests: Vec<Manifest>,
    mut problems: Vec<Problem>,
    places: &[String],
) -> Result<Vec<Manifest>, LoadError> {
    if problems.is_empty() {
        // The list is held to the end of the run; what it grew by doubling (up to a
        // Manifest of 288 bytes per object: 0.9 MB at 5,000) is given back.
        manifests.shrink_to_fit();
        return Ok(manifests);
    }
    let place = |file: &str| places.iter().position(|p| p == file);
    problems.sort_by_key(|p| (place(&p.file), p.line));
    Err(LoadError::Invalid(problems))
}

/// Parses `source` into `manifests`; `documents` counts the documents of all sources so far,
/// against [`MAX_DOCUMENTS`].
fn parse_source(
    source: &Source,
    documents: &mut usize,
    manifests: &mut Vec<Manifest>,
    problems: &mut Vec<Problem>,
) {
    if let Err(problem) = check_json(source) {
        problems.push(problem);
        return;
    }
    let room = MAX_DOCUMENTS - *documents;
    let mut stream = parse_stream_capped(&source.text, room);
    let syntax_error = stream
        .errors
        .iter()
        .any(|e| matches!(e, YamlError::Syntax { .. }));
    if syntax_error && let Some(mut documents) = parse_json_stream(&source.text) {
        let errors = match documents.get(room) {
            Some(extra) => vec![YamlError::TooManyDocuments { line: extra.line }],
            None => Vec::new(),
        };
        documents.truncate(room);
        stream = Stream { documents, errors };
    }
    for error in &stream.errors {
        problems.push(yaml_problem(&source.name, error));
    }
    let first = manifests.len();
    *documents += stream.documents.len();
    for document in stream.documents {
        collect_objects(&source.name, document, manifests, problems);
    }
    let lines: Vec<&str> = source.text.lines().collect();
    for m in &mut manifests[first..] {
        m.origin = super::origin::of(&lines, m.line, &m.object);
    }
}

/// A text that starts with `{` is JSON to kubectl (its decoder sniffs the first byte), so
/// it must be valid JSON up to any `---` that makes it a YAML stream, though it is then read
/// as YAML for its lines. Checked without building values.
fn check_json(source: &Source) -> Result<(), Problem> {
    if !source.text.trim_start().starts_with('{') {
        return Ok(());
    }
    let mut stream = serde_json::Deserializer::from_str(&source.text).into_iter::<IgnoredAny>();
    while let Some(document) = stream.next() {
        if let Err(e) = document {
            // JSON documents between YAML `---` separators are a YAML stream.
            let rest = &source.text[stream.byte_offset()..];
            if rest.trim_start().starts_with("---") {
                return Ok(());
            }
            let message = e.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(text, _)| text);
            let problem = Problem::new(
                &source.name,
                Some(e.line()),
                format!("invalid JSON: {message}"),
            );
            return Err(if message == "recursion limit exceeded" {
                let error = YamlError::TooDeep { line: e.line() };
                yaml_problem(&source.name, &error)
            } else {
                problem.with_hint("files that start with `{` are read as JSON, as kubectl does")
            });
        }
    }
    Ok(())
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
        YamlError::UnsupportedKey { .. } => {
            problem.with_hint("Kubernetes objects have string keys; quote the key")
        }
        YamlError::UnknownAlias { .. } => {
            problem.with_hint("define the anchor (`&name`) above its first alias (`*name`)")
        }
        YamlError::BadMerge { .. } => {
            problem.with_hint("write `<<: *anchor`, where the anchor names a mapping")
        }
        YamlError::NotJson { .. } => {
            problem.with_hint("JSON has no NaN or infinity; quote the value if it is text")
        }
        YamlError::TooManyDocuments { .. } => problem.with_hint("deploy fewer manifests per run"),
        YamlError::TooDeep { .. } => problem
            .with_hint("real manifests nest far less; check for generated or recursive content"),
        YamlError::TooManyAliases { .. } | YamlError::AliasesTooLarge { .. } => problem.with_hint(
            "each alias copies its anchor's content; write the content out or use fewer aliases",
        ),
        YamlError::BadTag { .. } => problem,
    }
}
