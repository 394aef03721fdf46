//! Hash tables that give back their room as they empty: the tables kept per resource (the
//! judging loop's indexes, the CI log's states) fill with thousands of entries early in a
//! deploy and empty one verdict at a time, while the snapshot grows to its largest at the
//! end. Kept at their largest, their slots (a megabyte at 5,000 resources) are held then too.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// Shrinks `map` to its size once it fills less than a quarter of its room: a table that
/// empties one by one is reallocated a handful of times, each at a quarter of the last.
pub(crate) fn shrink_as_emptied<K: Hash + Eq, V, S: BuildHasher>(map: &mut HashMap<K, V, S>) {
    if map.len() * 4 < map.capacity() {
        map.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_shrinks_only_below_a_quarter_of_its_room() {
        let mut map: HashMap<u32, u32> = (0..1_000).map(|i| (i, i)).collect();
        let full = map.capacity();
        let mut shrunk = 0;
        for i in 0..1_000 {
            let before = map.capacity();
            map.remove(&i);
            shrink_as_emptied(&mut map);
            // A removal may cost a slot (a tombstone); a reallocation gives back most.
            if map.capacity() < before / 2 {
                shrunk += 1;
                assert!(
                    map.len() * 4 < before,
                    "shrunk at {} of {before}",
                    map.len()
                );
            }
            assert!(map.capacity() >= map.len());
        }
        assert!(
            map.capacity() < full / 64,
            "{} slots left empty",
            map.capacity()
        );
        // Each shrink is to a quarter or less: a handful for a thousand removals.
        assert!((1..=6).contains(&shrunk), "{shrunk} reallocations");
    }
}
