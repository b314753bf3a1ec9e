//! Substring search for the few places that look for a string in a string (short texts: markers
//! in S3's XML, a secret in an error message, `://` in an endpoint). Written here because std's
//! `str::find(&str)` brings its Two-Way searcher into the wasm (about 3 KB) for texts of a few
//! hundred bytes, where a plain scan is as fast.

/// The byte index of the first occurrence of `needle` in `haystack`.
pub(crate) fn find(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.as_bytes().windows(needle.len()).position(|w| w == needle.as_bytes())
}

/// The byte index of the last occurrence of `needle` in `haystack`.
pub(crate) fn rfind(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(haystack.len());
    }
    haystack.as_bytes().windows(needle.len()).rposition(|w| w == needle.as_bytes())
}

/// `haystack` around the first `needle`: (before, after).
pub(crate) fn split_once<'a>(haystack: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    // A match of a whole UTF-8 string starts and ends on character boundaries.
    find(haystack, needle).map(|at| (&haystack[..at], &haystack[at + needle.len()..]))
}

/// `haystack` around the last `needle`: (before, after).
pub(crate) fn rsplit_once<'a>(haystack: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    rfind(haystack, needle).map(|at| (&haystack[..at], &haystack[at + needle.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std() {
        for (hay, needle) in
            [("a://b://c", "://"), ("", "x"), ("abc", ""), ("ééx", "éx"), ("aaa", "aa"), ("xyz", "xyzw")]
        {
            assert_eq!(find(hay, needle), hay.find(needle), "{hay} {needle}");
            assert_eq!(rfind(hay, needle), hay.rfind(needle), "{hay} {needle}");
            assert_eq!(split_once(hay, needle), hay.split_once(needle), "{hay} {needle}");
            assert_eq!(rsplit_once(hay, needle), hay.rsplit_once(needle), "{hay} {needle}");
        }
    }
}
