//! A fallback for JSON the YAML parser rejects: concatenated objects (`{..}{..}`, which
//! kubectl accepts) and surrogate-pair escapes (`"\ud83d\ude00"`, from ensure_ascii
//! encoders). Documents read this way only know their starting line.

use serde_json::{Deserializer, Value};

use super::yaml::{Document, PointerLines};

/// The documents of `text` if it is a stream of JSON values, else `None`.
pub(crate) fn parse_json_stream(text: &str) -> Option<Vec<Document>> {
    if !text.trim_start().starts_with(['{', '[']) {
        return None;
    }
    let mut documents = Vec::new();
    let mut stream = Deserializer::from_str(text).into_iter::<Value>();
    let mut end = 0;
    while let Some(value) = stream.next() {
        let value = value.ok()?;
        let start = end + text[end..].len() - text[end..].trim_start().len();
        end = stream.byte_offset();
        let line = text[..start].matches('\n').count() + 1;
        documents.push(Document {
            index: documents.len(),
            line,
            value,
            lines: PointerLines::root(line),
        });
    }
    Some(documents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn concatenated_objects_with_surrogate_escapes() {
        let text = "{\"kind\": \"ConfigMap\", \"data\": {\"smile\": \"\\ud83d\\ude00\"}}\n\n{\"kind\": \"Secret\"}\n";
        let docs = parse_json_stream(text).unwrap();
        let found: Vec<(usize, usize, Value)> = docs
            .into_iter()
            .map(|d| (d.index, d.line, d.value))
            .collect();
        assert_eq!(
            found,
            vec![
                (0, 1, json!({"kind": "ConfigMap", "data": {"smile": "😀"}})),
                (1, 3, json!({"kind": "Secret"})),
            ]
        );
        assert_eq!(parse_json_stream("{\"kind\": \"A\"} trailing"), None);
        assert_eq!(parse_json_stream("kind: A\n"), None);
    }
}
