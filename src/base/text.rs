//! Substring search for the few places that look for a string in a string (short texts: markers
//! in S3's XML, a secret in an error message, `://` in an endpoint). Written here because std's
//! `str::find(&str)` brings its Two-Way searcher into the wasm (about 3 KB) for texts of a few
//! hundred bytes, where a plain scan is as fast.
//!
//! Strings are cut here with the checked forms (`get`, `split_at_checked`), never `s[a..b]` or
//! `split_at`: their panic path formats the string it cuts, which brings `char`'s `Debug` and
//! the Unicode printability tables into the wasm (about 5 KB) for a cut that cannot fail.

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
    around(haystack, find(haystack, needle)?, needle.len())
}

/// `haystack` around the last `needle`: (before, after).
pub(crate) fn rsplit_once<'a>(haystack: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    around(haystack, rfind(haystack, needle)?, needle.len())
}

/// What comes before byte `at` and after the `len` bytes from there (a match of a whole UTF-8
/// string starts and ends on character boundaries, so this is never `None` for one).
fn around(text: &str, at: usize, len: usize) -> Option<(&str, &str)> {
    let (before, from) = text.split_at_checked(at)?;
    Some((before, from.get(len..)?))
}

/// `text` split at byte `at`, a character boundary the caller found in it (else all of it before).
pub(crate) fn split_at(text: &str, at: usize) -> (&str, &str) {
    text.split_at_checked(at).unwrap_or((text, ""))
}

/// `text` on one line: its words (split at ASCII whitespace) joined by single spaces.
pub(crate) fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for word in text.split_ascii_whitespace() {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_ascii_whitespace() {
        assert_eq!(
            one_line("  <html>\n\t<body>Bad   Gateway</body>\r\n</html> "),
            "<html> <body>Bad Gateway</body> </html>"
        );
        assert_eq!(one_line(""), "");
        assert_eq!(one_line(" \n "), "");
    }

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
