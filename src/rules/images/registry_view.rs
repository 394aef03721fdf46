//! What the runner's own registry lookup said about an image. The lookup is I/O and lives
//! elsewhere; the rules only read its answers, so a node's "not found" can be weighed
//! against the registry's (replication lag and mirrors, krane issue #819).

use std::collections::BTreeMap;

/// The answer to `HEAD /v2/<name>/manifests/<reference>` from the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryView {
    /// 200: the manifest exists for the runner's credentials.
    Exists,
    /// 404 with MANIFEST_UNKNOWN or NAME_UNKNOWN.
    Missing,
    /// 401/403 even after the token dance: missing and private look alike here.
    Denied,
    /// No answer worth weighing (network error, unexpected status); the text says why.
    Unknown(String),
}

impl RegistryView {
    /// A clause for a still-waiting message, when the view adds something.
    pub fn note(&self) -> Option<String> {
        match self {
            RegistryView::Exists => Some("the registry has the image".to_owned()),
            RegistryView::Missing => Some("the registry has no such image".to_owned()),
            RegistryView::Denied => Some("the registry denied the runner's lookup too".to_owned()),
            RegistryView::Unknown(why) => Some(format!("registry lookup inconclusive: {why}")),
        }
    }
}

/// Registry answers by image reference, as written in the pod spec (the manifest's
/// `image:`), with the runtime's normalised name as a fallback key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistryViews {
    by_image: BTreeMap<String, RegistryView>,
}

impl RegistryViews {
    pub fn new() -> Self {
        RegistryViews::default()
    }

    /// Records the newest answer for `image`, replacing an earlier one.
    pub fn set(&mut self, image: &str, view: RegistryView) {
        self.by_image.insert(image.to_owned(), view);
    }

    pub fn get(&self, image: &str) -> Option<&RegistryView> {
        self.by_image.get(image)
    }

    /// The answer for the first of `images` that has one (spec image, then status image).
    pub fn find<'a>(&self, images: impl IntoIterator<Item = &'a str>) -> Option<&RegistryView> {
        images.into_iter().find_map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_answer_wins_and_the_spec_image_is_asked_first() {
        let mut views = RegistryViews::new();
        views.set(
            "registry.local/shop/web:7",
            RegistryView::Unknown("503".into()),
        );
        views.set("registry.local/shop/web:7", RegistryView::Exists);
        views.set("docker.io/library/nginx:1.27", RegistryView::Missing);
        assert_eq!(
            views.get("registry.local/shop/web:7"),
            Some(&RegistryView::Exists)
        );
        assert_eq!(
            views.find(["nginx:1.27", "docker.io/library/nginx:1.27"]),
            Some(&RegistryView::Missing)
        );
        assert_eq!(views.find(["nginx:1.27"]), None);
    }
}
