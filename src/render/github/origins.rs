//! Manifests read from stdin (`helm template ... | deploy-action deploy -f -`) have no path
//! in the repository, so annotations cannot point at `<stdin>`. The documents usually
//! say where they came from (helm's `# Source:`, kustomize's origin annotation); this finds
//! that file in the checkout, once per run, and points the outcome at it. When no file, or
//! more than one, matches, the outcome keeps no repository place: the problem then goes to
//! the summary and to a workflow command without a file, never to a path that does not
//! exist. The only module of `github` that reads the file system.

use super::context::ActionsContext;
use crate::vocab::outcome::{RunOutcome, SourceSpan};
use std::path::Path;

/// Files looked at, at most: a checkout with more is searched no further.
const MAX_FILES: usize = 50_000;

/// `run` with each rendered document that has no repository place pointed at the file
/// it came from, when exactly one file of the workspace matches its origin.
pub fn locate(run: &RunOutcome, ctx: &ActionsContext) -> RunOutcome {
    let mut run = run.clone();
    let Some(root) = ctx.workspace.as_deref() else {
        return run;
    };
    let mut files: Option<Vec<String>> = None;
    for outcome in &mut run.outcomes {
        let unplaced = outcome
            .source
            .as_ref()
            .is_none_or(|s| ctx.repo_path(&s.file).is_none());
        let Some(origin) = outcome.origin.as_deref().filter(|_| unplaced) else {
            continue;
        };
        let files = files.get_or_insert_with(|| list_files(Path::new(root)));
        if let Some(found) = find(files, origin) {
            outcome.source = Some(SourceSpan {
                file: format!("{root}/{found}"),
                line: 1,
            });
            outcome.annotation_source = None;
        }
    }
    run
}

/// The one file whose path is `origin` or ends with `/origin`.
fn find<'a>(files: &'a [String], origin: &str) -> Option<&'a str> {
    let origin = origin.trim_start_matches("./");
    let suffix = format!("/{origin}");
    let mut matches = files
        .iter()
        .filter(|f| *f == origin || f.ends_with(&suffix));
    let first = matches.next()?;
    matches.next().is_none().then_some(first.as_str())
}

/// Paths relative to `root`, `/`-separated, hidden entries and build output skipped.
fn list_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    if let Ok(rel) = path.strip_prefix(root) {
                        out.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                    if out.len() >= MAX_FILES {
                        return out;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use crate::render::github::testing::ctx;

    #[test]
    fn a_rendered_document_is_pointed_at_the_one_file_it_came_from() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("charts/shop/templates")).unwrap();
        std::fs::create_dir_all(root.join("charts/other/templates")).unwrap();
        std::fs::write(root.join("charts/shop/templates/deployment.yaml"), "").unwrap();
        std::fs::write(root.join("charts/shop/templates/service.yaml"), "").unwrap();
        std::fs::write(root.join("charts/other/templates/service.yaml"), "").unwrap();
        let mut ctx = ctx();
        ctx.workspace = Some(root.display().to_string());

        let mut web = fixtures::missing_image();
        web.source = Some(SourceSpan {
            file: "<stdin>".into(),
            line: 40,
        });
        web.annotation_source = Some(SourceSpan {
            file: "<stdin>".into(),
            line: 57,
        });
        web.origin = Some("shop/templates/deployment.yaml".into());
        let mut svc = web.clone();
        svc.origin = Some("templates/service.yaml".into()); // two charts have one
        let mut gone = web.clone();
        gone.origin = Some("shop/templates/removed.yaml".into());
        let run = RunOutcome::new(false, 1.0, vec![web, svc, gone]);

        let located = locate(&run, &ctx);
        let places: Vec<_> = located
            .outcomes
            .iter()
            .map(|o| crate::render::github::check_run::place(o, &ctx))
            .collect();
        assert_eq!(
            places,
            [
                Some(("charts/shop/templates/deployment.yaml".to_owned(), 1)),
                None,
                None
            ]
        );
        // Without a place there is no annotation, and no path that does not exist.
        let annotations = crate::render::github::annotations(&located, &ctx);
        assert_eq!(annotations.len(), 1);
        assert_eq!(annotations[0].path, "charts/shop/templates/deployment.yaml");
        let commands = crate::render::github::workflow_commands(&located, &ctx);
        assert!(
            commands.iter().all(|c| !c.contains("<stdin>")),
            "{commands:?}"
        );
        assert_eq!(commands.iter().filter(|c| c.contains("file=")).count(), 1);
    }
}
