//! URI encoding exactly as SigV4 canonicalises it. The same strings go into the URL that is sent
//! and into the canonical request that is signed, so the server decodes precisely the key we
//! signed — whatever the key contains (spaces, `+`, `%`, `?`, `#`, non-ASCII, astral characters).

/// SigV4's unreserved set: these bytes are never escaped; every other byte is `%XX`, uppercase.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn encode(input: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(input.len());
    for byte in input.bytes() {
        if is_unreserved(byte) || (keep_slash && byte == b'/') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX_UPPER[usize::from(byte >> 4)]));
            out.push(char::from(HEX_UPPER[usize::from(byte & 0x0f)]));
        }
    }
    out
}

/// An object key (or any path) for the URL and the canonical URI: `/` stays a separator, because S3
/// signs the path with its slashes as sent.
pub fn encode_path(path: &str) -> String {
    encode(path, true)
}

/// A query parameter name or value: `/` is escaped too (SigV4 requires it there; a continuation
/// token or prefix often contains one).
pub fn encode_query_component(component: &str) -> String {
    encode(component, false)
}

/// The query string, both as sent and as signed: each name and value encoded, sorted by encoded
/// name then encoded value, `name=value` joined by `&` (a parameter without a value keeps its `=`).
pub fn canonical_query(params: &[(&str, &str)]) -> String {
    // Sorted as they are added: a request has a handful of parameters.
    let mut encoded: Vec<(String, String)> = Vec::with_capacity(params.len());
    for (name, value) in params {
        let pair = (encode_query_component(name), encode_query_component(value));
        let at = encoded.partition_point(|p| *p < pair);
        encoded.insert(at, pair);
    }
    encoded.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join("&")
}

/// The inverse of the encoding: `%XX` back to bytes; anything else (a `%` without two hex
/// digits) kept as it is. Text that is not UTF-8 once decoded stays as given.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |at: usize| bytes.get(at).and_then(|&c| char::from(c).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (c, ..) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreserved_characters_stay() {
        let unreserved = "ABCXYZabcxyz0189-._~";
        assert_eq!(encode_path(unreserved), unreserved);
        assert_eq!(encode_query_component(unreserved), unreserved);
    }

    #[test]
    fn slash_is_kept_in_paths_and_escaped_in_queries() {
        assert_eq!(encode_path("a/b/c"), "a/b/c");
        assert_eq!(encode_query_component("a/b"), "a%2Fb");
    }

    #[test]
    fn tricky_key_characters_are_escaped_uppercase() {
        assert_eq!(encode_path("a b+c%d=e&f?g#h~i"), "a%20b%2Bc%25d%3De%26f%3Fg%23h~i");
        assert_eq!(encode_path("test$file.text"), "test%24file.text");
        assert_eq!(encode_path("*'()!,;:@[]"), "%2A%27%28%29%21%2C%3B%3A%40%5B%5D");
        assert_eq!(encode_path("\"<>\\^`{|}"), "%22%3C%3E%5C%5E%60%7B%7C%7D");
    }

    #[test]
    fn non_ascii_is_escaped_from_utf8_bytes() {
        assert_eq!(encode_path("ü"), "%C3%BC");
        assert_eq!(encode_path("€"), "%E2%82%AC");
        // An astral-plane character: four UTF-8 bytes, never a UTF-16 surrogate pair.
        assert_eq!(encode_path("😀"), "%F0%9F%98%80");
        assert_eq!(encode_path("ünï/😀"), "%C3%BCn%C3%AF/%F0%9F%98%80");
    }

    #[test]
    fn every_byte_decodes_back() {
        let key = "a b+c%d=e&f?g#h~i/ünï/😀/\u{10FFFF}/%2F/+";
        let encoded = encode_path(key);
        assert!(encoded.bytes().all(|b| is_unreserved(b) || b == b'/' || b == b'%'));
        assert_eq!(percent_decode(&encoded), key);
    }

    #[test]
    fn query_is_sorted_by_encoded_name_then_value() {
        assert_eq!(canonical_query(&[]), "");
        assert_eq!(canonical_query(&[("prefix", "J"), ("max-keys", "2")]), "max-keys=2&prefix=J");
        assert_eq!(canonical_query(&[("lifecycle", "")]), "lifecycle=");
        assert_eq!(canonical_query(&[("a", "2"), ("a", "1"), ("B", "x")]), "B=x&a=1&a=2");
        assert_eq!(
            canonical_query(&[("list-type", "2"), ("prefix", "app/a b"), ("continuation-token", "1/+=")]),
            "continuation-token=1%2F%2B%3D&list-type=2&prefix=app%2Fa%20b"
        );
    }
}
