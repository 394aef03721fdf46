//! The loader's bounds on hostile or accidental input (size, documents, nesting, aliases), so
//! a manifest can make deploy-action refuse, never run out of memory or stack.
//!
//! Kubernetes' own decoders bound the same things (go-yaml refuses "excessive aliasing" and
//! nesting beyond its maximum depth; the API server refuses large requests). The numbers sit
//! far above what real manifests need: a large Helm release renders a few MiB, the deepest
//! CRD schemas nest well under 100 levels.

/// Bytes of all inputs together (files, directory members and stdin).
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// YAML or JSON documents of all inputs together, empty ones included.
pub const MAX_DOCUMENTS: usize = 10_000;

/// Nesting of mappings and sequences within one document; serde_json's own bound, so YAML
/// and JSON manifests meet the same one.
pub const MAX_DEPTH: usize = 128;

/// Aliases (`*name`, merge keys included) used within one document.
pub const MAX_ALIASES: usize = 10_000;

/// Values that aliases may add to one document once expanded, counting every nested value.
pub const MAX_ALIAS_VALUES: usize = 100_000;

/// `n` bytes as a person reads a limit: `64 MiB`, `100.5 MiB`.
pub fn mib(n: usize) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
    let mib = n as f64 / (1024.0 * 1024.0);
    if mib.fract() == 0.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.1} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_mebibytes() {
        assert_eq!(mib(MAX_INPUT_BYTES), "64 MiB");
        assert_eq!(mib(100 * 1024 * 1024 + 512 * 1024), "100.5 MiB");
    }
}
