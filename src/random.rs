//! Random bits without another dependency, for generated pod names and the token that
//! fences container logs from the runner: the process's randomly keyed hasher over the clock.

/// 64 bits no one outside the process can predict.
pub fn bits() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish()
}
