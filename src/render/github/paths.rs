//! Manifest paths as annotations need them: relative to the repository root, with `/`
//! separators, whatever the user typed (`./k8s/web.yaml`, an absolute path, a Windows
//! path, a path relative to a `working-directory:`).

/// `file` relative to the checkout root `workspace`, when it lies inside it; relative
/// paths are taken relative to `working_dir` (when known) or to the root itself.
/// `None` for stdin (`-`) and for files outside the workspace. Arguments other than
/// `file` are expected with `/` separators.
pub(super) fn repo_relative(
    file: &str,
    workspace: Option<&str>,
    working_dir: Option<&str>,
) -> Option<String> {
    let file = slashes(file.trim());
    if file.is_empty() || file == "-" || file == crate::manifest::STDIN_NAME {
        return None;
    }
    let joined = match (working_dir, is_absolute(&file)) {
        (Some(dir), false) => format!("{dir}/{file}"),
        _ => file,
    };
    if !is_absolute(&joined) {
        return normalise(&joined).filter(|p| !p.is_empty());
    }
    let root = normalise(workspace?)?;
    let path = normalise(&joined)?;
    let rest = strip_root(&path, &root)?;
    Some(rest.to_owned()).filter(|p| !p.is_empty())
}

pub(super) fn slashes(path: &str) -> String {
    path.replace('\\', "/")
}

fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with('/')
        || (bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && &bytes[1..3] == b":/")
}

/// `./k8s//a/../web.yaml` → `k8s/web.yaml`; `None` when `..` climbs above the start.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    Some(if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    })
}

/// `path` below `root`, both normalised; drive letters compare case-insensitively.
fn strip_root<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let head = path.get(..root.len())?;
    let same =
        head == root || (root.as_bytes().get(1) == Some(&b':') && head.eq_ignore_ascii_case(root));
    let rest = &path[root.len()..];
    match (same, rest.strip_prefix('/')) {
        (true, Some(rest)) => Some(rest),
        (true, None) if rest.is_empty() => Some(""),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case_path(workspace: Option<&str>, cwd: Option<&str>, file: &str, expected: Option<&str>) {
        let workspace = workspace.map(slashes);
        let cwd = cwd.map(slashes);
        let found = repo_relative(file, workspace.as_deref(), cwd.as_deref());
        assert_eq!(found.as_deref(), expected, "{file}");
    }

    #[test]
    fn manifest_paths_become_relative_to_the_repository_root() {
        let ws = Some("/home/runner/work/shop/shop");
        case_path(ws, None, "k8s/web.yaml", Some("k8s/web.yaml"));
        case_path(ws, None, "./k8s/./web.yaml", Some("k8s/web.yaml"));
        case_path(
            ws,
            None,
            "k8s\\overlays\\prod.yaml",
            Some("k8s/overlays/prod.yaml"),
        );
        case_path(
            ws,
            None,
            "/home/runner/work/shop/shop/k8s/web.yaml",
            Some("k8s/web.yaml"),
        );
        case_path(ws, None, "k8s/base/../web.yaml", Some("k8s/web.yaml"));
        // `working-directory: k8s` in the workflow: paths are relative to it.
        case_path(
            ws,
            Some("/home/runner/work/shop/shop/k8s"),
            "web.yaml",
            Some("k8s/web.yaml"),
        );
        case_path(
            ws,
            Some("/home/runner/work/shop/shop/k8s"),
            "../ci/a.yaml",
            Some("ci/a.yaml"),
        );
        // Outside the checkout, or stdin: nothing to annotate.
        case_path(ws, None, "/tmp/rendered/web.yaml", None);
        case_path(ws, None, "/home/runner/work/shop/shopping/web.yaml", None);
        case_path(ws, None, "../other/web.yaml", None);
        case_path(ws, None, "-", None);
        case_path(ws, Some("/tmp"), "web.yaml", None);
        case_path(None, None, "/abs/web.yaml", None);
        // Windows runners.
        let win = Some("D:\\a\\shop\\shop");
        case_path(
            win,
            None,
            "D:\\a\\shop\\shop\\k8s\\web.yaml",
            Some("k8s/web.yaml"),
        );
        case_path(
            win,
            None,
            "d:/a/shop/shop/k8s/web.yaml",
            Some("k8s/web.yaml"),
        );
        case_path(
            win,
            Some("D:\\a\\shop\\shop\\k8s"),
            ".\\web.yaml",
            Some("k8s/web.yaml"),
        );
    }
}
