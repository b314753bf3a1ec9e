//! Reading S3 responses: what each status means for each operation, as a pure function of the
//! response. The classification decides what the retry layer may do (see [`FailureKind`]).

use super::HttpResponse;
use super::request::META_PREFIX;
use super::xml::{self, ListBucketResult};
use crate::store::{
    FailureKind, Precondition, PutOutcome, StoreError, StoreResult, StoredObject, WriteMeta, normalize_etag,
};
use crate::time::Timestamp;

/// Longest error message handed up (server text can be a whole HTML page).
const MAX_MESSAGE_CHARS: usize = 400;

/// The server's clock from a response's `Date` header: whole seconds, so half a second is added,
/// the middle of the second it names.
pub fn server_time(response: &HttpResponse) -> Option<crate::time::Timestamp> {
    response.header("date").and_then(crate::time::Timestamp::parse_http_date).map(|t| t.plus_secs(0.5))
}

/// GetObject: the object, or `None` when the key does not exist.
pub fn read_get(response: HttpResponse, what: &dyn std::fmt::Display) -> StoreResult<Option<StoredObject>> {
    match response.status {
        200..=299 => {
            let etag = required_etag(&response, what)?;
            let meta =
                WriteMeta::from_entries(|name| response.header(&format!("{META_PREFIX}{name}")).map(str::to_owned));
            let last_modified = response.header("last-modified").and_then(Timestamp::parse_http_date);
            Ok(Some(StoredObject { body: response.body, etag, meta, last_modified }))
        }
        404 if !is_missing_bucket(&response) => Ok(None),
        _ => Err(classify_failure(&response, what)),
    }
}

/// PutObject. A conditional put that lost — 412, or 404 NoSuchKey (AWS's answer to `If-Match` on
/// a missing key) — is [`PutOutcome::PreconditionFailed`], not an error.
pub fn read_put(
    response: HttpResponse,
    precondition: &Precondition,
    what: &dyn std::fmt::Display,
) -> StoreResult<PutOutcome> {
    let conditional = *precondition != Precondition::None;
    match response.status {
        200..=299 => match response.header("etag").map(normalize_etag).filter(|e| !e.is_empty()) {
            Some(etag) => Ok(PutOutcome::Written { etag }),
            // The write landed but we cannot name its version: let the retry layer read it back.
            None => Err(StoreError::new(
                FailureKind::Indeterminate,
                Some("MissingETag"),
                Some(response.status),
                format!("{what}: success without an ETag"),
            )),
        },
        412 if conditional => Ok(PutOutcome::PreconditionFailed),
        404 if conditional && !is_missing_bucket(&response) => Ok(PutOutcome::PreconditionFailed),
        _ => Err(classify_failure(&response, what)),
    }
}

/// DeleteObject: deleting a missing key is not an error (S3 says 204 anyway; others say 404).
pub fn read_delete(response: HttpResponse, what: &dyn std::fmt::Display) -> StoreResult<()> {
    match response.status {
        200..=299 => Ok(()),
        404 if !is_missing_bucket(&response) => Ok(()),
        _ => Err(classify_failure(&response, what)),
    }
}

/// A conditional DeleteObject: `false` when the precondition failed (412, or 404 NoSuchKey for a
/// key that is gone).
pub fn read_conditional_delete(response: HttpResponse, what: &dyn std::fmt::Display) -> StoreResult<bool> {
    match response.status {
        200..=299 => Ok(true),
        412 => Ok(false),
        404 if !is_missing_bucket(&response) => Ok(false),
        _ => Err(classify_failure(&response, what)),
    }
}

/// One ListObjectsV2 page.
pub fn read_list(response: HttpResponse, what: &dyn std::fmt::Display) -> StoreResult<ListBucketResult> {
    match response.status {
        200..=299 => xml::parse_list_objects_v2(&response.body).map_err(|e| StoreError {
            status: Some(response.status),
            message: format!("{what}: {}", e.message),
            ..e
        }),
        _ => Err(classify_failure(&response, what)),
    }
}

/// A refusal or failure status, classified, naming the S3 error code when the body has one.
pub fn classify_failure(response: &HttpResponse, what: &dyn std::fmt::Display) -> StoreError {
    let parsed = xml::parse_error_body(&response.body);
    let code = parsed.as_ref().and_then(|b| b.code.clone());
    let kind = FailureKind::of_http(response.status, code.as_deref());
    let detail = match (parsed.as_ref().and_then(|b| b.message.as_deref()), &code) {
        (Some(message), _) => message.to_owned(),
        (None, Some(code)) => code.clone(),
        (None, None) => body_snippet(&response.body),
    };
    let message =
        if detail.is_empty() { format!("{what}: HTTP {}", response.status) } else { format!("{what}: {detail}") };
    StoreError { kind, code, status: Some(response.status), message }
}

/// A 404 about the bucket is a configuration error, never "the key is absent".
fn is_missing_bucket(response: &HttpResponse) -> bool {
    xml::parse_error_body(&response.body).and_then(|b| b.code).as_deref() == Some("NoSuchBucket")
}

fn required_etag(response: &HttpResponse, what: &dyn std::fmt::Display) -> StoreResult<String> {
    match response.header("etag").map(normalize_etag).filter(|e| !e.is_empty()) {
        Some(etag) => Ok(etag),
        None => Err(StoreError::new(
            FailureKind::Fatal,
            Some("MalformedResponse"),
            Some(response.status),
            format!("{what}: object returned without an ETag"),
        )),
    }
}

pub fn malformed(what: &dyn std::fmt::Display, detail: impl AsRef<str>) -> StoreError {
    StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("{what}: {}", detail.as_ref()))
}

/// A non-XML error body (a proxy's HTML page, plain text) on one line; [`sanitize`] shortens it.
fn body_snippet(body: &[u8]) -> String {
    String::from_utf8_lossy(body).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Make an error fit to hand up: every occurrence of each secret (a server or transport may echo
/// the signature or a token) replaced by `[redacted]`, then the message shortened. Redacting
/// first means a cut can never leave part of a secret behind. A short secret is only redacted where
/// it stands as a word of its own, so text that merely contains its letters ("no response" with
/// the secret "s") is left as it is.
pub fn sanitize(mut err: StoreError, secrets: &[&str]) -> StoreError {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        err.message = redact(&err.message, secret);
        if let Some(code) = err.code.as_mut() {
            *code = redact(code, secret);
        }
    }
    err.message = clip(&err.message, MAX_MESSAGE_CHARS);
    err
}

/// `text` with `secret` replaced by `[redacted]`: every occurrence of a secret of 16 characters or
/// more (no text contains one by chance), only whole-word occurrences of a shorter one.
fn redact(text: &str, secret: &str) -> String {
    const ALWAYS: usize = 16;
    // ASCII letters and digits only (no Unicode tables in the wasm): next to any other character a
    // short secret counts as a whole word, so the doubt is settled by redacting more.
    let in_word = |c: char| c.is_ascii_alphanumeric();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = crate::base::text::split_once(rest, secret) {
        let whole = secret.len() >= ALWAYS
            || (!before.chars().next_back().is_some_and(in_word) && !after.chars().next().is_some_and(in_word));
        out.push_str(before);
        out.push_str(if whole { "[redacted]" } else { secret });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn clip(text: &str, max_chars: usize) -> String {
    let mut chars = text.chars();
    let clipped: String = chars.by_ref().take(max_chars).collect();
    if chars.next().is_some() { format!("{clipped}…") } else { clipped }
}
