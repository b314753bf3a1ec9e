//! The one sort fencepost makes (listed keys, and object keys should a JSON map ever iterate out of
//! order): a heapsort, O(n log n) in every case and in place. Written here because std's
//! `sort_unstable` (pattern-defeating quicksort with its small-sort networks) is about 3.5 KB of
//! wasm for lists that arrive sorted already (stores list in order), which `is_sorted` sees first.

/// Sort `items` ascending.
pub(crate) fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, |a, b| a < b);
}

/// Sort `items` ascending by `less` (a strict order: is `a` before `b`?).
pub(crate) fn sort_by<T>(items: &mut [T], less: impl Fn(&T, &T) -> bool) {
    if items.is_sorted_by(|a, b| !less(b, a)) {
        return;
    }
    let len = items.len();
    for root in (0..len / 2).rev() {
        sift_down(items, root, len, &less);
    }
    for end in (1..len).rev() {
        items.swap(0, end);
        sift_down(items, 0, end, &less);
    }
}

/// Restore the max-heap property below `root` within `items[..end]`.
fn sift_down<T>(items: &mut [T], mut root: usize, end: usize, less: &impl Fn(&T, &T) -> bool) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(&items[child], &items[child + 1]) {
            child += 1;
        }
        if !less(&items[root], &items[child]) {
            return;
        }
        items.swap(root, child);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std_on_every_shape() {
        // A small linear congruential generator: reproducible inputs without a dependency.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        for len in (0..40).chain([100, 257, 1000, 4096]) {
            for modulus in [2, 10, u64::MAX] {
                let random: Vec<u64> = (0..len).map(|_| next() % modulus).collect();
                let mut ascending = random.clone();
                ascending.sort();
                let descending: Vec<u64> = ascending.iter().rev().copied().collect();
                for input in [random, ascending, descending] {
                    let mut ours = input.clone();
                    sort(&mut ours);
                    let mut theirs = input;
                    theirs.sort_unstable();
                    assert_eq!(ours, theirs);
                }
            }
        }
    }

    #[test]
    fn sorts_strings_by_bytes() {
        let mut keys: Vec<String> = ["b", "a/ü", "a/z", "", "a", "B"].map(str::to_owned).to_vec();
        sort(&mut keys);
        assert_eq!(keys, ["", "B", "a", "a/z", "a/ü", "b"]);
    }
}
