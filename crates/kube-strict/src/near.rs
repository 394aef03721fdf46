//! The name someone probably meant: a misspelt kind or field against the names there are.

/// The candidate closest to `word`: the same but for case, or at most two edits away (one
/// in a short name: `Pod` is two from `Job`).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (c, distance(&lower, &c.to_ascii_lowercase())))
        .filter(|(c, d)| *d <= (c.len() / 4).clamp(1, 2))
        .min_by_key(|(_, d)| *d)
        .map(|(c, _)| c)
}

/// Levenshtein distance, with a swap of two neighbours counting as one edit.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_a_drop_and_a_case_are_near_and_a_stranger_is_not() {
        let fields = ["image", "imagePullPolicy", "name", "ports"];
        assert_eq!(nearest("imagePullPolcy", fields), Some("imagePullPolicy"));
        assert_eq!(nearest("imagepullpolicy", fields), Some("imagePullPolicy"));
        assert_eq!(nearest("nmae", fields), Some("name"));
        assert_eq!(nearest("replicas", fields), None);
    }
}
