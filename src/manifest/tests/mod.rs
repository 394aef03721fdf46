//! Behaviour of the manifest loader end to end, on manifests as users write them and as
//! kustomize, helm and kubectl produce them.

mod cluster;
mod errors;
pub(crate) mod fixtures;
mod loading;
mod yaml;

use super::{LoadError, Manifest, Problem, load};

fn load_stdin(text: &str) -> Vec<Manifest> {
    match load(&["-".to_string()], Some(text)) {
        Ok(manifests) => manifests,
        Err(e) => panic!("expected stdin to load, got:\n{e}"),
    }
}

/// What a check of one manifest at a time finds in `yaml` (loaded as `app.yaml`), printed.
pub(crate) fn found_by(check: fn(&Manifest, &mut Vec<Problem>), yaml: &str) -> Vec<String> {
    let mut out = Vec::new();
    for m in super::load_str("app.yaml", yaml).unwrap() {
        check(&m, &mut out);
    }
    out.iter().map(ToString::to_string).collect()
}

fn problems(result: Result<Vec<Manifest>, LoadError>) -> Vec<Problem> {
    match result {
        Ok(manifests) => panic!("expected problems, loaded {} manifests", manifests.len()),
        Err(e) => e.problems().to_vec(),
    }
}
