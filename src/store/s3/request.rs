//! Building signed S3 requests: a pure function of the config, the operation's inputs and a time.

use super::sigv4::{self, RequestToSign, Scope};
use super::{Addressing, HttpRequest, S3Config};
use crate::store::http::encode::{canonical_query, encode_path};
use crate::store::{FailureKind, Precondition, StoreError, WriteMeta, normalize_etag};
use crate::time::Timestamp;

/// Write provenance travels as user metadata: `x-amz-meta-<name>` for each [`WriteMeta::entries`]
/// name, read back after an ambiguous write to learn whether it landed (see [`crate::Objects`]).
pub const META_PREFIX: &str = "x-amz-meta-";
/// The write token header (tests, CORS rules).
#[cfg(test)]
pub const TOKEN_HEADER: &str = "x-amz-meta-fencepost-token";
/// The replaced-tokens header (tests, CORS rules).
#[cfg(test)]
pub const HISTORY_HEADER: &str = "x-amz-meta-fencepost-history";

/// Reads must reach the server: a stale copy from any HTTP cache on the path (a browser's
/// included) would break per-key linearizability.
const NO_CACHE: (&str, &str) = ("cache-control", "no-cache");

impl S3Config {
    /// GetObject for `key`; with `If-None-Match` (a 304 while `unless` is still the etag) when given.
    pub(crate) fn get_object_request(&self, key: &str, unless: Option<&str>, at: Timestamp) -> HttpRequest {
        let mut headers = vec![header(NO_CACHE.0, NO_CACHE.1)];
        headers.extend(unless.map(|etag| header("if-none-match", &format!("\"{}\"", normalize_etag(etag)))));
        self.signed_request("GET", Some(key), &[], headers, Vec::new(), at)
    }

    /// PutObject for `key`, with the precondition as `If-None-Match: *` or `If-Match: "etag"` and
    /// the write token and history as user metadata. Fails (Fatal) only if the metadata could not
    /// travel in an HTTP header.
    pub(crate) fn put_object_request(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
        at: Timestamp,
    ) -> Result<HttpRequest, StoreError> {
        let mut headers = vec![header("content-type", "application/json")];
        match precondition {
            Precondition::None => {}
            Precondition::IfAbsent => headers.push(header("if-none-match", "*")),
            // S3 compares the quoted form; accept the etag quoted or bare.
            Precondition::IfMatch(etag) => headers.push(header("if-match", &format!("\"{}\"", normalize_etag(etag)))),
        }
        for (name, value) in meta.entries() {
            headers.push(header(&format!("{META_PREFIX}{name}"), checked_metadata(&value)?));
        }
        Ok(self.signed_request("PUT", Some(key), &[], headers, body.to_vec(), at))
    }

    /// DeleteObject for `key`.
    pub(crate) fn delete_object_request(&self, key: &str, at: Timestamp) -> HttpRequest {
        self.signed_request("DELETE", Some(key), &[], Vec::new(), Vec::new(), at)
    }

    /// DeleteObject for `key` only while its etag is `etag` (`If-Match`, which S3 honours on DELETE).
    pub(crate) fn delete_object_if_match_request(&self, key: &str, etag: &str, at: Timestamp) -> HttpRequest {
        let headers = vec![header("if-match", &format!("\"{}\"", normalize_etag(etag)))];
        self.signed_request("DELETE", Some(key), &[], headers, Vec::new(), at)
    }

    /// One page of ListObjectsV2 under `bucket_prefix`: after the page `continuation_token` ended,
    /// else the first one (after the key `start_after`, when given).
    pub(crate) fn list_objects_v2_request(
        &self,
        bucket_prefix: &str,
        start_after: Option<&str>,
        continuation_token: Option<&str>,
        at: Timestamp,
    ) -> HttpRequest {
        let mut query = vec![("list-type", "2")];
        if !bucket_prefix.is_empty() {
            query.push(("prefix", bucket_prefix));
        }
        match (continuation_token, start_after) {
            (Some(token), _) => query.push(("continuation-token", token)),
            (None, Some(after)) => query.push(("start-after", after)),
            (None, None) => {}
        }
        let headers = vec![header(NO_CACHE.0, NO_CACHE.1)];
        self.signed_request("GET", None, &query, headers, Vec::new(), at)
    }

    /// The path as sent and signed: for an object `key`, else the bucket.
    pub(crate) fn canonical_uri(&self, key: Option<&str>) -> String {
        let object = key.map(encode_path);
        match (self.addressing, object) {
            (Addressing::Path, Some(object)) => format!("{}/{}/{object}", self.parsed.path, self.bucket),
            (Addressing::Path, None) => format!("{}/{}", self.parsed.path, self.bucket),
            (Addressing::VirtualHosted, Some(object)) => format!("{}/{object}", self.parsed.path),
            (Addressing::VirtualHosted, None) => format!("{}/", self.parsed.path),
        }
    }

    fn signed_request(
        &self,
        method: &'static str,
        key: Option<&str>,
        query: &[(&str, &str)],
        mut headers: Vec<(String, String)>,
        body: Vec<u8>,
        at: Timestamp,
    ) -> HttpRequest {
        let host = self.host();
        let canonical_uri = self.canonical_uri(key);
        let canonical_query = canonical_query(query);
        let payload_sha256 = sigv4::sha256_hex(&body);
        let mut to_sign = Vec::with_capacity(headers.len() + 1);
        to_sign.push(header("host", &host));
        to_sign.extend(headers.iter().cloned());
        let request = RequestToSign {
            method,
            canonical_uri: &canonical_uri,
            canonical_query: &canonical_query,
            headers: &to_sign,
            payload_sha256: &payload_sha256,
        };
        let scope = Scope { region: &self.region, service: "s3" };
        headers.extend(sigv4::sign_with(&request, scope, &self.credentials(), at, &self.signing_keys).into_headers());
        let query_suffix = if canonical_query.is_empty() { String::new() } else { format!("?{canonical_query}") };
        let url = format!("{}://{host}{canonical_uri}{query_suffix}", self.parsed.scheme);
        HttpRequest { method, url, headers, body }
    }
}

fn header(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

/// Metadata values travel as header values: printable ASCII and spaces only. Tokens are URL-safe
/// base64, so this only trips on a caller bug, which must not turn into a transport error.
fn checked_metadata(value: &str) -> Result<&str, StoreError> {
    if value.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
        Ok(value)
    } else {
        Err(StoreError::new(
            FailureKind::Fatal,
            Some("InvalidMetadata"),
            None,
            "write token metadata is not header-safe ASCII",
        ))
    }
}
