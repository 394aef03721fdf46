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

use super::limits;
use super::scalar::{self, ScalarError};

/// Source lines of a document's nodes, keyed by JSON pointer (`""` is the root). Held for
/// every document through the run, so packed: the pointers, in order, in one string, and
/// where each ends with its line (a map of `String`s cost more than the document itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PointerLines {
    pointers: Box<str>,
    /// (end of the pointer in `pointers`, its line), in pointer order.
    ends: Box<[(u32, u32)]>,
}

impl PointerLines {
    /// From (pointer, line) pairs in any order; a later line for a pointer wins.
    fn from_pairs(pairs: impl IntoIterator<Item = (String, usize)>) -> PointerLines {
        let sorted: BTreeMap<String, usize> = pairs.into_iter().collect();
        PointerLines::from_sorted(sorted.iter().map(|(p, l)| (p.as_str(), *l)))
    }

    /// From (pointer, line) pairs in pointer order, without repeats.
    fn from_sorted<'a>(pairs: impl Iterator<Item = (&'a str, usize)>) -> PointerLines {
        let mut pointers = String::new();
        let mut ends = Vec::new();
        for (pointer, line) in pairs {
            pointers.push_str(pointer);
            // Inputs are capped far below 4 GiB and 4 billion lines (`limits`).
            let end = u32::try_from(pointers.len()).unwrap_or(u32::MAX);
            ends.push((end, u32::try_from(line).unwrap_or(u32::MAX)));
        }
        PointerLines {
            pointers: pointers.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    /// Every (pointer, line), in pointer order.
    fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        (0..self.ends.len()).map(|i| (self.pointer(i), self.ends[i].1 as usize))
    }

    fn pointer(&self, i: usize) -> &str {
        let start = if i == 0 {
            0
        } else {
            self.ends[i - 1].0 as usize
        };
        &self.pointers[start..self.ends[i].0 as usize]
    }

    pub fn get(&self, pointer: &str) -> Option<usize> {
        let (mut low, mut high) = (0, self.ends.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.pointer(mid).cmp(pointer) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(self.ends[mid].1 as usize),
            }
        }
        None
    }

    /// Lines for a document known only by where it starts.
    pub(crate) fn root(line: usize) -> PointerLines {
        PointerLines::from_sorted(std::iter::once(("", line)))
    }

    /// The lines below `prefix`, re-rooted so `prefix` becomes `""`.
    pub fn subtree(&self, prefix: &str) -> PointerLines {
        PointerLines::from_sorted(self.iter().filter_map(|(k, line)| {
            let rest = k.strip_prefix(prefix)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((rest, line))
        }))
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
    #[error("alias refers to an anchor not defined before it in this document")]
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
    #[error(
        "too many documents: the inputs hold more than {max}",
        max = limits::MAX_DOCUMENTS
    )]
    TooManyDocuments { line: usize },
    #[error("nesting deeper than {max} levels", max = limits::MAX_DEPTH)]
    TooDeep { line: usize },
    #[error("document contains excessive aliasing (more than {max} aliases)", max = limits::MAX_ALIASES)]
    TooManyAliases { line: usize },
    #[error(
        "document contains excessive aliasing (aliases expand to more than {max} values)",
        max = limits::MAX_ALIAS_VALUES
    )]
    AliasesTooLarge { line: usize },
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
            | YamlError::BadTag { line, .. }
            | YamlError::TooManyDocuments { line }
            | YamlError::TooDeep { line }
            | YamlError::TooManyAliases { line }
            | YamlError::AliasesTooLarge { line } => *line,
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
    parse_stream_capped(source, limits::MAX_DOCUMENTS)
}

/// [`parse_stream`], stopping with [`YamlError::TooManyDocuments`] at the document after
/// the first `max_documents`, so a stream of countless small documents is refused before it
/// is all held in memory.
pub(crate) fn parse_stream_capped(source: &str, max_documents: usize) -> Stream {
    let mut walker = Walker {
        parser: Parser::new_from_str(source),
        anchors: HashMap::new(),
        lines: Vec::new(),
        errors: Vec::new(),
        budget: Budget::default(),
    };
    let mut documents = Vec::new();
    if let Err(e) = walker.documents(&mut documents, max_documents) {
        let line = e.marker().line();
        let error = match e.info() {
            // The scanner's own bound on flow nesting (255 levels).
            "recursion limit exceeded" => YamlError::TooDeep { line },
            "while parsing node, found unknown anchor" => YamlError::UnknownAlias { line },
            info => YamlError::Syntax {
                line,
                message: info.to_string(),
            },
        };
        // Nesting the walker already refused in this document needs no second word.
        let repeated = matches!(error, YamlError::TooDeep { .. }) && walker.budget.exceeded;
        if !repeated {
            walker.errors.push(error);
        }
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
    /// Values in `value`, nested ones included: what one more alias to it adds.
    values: usize,
}

/// What the current document has used of the nesting and alias limits.
#[derive(Default)]
struct Budget {
    depth: usize,
    values: usize,
    aliases: usize,
    alias_values: usize,
    /// A limit was hit: the document is refused, and reported once.
    exceeded: bool,
}

impl Budget {
    /// Records the first limit the document hit; later ones add nothing a reader needs.
    fn exceed(&mut self, errors: &mut Vec<YamlError>, error: YamlError) {
        if !self.exceeded {
            self.exceeded = true;
            errors.push(error);
        }
    }
}

struct Walker<'a> {
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Anchored>,
    lines: Lines,
    errors: Vec<YamlError>,
    budget: Budget,
}

impl Walker<'_> {
    fn next(&mut self) -> Result<(Event, Marker), ScanError> {
        self.parser.next_token()
    }

    fn documents(&mut self, out: &mut Vec<Document>, max: usize) -> Result<(), ScanError> {
        let mut index = 0;
        loop {
            match self.next()?.0 {
                Event::StreamEnd => return Ok(()),
                Event::DocumentStart => {
                    let (event, mark) = self.next()?;
                    if index == max {
                        let line = mark.line();
                        self.errors.push(YamlError::TooManyDocuments { line });
                        return Ok(());
                    }
                    let errors_before = self.errors.len();
                    let value = self.node(event, mark, "", mark.line())?;
                    // Anchors and budgets are per document in YAML.
                    self.anchors.clear();
                    self.budget = Budget::default();
                    let lines = std::mem::take(&mut self.lines);
                    if self.errors.len() == errors_before {
                        out.push(Document {
                            index,
                            line: mark.line(),
                            value,
                            lines: PointerLines::from_pairs(lines),
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
        let values_before = self.budget.values;
        self.budget.values += 1;
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
            Event::SequenceStart(anchor, _) => (self.nested(path, mark, Self::sequence)?, anchor),
            Event::MappingStart(anchor, _) => (self.nested(path, mark, Self::mapping)?, anchor),
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
            let values = self.budget.values - values_before;
            self.anchors.insert(
                anchor,
                Anchored {
                    value,
                    lines,
                    values,
                },
            );
        }
        Ok(value)
    }

    /// A mapping or sequence one level down, or `Null` and the rest of it skipped when
    /// that level is beyond [`limits::MAX_DEPTH`] (recursing further could overflow the stack).
    fn nested(
        &mut self,
        path: &str,
        mark: Marker,
        walk: fn(&mut Self, &str) -> Result<Value, ScanError>,
    ) -> Result<Value, ScanError> {
        if self.budget.depth >= limits::MAX_DEPTH {
            let error = YamlError::TooDeep { line: mark.line() };
            self.budget.exceed(&mut self.errors, error);
            self.skip_collection()?;
            return Ok(Value::Null);
        }
        self.budget.depth += 1;
        let value = walk(self, path);
        self.budget.depth -= 1;
        value
    }

    /// Consumes events through the end of the collection just started, without recursion.
    fn skip_collection(&mut self) -> Result<(), ScanError> {
        let mut open = 1_usize;
        while open > 0 {
            match self.next()?.0 {
                Event::SequenceStart(..) | Event::MappingStart(..) => open += 1,
                Event::SequenceEnd | Event::MappingEnd => open -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn alias(&mut self, id: usize, mark: Marker, path: &str) -> Value {
        let line = mark.line();
        let Some(anchored) = self.anchors.get(&id) else {
            self.errors.push(YamlError::UnknownAlias { line });
            return Value::Null;
        };
        let budget = &mut self.budget;
        budget.aliases += 1;
        budget.alias_values = budget.alias_values.saturating_add(anchored.values);
        let error = if budget.aliases > limits::MAX_ALIASES {
            Some(YamlError::TooManyAliases { line })
        } else if budget.alias_values > limits::MAX_ALIAS_VALUES {
            Some(YamlError::AliasesTooLarge { line })
        } else {
            None
        };
        if let Some(error) = error {
            budget.exceed(&mut self.errors, error);
        }
        if budget.exceeded {
            return Value::Null;
        }
        budget.values += anchored.values;
        let lines = anchored
            .lines
            .iter()
            .map(|(p, l)| (format!("{path}{p}"), *l));
        self.lines.extend(lines);
        anchored.value.clone()
    }

    fn sequence(&mut self, path: &str) -> Result<Value, ScanError> {
        let mut items = Vec::new();
        loop {
            let (event, mark) = self.next()?;
            if event == Event::SequenceEnd {
                items.shrink_to_fit();
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
                self.collect_merge(value, &lines, path, mark.line(), &mut merges);
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
        // Documents are held through the run: no map keeps room to grow (one grown by
        // inserts holds up to twice its entries, and most of a manifest's maps hold one
        // or two).
        let mut exact = Map::with_capacity(map.len());
        exact.extend(map);
        Ok(Value::Object(exact))
    }

    /// Splits a `<<` value into mappings whose lines are relative to themselves.
    fn collect_merge(
        &mut self,
        value: Value,
        lines: &[(String, usize)],
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

#[cfg(test)]
mod pointer_lines_tests {
    use super::PointerLines;

    fn lines() -> PointerLines {
        PointerLines::from_pairs(
            [
                ("/spec/containers/1/image", 12),
                ("", 1),
                ("/spec/containers/10", 30),
                ("/spec", 5),
                ("/spec/containers/1", 11),
                ("/spec/containers/1/image", 13),
                ("/metadata/name", 3),
            ]
            .map(|(p, l)| (p.to_owned(), l)),
        )
    }

    #[test]
    fn every_pointer_finds_its_line_and_a_later_line_wins() {
        let lines = lines();
        assert_eq!(lines.get(""), Some(1));
        assert_eq!(lines.get("/metadata/name"), Some(3));
        assert_eq!(lines.get("/spec"), Some(5));
        assert_eq!(lines.get("/spec/containers/1/image"), Some(13));
        assert_eq!(lines.get("/spec/containers/10"), Some(30));
        for absent in ["/spec/containers", "/spec/containers/2", "/z", "/"] {
            assert_eq!(lines.get(absent), None, "{absent}");
        }
        assert_eq!(PointerLines::default().get(""), None);
        assert_eq!(PointerLines::root(7).get(""), Some(7));
    }

    #[test]
    fn a_subtree_is_re_rooted_and_leaves_out_its_namesakes() {
        let sub = lines().subtree("/spec/containers/1");
        assert_eq!(sub.get(""), Some(11));
        assert_eq!(sub.get("/image"), Some(13));
        assert_eq!(
            sub.get("0"),
            None,
            "/spec/containers/10 is not below /spec/containers/1"
        );
        assert_eq!(sub.iter().count(), 2);
    }
}
