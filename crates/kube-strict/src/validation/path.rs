//! Field paths printed the way apimachinery's `field.Path` prints them
//! (`spec.containers[0].image`, `data[key]`, and `[]` for the whole object).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    pub(crate) fn root(name: &str) -> Path {
        if name.is_empty() {
            Path("[]".to_string())
        } else {
            Path(name.to_string())
        }
    }

    pub(crate) fn child(&self, name: &str) -> Path {
        Path(format!("{}.{name}", self.0))
    }

    /// Several children at once: `path.children(&["spec", "restartPolicy"])`.
    pub(crate) fn children(&self, names: &[&str]) -> Path {
        names
            .iter()
            .fold(self.clone(), |path, name| path.child(name))
    }

    pub(crate) fn index(&self, index: usize) -> Path {
        Path(format!("{}[{index}]", self.0))
    }

    pub(crate) fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
