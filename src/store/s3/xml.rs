//! S3's XML: ListObjectsV2 results and error bodies, read with the stores' XML reader.

use crate::base::error::quoted;
use crate::store::http::xml::{malformed, parse_document};
use crate::store::{Listed, StoreError, normalize_etag};
use crate::time::Timestamp;

/// One page of a ListObjectsV2 response. Keys are full bucket keys, in the server's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListBucketResult {
    pub entries: Vec<Listed>,
    pub is_truncated: bool,
    pub next_continuation_token: Option<String>,
}

/// The `<Code>` and `<Message>` of an S3 `<Error>` body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorBody {
    pub code: Option<String>,
    pub message: Option<String>,
}

/// Parse a `<ListBucketResult>` (the ListObjectsV2 response).
pub fn parse_list_objects_v2(body: &[u8]) -> Result<ListBucketResult, StoreError> {
    let root = parse_document(body)?;
    if root.name != "ListBucketResult" {
        return Err(malformed(format!("expected <ListBucketResult>, got <{}>", root.name)));
    }
    let mut entries = Vec::new();
    for contents in root.children_named("Contents") {
        let Some(key) = contents.child_text("Key") else {
            return Err(malformed("a <Contents> entry has no <Key>"));
        };
        // The rest is informational (operators' listings): read when well-formed, else left out.
        entries.push(Listed {
            key: key.to_owned(),
            etag: contents.child_text("ETag").map(normalize_etag),
            size: contents.child_text("Size").and_then(|s| crate::base::number::parse_u64(s.trim())),
            last_modified: contents.child_text("LastModified").and_then(|t| Timestamp::parse_rfc3339(t.trim())),
        });
    }
    let is_truncated = match root.child_text("IsTruncated").map(str::trim) {
        None => false,
        Some(flag) if flag.eq_ignore_ascii_case("true") => true,
        Some(flag) if flag.eq_ignore_ascii_case("false") => false,
        Some(other) => return Err(malformed(format!("<IsTruncated> is {}", quoted(other)))),
    };
    let next_continuation_token = root.child_text("NextContinuationToken").filter(|t| !t.is_empty()).map(str::to_owned);
    Ok(ListBucketResult { entries, is_truncated, next_continuation_token })
}

/// Parse an S3 `<Error>` body. `None` when the body is not one (empty, HTML from a proxy, …):
/// the caller then classifies by status alone.
pub fn parse_error_body(body: &[u8]) -> Option<ErrorBody> {
    let root = parse_document(body).ok()?;
    if root.name != "Error" {
        return None;
    }
    let text = |name: &str| root.child_text(name).map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned);
    Some(ErrorBody { code: text("Code"), message: text("Message") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::FailureKind;
    use crate::store::http::xml::decode_entities;

    fn keys(page: &ListBucketResult) -> Vec<&str> {
        page.entries.iter().map(|e| e.key.as_str()).collect()
    }

    const LIST_PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name>
  <Prefix>app/</Prefix>
  <KeyCount>3</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents>
    <Key>app/a b+c%d=e&amp;f?g#h~i</Key>
    <LastModified>2026-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>
    <Size>0</Size>
    <Owner><ID>x</ID><DisplayName>y</DisplayName></Owner>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents><Key>app/&#252;n&#xEF;/&#x1F600;</Key></Contents>
  <Contents><Key><![CDATA[app/<raw> & ok]]></Key></Contents>
  <CommonPrefixes><Prefix>app/dir/</Prefix></CommonPrefixes>
</ListBucketResult>"#;

    #[test]
    fn parses_a_list_page() {
        let page = parse_list_objects_v2(LIST_PAGE.as_bytes()).unwrap();
        assert_eq!(keys(&page), ["app/a b+c%d=e&f?g#h~i", "app/ünï/😀", "app/<raw> & ok"]);
        assert!(page.is_truncated);
        assert_eq!(page.next_continuation_token.as_deref(), Some("1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="));
    }

    #[test]
    fn parses_a_last_and_an_empty_page() {
        let last =
            "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>k</Key></Contents></ListBucketResult>";
        assert_eq!(
            parse_list_objects_v2(last.as_bytes()).unwrap(),
            ListBucketResult {
                entries: vec![Listed { key: "k".into(), ..Listed::default() }],
                is_truncated: false,
                next_continuation_token: None
            }
        );
        let empty = "<?xml version=\"1.0\"?>\n<ListBucketResult xmlns=\"x\"><Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>\n";
        assert_eq!(parse_list_objects_v2(empty.as_bytes()).unwrap(), ListBucketResult::default());
        let self_closing = "<ListBucketResult><Prefix/><IsTruncated>false</IsTruncated></ListBucketResult>";
        assert_eq!(parse_list_objects_v2(self_closing.as_bytes()).unwrap(), ListBucketResult::default());
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let body =
            "\u{feff}<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>";
        assert_eq!(parse_list_objects_v2(body.as_bytes()).unwrap(), ListBucketResult::default());
    }

    #[test]
    fn key_whitespace_is_preserved() {
        let body = "<ListBucketResult><Contents><Key> padded key </Key></Contents></ListBucketResult>";
        assert_eq!(keys(&parse_list_objects_v2(body.as_bytes()).unwrap()), [" padded key "]);
    }

    #[test]
    fn parses_error_bodies() {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match &lt;x&gt;</Message><SignatureProvided>abc</SignatureProvided><RequestId>1</RequestId></Error>"#;
        assert_eq!(
            parse_error_body(body.as_bytes()),
            Some(ErrorBody {
                code: Some("SignatureDoesNotMatch".into()),
                message: Some("The request signature we calculated does not match <x>".into())
            })
        );
        assert_eq!(
            parse_error_body(b"<Error><Code>NoSuchKey</Code></Error>").unwrap().code.as_deref(),
            Some("NoSuchKey")
        );
        assert_eq!(parse_error_body(b"<Error></Error>"), Some(ErrorBody::default()));
    }

    #[test]
    fn non_error_bodies_are_none() {
        for body in [
            &b""[..],
            b"<html><body>502 Bad Gateway</body></html>",
            b"Service Unavailable",
            b"<Error><Code>X</Code>",
            b"\xff\xfe",
        ] {
            assert_eq!(parse_error_body(body), None, "{body:?}");
        }
    }

    #[test]
    fn entities_decode() {
        assert_eq!(decode_entities("&amp;&lt;&gt;&quot;&apos;").unwrap(), "&<>\"'");
        assert_eq!(decode_entities("&#65;&#x42;&#X43;&#x1F600;").unwrap(), "ABC😀");
        assert_eq!(decode_entities("plain").unwrap(), "plain");
        for bad in [
            "&nbsp;",
            "&#xD800;",
            "&#x110000;",
            "&#0;",
            "&#;",
            "&#x;",
            "&#+5;",
            "&amp",
            "& b",
            "&#99999999999999999999;",
        ] {
            let err = decode_entities(bad).unwrap_err();
            assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("MalformedResponse")), "{bad}");
        }
    }

    #[test]
    fn truncated_input_is_an_error_never_a_panic() {
        let full = LIST_PAGE.as_bytes();
        for end in 0..full.len() {
            let result = parse_list_objects_v2(&full[..end]);
            assert!(result.is_err(), "prefix of {end} bytes parsed");
            let _ = parse_error_body(&full[..end]);
        }
    }

    #[test]
    fn garbage_is_malformed() {
        let cases: &[&[u8]] = &[
            b"",
            b"   ",
            b"not xml",
            b"<",
            b">",
            b"</ListBucketResult>",
            b"<ListBucketResult>",
            b"<ListBucketResult><Contents></ListBucketResult>",
            b"<ListBucketResult></ListBucketResult><ListBucketResult></ListBucketResult>",
            b"<ListBucketResult></ListBucketResult>trailing",
            b"<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
            b"<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>",
            b"<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
            b"<ListBucketResult attr=\"unterminated></ListBucketResult>",
            b"<ListBucketResult><!-- never closed </ListBucketResult>",
            b"<ListBucketResult><![CDATA[ never closed </ListBucketResult>",
            b"<Error><Code>AccessDenied</Code></Error>",
            b"<ListBucketResult><a<b>></ListBucketResult>",
            b"<ListBucketResult>\xff</ListBucketResult>",
            b"< ListBucketResult></ListBucketResult>",
        ];
        for body in cases {
            let err = parse_list_objects_v2(body).unwrap_err();
            assert_eq!(
                (err.kind, err.code.as_deref()),
                (FailureKind::Fatal, Some("MalformedResponse")),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "<a>".repeat(100_000);
        assert!(parse_list_objects_v2(deep.as_bytes()).is_err());
        let within = format!("<ListBucketResult>{}{}</ListBucketResult>", "<x>".repeat(20), "</x>".repeat(20));
        assert_eq!(parse_list_objects_v2(within.as_bytes()).unwrap(), ListBucketResult::default());
    }

    #[test]
    fn attributes_with_gt_and_namespaces_are_fine() {
        let body =
            "<s3:ListBucketResult a='x>y' b=\"<\"><s3:Contents><s3:Key>k</s3:Key></s3:Contents></s3:ListBucketResult>";
        assert_eq!(keys(&parse_list_objects_v2(body.as_bytes()).unwrap()), ["k"]);
    }

    #[test]
    fn pseudo_random_bytes_never_panic() {
        // A tiny deterministic generator: no dev-dependency needed for a smoke fuzz.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let alphabet = b"<>/&;#x!?[]-CDATAKeyContents \"'=ListBucketResult1\xc3\xbc";
        for _ in 0..5_000 {
            let len = (state % 64) as usize;
            let body: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = parse_list_objects_v2(&body);
            let _ = parse_error_body(&body);
        }
    }
}
