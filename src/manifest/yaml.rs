//! Turns a YAML (or JSON) stream into `serde_json::Value` documents plus a map from JSON
//! pointer to source line, because every later message has to say where in the file it is.
//!
//! Mapping entries are recorded at their key's line (a block scalar's text starts a line
//! later, and `key:` is what a reader looks for); sequence items and document roots at the
//! line where the node starts. Aliased content keeps the lines of its anchor.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use thiserror::Error;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::scalar::{self, ScalarError};

/// Source lines of a document's nodes, keyed by JSON pointer (`""` is the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PointerLines(BTreeMap<String, usize>);

impl PointerLines {
    pub fn get(&self, pointer: &str) -> Option<usize> {
        self.0.get(pointer).copied()
    }

    /// Lines for a document known only by where it starts.
    pub(crate) fn root(line: usize) -> PointerLines {
        PointerLines(BTreeMap::from([(String::new(), line)]))
    }

    /// The lines below `prefix`, re-rooted so `prefix` becomes `""`.
    pub fn subtree(&self, prefix: &str) -> PointerLines {
        let lines = self
            .0
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter_map(|(k, line)| {
                let rest = &k[prefix.len()..];
                (rest.is_empty() || rest.starts_with('/')).then(|| (rest.to_string(), *line))
            })
            .collect();
        PointerLines(lines)
    }
}

/// One YAML document of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// 0-based position in the stream, counting empty documents too.
    pub index: usize,
    /// 1-based line of the document's first content (not its `---`).
    pub line: usize,
    /// `Value::Null` for an empty document.
    pub value: Value,
    pub lines: PointerLines,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum YamlError {
    #[error("invalid YAML: {message}")]
    Syntax { line: usize, message: String },
    #[error("duplicate key {key:?} (first set at line {first})")]
    DuplicateKey {
        line: usize,
        key: String,
        first: usize,
    },
    #[error("unsupported mapping key: keys must be strings, numbers or booleans")]
    UnsupportedKey { line: usize },
    #[error("alias refers to an anchor outside this document")]
    UnknownAlias { line: usize },
    #[error("merge key `<<` needs a mapping or a list of mappings")]
    BadMerge { line: usize },
    #[error("{text:?} cannot be represented in JSON")]
    NotJson { line: usize, text: String },
    #[error("{text:?} is not a valid {expected}")]
    BadTag {
        line: usize,
        text: String,
        expected: &'static str,
    },
}

impl YamlError {
    pub fn line(&self) -> usize {
        match self {
            YamlError::Syntax { line, .. }
            | YamlError::DuplicateKey { line, .. }
            | YamlError::UnsupportedKey { line }
            | YamlError::UnknownAlias { line }
            | YamlError::BadMerge { line }
            | YamlError::NotJson { line, .. }
            | YamlError::BadTag { line, .. } => *line,
        }
    }
}

/// Everything a stream yielded: the documents that converted cleanly and the errors of
/// the others. A syntax error ends the stream; documents before it are still returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stream {
    pub documents: Vec<Document>,
    pub errors: Vec<YamlError>,
}

pub fn parse_stream(source: &str) -> Stream {
    let mut walker = Walker {
        parser: Parser::new_from_str(source),
        anchors: HashMap::new(),
        lines: Vec::new(),
        errors: Vec::new(),
    };
    let mut documents = Vec::new();
    if let Err(e) = walker.documents(&mut documents) {
        walker.errors.push(YamlError::Syntax {
            line: e.marker().line(),
            message: e.info().to_string(),
        });
    }
    Stream {
        documents,
        errors: walker.errors,
    }
}

/// Lines as collected while walking: (pointer, line), later entries win.
type Lines = Vec<(String, usize)>;

/// A mapping merged in with `<<`, with its lines relative to itself.
type MergeSource = (Map<String, Value>, Lines);

/// A node stored under an anchor, with its lines relative to the node.
struct Anchored {
    value: Value,
    lines: Lines,
}

struct Walker<'a> {
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Anchored>,
    lines: Lines,
    errors: Vec<YamlError>,
}

impl Walker<'_> {
    fn next(&mut self) -> Result<(Event, Marker), ScanError> {
        self.parser.next_token()
    }

    fn documents(&mut self, out: &mut Vec<Document>) -> Result<(), ScanError> {
        let mut index = 0;
        loop {
            match self.next()?.0 {
                Event::StreamEnd => return Ok(()),
                Event::DocumentStart => {
                    let (event, mark) = self.next()?;
                    let errors_before = self.errors.len();
                    let value = self.node(event, mark, "", mark.line())?;
                    // Anchors are per document in YAML.
                    self.anchors.clear();
                    let lines = std::mem::take(&mut self.lines);
                    if self.errors.len() == errors_before {
                        out.push(Document {
                            index,
                            line: mark.line(),
                            value,
                            lines: PointerLines(lines.into_iter().collect()),
                        });
                    }
                    index += 1;
                }
                _ => {}
            }
        }
    }

    /// Converts the node that starts with `event`, recording `line` for `path`.
    fn node(
        &mut self,
        event: Event,
        mark: Marker,
        path: &str,
        line: usize,
    ) -> Result<Value, ScanError> {
        let first_line = self.lines.len();
        self.lines.push((path.to_string(), line));
        let (value, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = match scalar::resolve(&text, style, tag.as_ref()) {
                    Ok(v) => v,
                    Err(e) => {
                        let line = mark.line();
                        self.errors.push(match e {
                            ScalarError::NotJson => YamlError::NotJson { line, text },
                            ScalarError::BadTag(expected) => YamlError::BadTag {
                                line,
                                text,
                                expected,
                            },
                        });
                        Value::Null
                    }
                };
                (value, anchor)
            }
            Event::SequenceStart(anchor, _) => (self.sequence(path)?, anchor),
            Event::MappingStart(anchor, _) => (self.mapping(path)?, anchor),
            Event::Alias(id) => return Ok(self.alias(id, mark, path)),
            // The parser only starts nodes with the events above.
            _ => (Value::Null, 0),
        };
        if anchor > 0 {
            let lines = self.lines[first_line + 1..]
                .iter()
                .map(|(p, l)| (p[path.len()..].to_string(), *l))
                .collect();
            let value = value.clone();
            self.anchors.insert(anchor, Anchored { value, lines });
        }
        Ok(value)
    }

    fn alias(&mut self, id: usize, mark: Marker, path: &str) -> Value {
        match self.anchors.get(&id) {
            Some(anchored) => {
                let lines = anchored
                    .lines
                    .iter()
                    .map(|(p, l)| (format!("{path}{p}"), *l));
                self.lines.extend(lines);
                anchored.value.clone()
            }
            None => {
                self.errors
                    .push(YamlError::UnknownAlias { line: mark.line() });
                Value::Null
            }
        }
    }

    fn sequence(&mut self, path: &str) -> Result<Value, ScanError> {
        let mut items = Vec::new();
        loop {
            let (event, mark) = self.next()?;
            if event == Event::SequenceEnd {
                return Ok(Value::Array(items));
            }
            let item_path = format!("{path}/{}", items.len());
            items.push(self.node(event, mark, &item_path, mark.line())?);
        }
    }

    fn mapping(&mut self, path: &str) -> Result<Value, ScanError> {
        let mut map = Map::new();
        let mut key_lines: HashMap<String, usize> = HashMap::new();
        let mut merges = Vec::new();
        loop {
            let (event, mark) = self.next()?;
            let is_merge =
                matches!(&event, Event::Scalar(t, TScalarStyle::Plain, _, None) if t == "<<");
            let key = match event {
                Event::MappingEnd => break,
                event => self.key(event, mark)?,
            };
            let (value_event, value_mark) = self.next()?;
            if is_merge {
                let start = self.lines.len();
                let value = self.node(value_event, value_mark, path, mark.line())?;
                let lines: Vec<_> = self.lines.drain(start..).collect();
                self.collect_merge(value, lines, path, mark.line(), &mut merges);
                continue;
            }
            let Some(key) = key else {
                // Still consume the value so the stream stays in step.
                self.node(value_event, value_mark, path, mark.line())?;
                continue;
            };
            let child = format!("{path}/{}", escape_pointer(&key));
            let value = self.node(value_event, value_mark, &child, mark.line())?;
            if let Some(first) = key_lines.get(&key) {
                self.errors.push(YamlError::DuplicateKey {
                    line: mark.line(),
                    key,
                    first: *first,
                });
                continue;
            }
            key_lines.insert(key.clone(), mark.line());
            map.insert(key, value);
        }
        // Explicit keys win over merged ones, and earlier merge sources over later ones.
        for (source, lines) in merges {
            for (key, value) in source {
                if map.contains_key(&key) {
                    continue;
                }
                let prefix = format!("/{}", escape_pointer(&key));
                self.lines.extend(
                    lines
                        .iter()
                        .filter(|(p, _)| p == &prefix || p.starts_with(&format!("{prefix}/")))
                        .map(|(p, l)| (format!("{path}{p}"), *l)),
                );
                map.insert(key, value);
            }
        }
        Ok(Value::Object(map))
    }

    /// Splits a `<<` value into mappings whose lines are relative to themselves.
    fn collect_merge(
        &mut self,
        value: Value,
        lines: Lines,
        path: &str,
        line: usize,
        merges: &mut Vec<MergeSource>,
    ) {
        let relative = |prefix: &str| -> Lines {
            lines
                .iter()
                .filter_map(|(p, l)| Some((p.strip_prefix(prefix)?.to_string(), *l)))
                .filter(|(p, _)| p.starts_with('/'))
                .collect()
        };
        match value {
            Value::Object(map) => merges.push((map, relative(path))),
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    match item {
                        Value::Object(map) => merges.push((map, relative(&format!("{path}/{i}")))),
                        _ => self.errors.push(YamlError::BadMerge { line }),
                    }
                }
            }
            _ => self.errors.push(YamlError::BadMerge { line }),
        }
    }

    /// The JSON key for a mapping key node; `None` (with an error recorded) when the key
    /// has no JSON form.
    fn key(&mut self, event: Event, mark: Marker) -> Result<Option<String>, ScanError> {
        let start = self.lines.len();
        let value = self.node(event, mark, "", mark.line())?;
        self.lines.truncate(start);
        let key = scalar::key_text(&value);
        if key.is_none() {
            self.errors
                .push(YamlError::UnsupportedKey { line: mark.line() });
        }
        Ok(key)
    }
}

/// Escapes one JSON pointer segment (RFC 6901): `~` -> `~0`, `/` -> `~1`.
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
