//! AWS Signature Version 4, as a pure function of the request, the credentials and a time. Nothing
//! here does I/O or reads a clock, so it is tested against AWS's published example signatures.
//!
//! Secrets discipline: the secret key, the derived signing key and the signature never appear in
//! any `Debug` output or error; the types holding them print `[redacted]`.

use std::borrow::Cow;
use std::fmt;

use sha2::{Digest, Sha256};

use crate::codec::encoding::hex;
use crate::store::http::hmac_sha256;
use crate::time::Timestamp;

/// SHA-256 of the empty body, the payload hash of every GET and DELETE.
#[cfg(test)]
pub const EMPTY_PAYLOAD_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The credentials a request is signed with (borrowed: the owner decides where secrets live).
#[derive(Clone, Copy)]
pub struct Credentials<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    /// Temporary credentials (STS) also send this as `x-amz-security-token`.
    pub session_token: Option<&'a str>,
}

impl fmt::Debug for Credentials<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"[redacted]")
            .field("session_token", &self.session_token.map(|_| "[redacted]"))
            .finish()
    }
}

/// What the signature covers. `canonical_uri` and `canonical_query` are exactly what is sent on the
/// wire (already encoded by [`super::encode`]); `headers` are every header to sign except the ones
/// [`sign`] adds itself (`x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`), and must
/// include `host`.
#[derive(Debug, Clone, Copy)]
pub struct RequestToSign<'a> {
    pub method: &'a str,
    pub canonical_uri: &'a str,
    pub canonical_query: &'a str,
    pub headers: &'a [(String, String)],
    /// Lowercase hex SHA-256 of the body. Always the real hash, never `UNSIGNED-PAYLOAD`: some
    /// servers (SeaweedFS) verify it.
    pub payload_sha256: &'a str,
}

/// Where the signature is valid: region and service (`s3`).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
}

/// The headers a signed request must carry, beyond the ones that were signed as given.
#[derive(Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    pub amz_date: String,
    pub content_sha256: String,
    pub security_token: Option<String>,
    authorization: String,
}

impl SignedHeaders {
    /// The `Authorization` header value (contains the signature: do not log it).
    #[cfg(test)]
    pub fn authorization(&self) -> &str {
        &self.authorization
    }

    /// The bare signature (the end of the `Authorization` header).
    #[cfg(test)]
    pub fn signature(&self) -> &str {
        crate::base::text::rsplit_once(&self.authorization, "Signature=").map_or("", |(_, signature)| signature)
    }

    /// All of them as `(lowercase name, value)` pairs, ready to append to the request.
    pub fn into_headers(self) -> Vec<(String, String)> {
        let mut headers = vec![
            ("authorization".to_owned(), self.authorization),
            ("x-amz-content-sha256".to_owned(), self.content_sha256),
            ("x-amz-date".to_owned(), self.amz_date),
        ];
        if let Some(token) = self.security_token {
            headers.push(("x-amz-security-token".to_owned(), token));
        }
        headers
    }
}

impl fmt::Debug for SignedHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedHeaders")
            .field("amz_date", &self.amz_date)
            .field("content_sha256", &self.content_sha256)
            .field("security_token", &self.security_token.as_ref().map(|_| "[redacted]"))
            .field("authorization", &"[redacted]")
            .finish()
    }
}

/// Sign `request` for `scope` with `credentials` at time `at` (the tests' entry: AWS's vectors).
#[cfg(test)]
pub fn sign(
    request: &RequestToSign<'_>,
    scope: Scope<'_>,
    credentials: &Credentials<'_>,
    at: Timestamp,
) -> SignedHeaders {
    sign_with(request, scope, credentials, at, &SigningKeys::default())
}

/// Sign `request` for `scope` with `credentials` at time `at`, taking the day's signing key from `keys` (a store keeps one cache for its config).
pub fn sign_with(
    request: &RequestToSign<'_>,
    scope: Scope<'_>,
    credentials: &Credentials<'_>,
    at: Timestamp,
    keys: &SigningKeys,
) -> SignedHeaders {
    let (date, amz_date) = amz_dates(at);
    let added = [
        Some(("x-amz-content-sha256", request.payload_sha256)),
        Some(("x-amz-date", amz_date.as_str())),
        credentials.session_token.map(|token| ("x-amz-security-token", token)),
    ];
    let given = request.headers.iter().map(|(name, value)| (name.as_str(), value.as_str()));
    let (canonical_headers, signed_header_names) = canonicalize_headers(given.chain(added.into_iter().flatten()));
    let canonical_request = [
        request.method,
        request.canonical_uri,
        request.canonical_query,
        &canonical_headers,
        &signed_header_names,
        request.payload_sha256,
    ]
    .join("\n");
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign =
        format!("{ALGORITHM}\n{amz_date}\n{credential_scope}\n{}", sha256_hex(canonical_request.as_bytes()));
    let key = keys.get(credentials.secret_access_key, &date, scope);
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
    let authorization = format!(
        "{ALGORITHM} Credential={}/{credential_scope},SignedHeaders={signed_header_names},Signature={signature}",
        credentials.access_key_id
    );
    SignedHeaders {
        amz_date,
        content_sha256: request.payload_sha256.to_owned(),
        security_token: credentials.session_token.map(str::to_owned),
        authorization,
    }
}

/// `(YYYYMMDD, YYYYMMDDTHHMMSSZ)` in UTC, derived from the RFC 3339 form so the calendar maths
/// lives in one place ([`Timestamp`]).
fn amz_dates(at: Timestamp) -> (String, String) {
    let rfc3339 = at.to_rfc3339();
    let (date_part, time_part) = rfc3339.split_once('T').unwrap_or((&rfc3339, ""));
    let date: String = date_part.chars().filter(|c| *c != '-').collect();
    let whole_seconds = time_part.split(['.', 'Z']).next().unwrap_or("");
    let time: String = whole_seconds.chars().filter(|c| *c != ':').collect();
    let amz_date = format!("{date}T{time}Z");
    (date, amz_date)
}

/// Canonical headers (lowercase names, sorted, values trimmed with inner runs of spaces collapsed,
/// repeated names joined by `,`) and the `;`-joined list of signed names.
fn canonicalize_headers<'a>(headers: impl Iterator<Item = (&'a str, &'a str)>) -> (String, String) {
    // Sorted by name as they are added (a request has a dozen headers; and a sort of these pairs
    // would be one more sort routine in the wasm); values of a repeated name are joined in the
    // order given, as S3 expects.
    let mut merged: Vec<(String, Cow<'a, str>)> = Vec::with_capacity(16);
    for (name, value) in headers {
        let (name, value) = (name.trim().to_ascii_lowercase(), collapse_spaces(value));
        let at = merged.partition_point(|(n, _)| *n < name);
        match merged.get_mut(at) {
            Some((n, joined)) if *n == name => {
                let joined = joined.to_mut();
                joined.push(',');
                joined.push_str(&value);
            }
            _ => merged.insert(at, (name, value)),
        }
    }
    let canonical: String = merged.iter().map(|(name, value)| format!("{name}:{value}\n")).collect();
    let names = merged.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(";");
    (canonical, names)
}

fn collapse_spaces(value: &str) -> Cow<'_, str> {
    // Every value fencepost sends is visible ASCII (dates, hashes, tokens, etags): nothing to collapse.
    if value.bytes().all(|b| b.is_ascii_graphic()) {
        return Cow::Borrowed(value);
    }
    Cow::Owned(crate::base::text::one_line(value))
}

/// The day's signing key, derived once per day (4 of SigV4's 5 HMACs per request). One cache per
/// config: its secret and scope never change, so the date alone tells whether the key is current.
#[derive(Debug, Default)]
pub struct SigningKeys(crate::base::sync::Lock<Option<(String, [u8; 32])>>);

impl SigningKeys {
    pub fn get(&self, secret_access_key: &str, date: &str, scope: Scope<'_>) -> [u8; 32] {
        if let Some((day, key)) = &*self.0.lock() {
            if day == date {
                return *key;
            }
        }
        let key = signing_key(secret_access_key, date, scope);
        *self.0.lock() = Some((date.to_owned(), key));
        key
    }
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
fn signing_key(secret_access_key: &str, date: &str, scope: Scope<'_>) -> [u8; 32] {
    let k_date = hmac_sha256(format!("AWS4{secret_access_key}").as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, scope.region.as_bytes());
    let k_service = hmac_sha256(&k_region, scope.service.as_bytes());
    hmac_sha256(&k_service, b"aws4_request")
}

/// Lowercase hex SHA-256, the form SigV4 uses for payload and canonical-request hashes.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::http::encode::{canonical_query, encode_path};

    // AWS's published examples ("Signature Calculations for the Authorization Header: Transferring
    // Payload in a Single Chunk", Amazon S3 API Reference).
    const EXAMPLE_CREDENTIALS: Credentials<'static> = Credentials {
        access_key_id: "AKIAIOSFODNN7EXAMPLE",
        secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        session_token: None,
    };
    const EXAMPLE_SCOPE: Scope<'static> = Scope { region: "us-east-1", service: "s3" };
    const EXAMPLE_HOST: &str = "examplebucket.s3.amazonaws.com";

    fn example_time() -> Timestamp {
        Timestamp::parse_rfc3339("2013-05-24T00:00:00Z").unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn sign_example(method: &str, uri: &str, query: &str, extra: &[(&str, &str)], body: &[u8]) -> SignedHeaders {
        let mut all = headers(&[("Host", EXAMPLE_HOST)]);
        all.extend(headers(extra));
        let payload = sha256_hex(body);
        let request = RequestToSign {
            method,
            canonical_uri: uri,
            canonical_query: query,
            headers: &all,
            payload_sha256: &payload,
        };
        sign(&request, EXAMPLE_SCOPE, &EXAMPLE_CREDENTIALS, example_time())
    }

    #[test]
    fn aws_example_get_object_with_range() {
        let signed = sign_example("GET", "/test.txt", "", &[("Range", "bytes=0-9")], b"");
        assert_eq!(signed.content_sha256, EMPTY_PAYLOAD_SHA256);
        assert_eq!(signed.amz_date, "20130524T000000Z");
        assert_eq!(
            signed.authorization(),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,\
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        assert_eq!(signed.signature(), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    }

    #[test]
    fn aws_example_put_object() {
        let uri = format!("/{}", encode_path("test$file.text"));
        let signed = sign_example(
            "PUT",
            &uri,
            "",
            &[("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            b"Welcome to Amazon S3.",
        );
        assert_eq!(signed.content_sha256, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
        assert_eq!(
            signed.authorization(),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,\
             Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
        );
    }

    #[test]
    fn aws_example_get_bucket_lifecycle() {
        let query = canonical_query(&[("lifecycle", "")]);
        let signed = sign_example("GET", "/", &query, &[], b"");
        assert_eq!(signed.signature(), "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
        assert!(signed.authorization().contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date,"));
    }

    #[test]
    fn aws_example_list_objects() {
        let query = canonical_query(&[("prefix", "J"), ("max-keys", "2")]);
        assert_eq!(query, "max-keys=2&prefix=J");
        let signed = sign_example("GET", "/", &query, &[], b"");
        assert_eq!(signed.signature(), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    }

    #[test]
    fn session_token_is_sent_and_signed() {
        let credentials = Credentials { session_token: Some("FQoGZXIvYXdzEXAMPLE"), ..EXAMPLE_CREDENTIALS };
        let all = headers(&[("host", EXAMPLE_HOST)]);
        let request = RequestToSign {
            method: "GET",
            canonical_uri: "/test.txt",
            canonical_query: "",
            headers: &all,
            payload_sha256: EMPTY_PAYLOAD_SHA256,
        };
        let signed = sign(&request, EXAMPLE_SCOPE, &credentials, example_time());
        assert!(
            signed.authorization().contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,")
        );
        let unsigned_token = sign(&request, EXAMPLE_SCOPE, &EXAMPLE_CREDENTIALS, example_time());
        assert_ne!(signed.signature(), unsigned_token.signature());
        let sent = signed.into_headers();
        assert!(sent.contains(&("x-amz-security-token".to_owned(), "FQoGZXIvYXdzEXAMPLE".to_owned())));
        assert_eq!(
            sent.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["authorization", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"]
        );
    }

    #[test]
    fn header_values_are_trimmed_and_collapsed() {
        let given = headers(&[
            ("X-Amz-Meta-B", "  two   words  "),
            ("Host", "h"),
            ("x-amz-meta-a", "1"),
            ("X-AMZ-META-A", "2"),
        ]);
        let (canonical, names) = canonicalize_headers(given.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        assert_eq!(canonical, "host:h\nx-amz-meta-a:1,2\nx-amz-meta-b:two words\n");
        assert_eq!(names, "host;x-amz-meta-a;x-amz-meta-b");
    }

    #[test]
    fn amz_dates_are_utc_whole_seconds() {
        assert_eq!(amz_dates(example_time()), ("20130524".to_owned(), "20130524T000000Z".to_owned()));
        let t = Timestamp::parse_rfc3339("2026-01-02T03:04:05.999999Z").unwrap();
        assert_eq!(amz_dates(t), ("20260102".to_owned(), "20260102T030405Z".to_owned()));
    }

    #[test]
    fn hmac_matches_rfc4231() {
        // Test case 2: a short key.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block size is hashed first.
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn debug_output_hides_secrets() {
        let credentials = Credentials { session_token: Some("SESSIONTOKEN"), ..EXAMPLE_CREDENTIALS };
        let shown = format!("{credentials:?}");
        assert!(!shown.contains("EXAMPLEKEY") && !shown.contains("SESSIONTOKEN"), "{shown}");
        assert!(shown.contains("AKIAIOSFODNN7EXAMPLE"));
        let signed = sign_example("GET", "/test.txt", "", &[], b"");
        let shown = format!("{signed:?}");
        assert!(!shown.contains(signed.signature()) && !shown.contains("Signature="), "{shown}");
    }
}
