//! Where in the object a finding is: a JSON pointer for its source line, and the dotted
//! path (`spec.ports[0].name`) the API server's messages name it by.

/// A key as one segment of a JSON pointer (RFC 6901).
fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

enum Segment {
    Key(String),
    Index(usize),
}

/// The fields from the object's root down to the one being validated.
#[derive(Default)]
pub(super) struct Path(Vec<Segment>);

impl Path {
    pub(super) fn push_key(&mut self, key: &str) {
        self.0.push(Segment::Key(key.to_owned()));
    }

    pub(super) fn push_index(&mut self, index: usize) {
        self.0.push(Segment::Index(index));
    }

    pub(super) fn pop(&mut self) {
        self.0.pop();
    }

    /// `/spec/ports/0/name`
    pub(super) fn pointer(&self) -> String {
        self.0
            .iter()
            .map(|s| match s {
                Segment::Key(k) => format!("/{}", escape_pointer(k)),
                Segment::Index(i) => format!("/{i}"),
            })
            .collect()
    }

    /// `spec.ports[0].name`; `<root>` for the object itself, as the server says.
    pub(super) fn dotted(&self) -> String {
        let mut out = String::new();
        for s in &self.0 {
            match s {
                Segment::Key(k) if out.is_empty() => out.push_str(k),
                Segment::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        if out.is_empty() {
            out.push_str("<root>");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fields_by_pointer_and_by_dotted_path() {
        let mut p = Path::default();
        assert_eq!(
            (p.pointer(), p.dotted()),
            (String::new(), "<root>".to_owned())
        );
        p.push_key("spec");
        p.push_key("ports");
        p.push_index(0);
        p.push_key("a/b");
        assert_eq!(p.pointer(), "/spec/ports/0/a~1b");
        assert_eq!(p.dotted(), "spec.ports[0].a/b");
        p.pop();
        p.pop();
        assert_eq!(p.dotted(), "spec.ports");
    }
}
