//! Reading S3 responses: what each status means for each operation, as a pure function of the
//! response. The classification decides what the retry layer may do (see [`FailureKind`]).

use super::request::META_PREFIX;
use super::xml::{self, ListBucketResult};
pub(crate) use crate::store::http::malformed;
use crate::store::http::{self, HttpResponse};
use crate::store::{
    ListPage, Precondition, PutOutcome, Reply, Request, StoreError, StoreResult, StoredObject, normalize_etag,
};

/// The answer to `request`, read by the reader of its operation.
pub(crate) fn read(
    response: HttpResponse,
    request: &Request<'_>,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<Reply> {
    Ok(match *request {
        Request::Get(_) | Request::GetIfChanged { .. } => Reply::Object(read_get(response, what)?),
        Request::Put { precondition, .. } => Reply::Put(read_put(response, precondition, what)?),
        Request::Delete(_) => Reply::Deleted(read_delete(response, what).map(|()| true)?),
        Request::DeleteIfMatch { .. } => Reply::Deleted(read_conditional_delete(response, what)?),
        Request::List { .. } => {
            let page = read_list(response, what)?;
            let next = match (page.is_truncated, page.next_continuation_token) {
                (false, _) => None,
                (true, Some(token)) => Some(token),
                (true, None) => return Err(malformed(what, "a truncated page without NextContinuationToken")),
            };
            Reply::Page(ListPage { entries: page.entries, next })
        }
    })
}

/// GetObject: the object, or `None` when the key does not exist.
pub fn read_get(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<Option<StoredObject>> {
    match response.status {
        200..=299 => {
            let etag = response.header("etag").map(normalize_etag);
            http::stored_object(response, etag, |name| format!("{META_PREFIX}{name}"), what).map(Some)
        }
        404 if is_missing_key(&response) => Ok(None),
        _ => Err(classify_failure(&response, what)),
    }
}

/// PutObject. A conditional put that lost — 412, or 404 NoSuchKey (AWS's answer to `If-Match` on
/// a missing key) — is [`PutOutcome::PreconditionFailed`], not an error. Any other 404 (an
/// endpoint or proxy that is not S3, a missing bucket) is the error it is: taken for a lost race,
/// every claim and lease would retry to a `ConflictError` against a store that never answered.
pub fn read_put(
    response: HttpResponse,
    precondition: &Precondition,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<PutOutcome> {
    let conditional = *precondition != Precondition::None;
    match response.status {
        200..=299 => match response.header("etag").map(normalize_etag).filter(|e| !e.is_empty()) {
            Some(etag) => Ok(PutOutcome::Written { etag }),
            None => Err(http::unnamed_write(&response, what)),
        },
        412 if conditional => Ok(PutOutcome::PreconditionFailed),
        404 if conditional && is_no_such_key(&response) => Ok(PutOutcome::PreconditionFailed),
        _ => Err(classify_failure(&response, what)),
    }
}

/// DeleteObject: deleting a missing key is not an error (S3 says 204 anyway; others say 404).
pub fn read_delete(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<()> {
    match response.status {
        200..=299 => Ok(()),
        404 if is_missing_key(&response) => Ok(()),
        _ => Err(classify_failure(&response, what)),
    }
}

/// A conditional DeleteObject: `false` when the precondition failed (412, or 404 NoSuchKey for a
/// key that is gone).
pub fn read_conditional_delete(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<bool> {
    match response.status {
        200..=299 => Ok(true),
        412 => Ok(false),
        404 if is_missing_key(&response) => Ok(false),
        _ => Err(classify_failure(&response, what)),
    }
}

/// One ListObjectsV2 page.
pub fn read_list(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<ListBucketResult> {
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
pub fn classify_failure(response: &HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreError {
    let parsed = xml::parse_error_body(&response.body).unwrap_or_default();
    http::failure(response, what, parsed.code, parsed.message.as_deref())
}

/// A 404 that says the key is missing: S3's `NoSuchKey`, or no body at all (a HEAD-like answer some
/// S3-compatible servers give a DELETE). Any other 404 — a missing bucket, an endpoint or proxy
/// that is not S3 answering with a page of its own — is an error, not "absent": a misconfigured
/// endpoint would otherwise read as an empty bucket.
fn is_missing_key(response: &HttpResponse) -> bool {
    response.body.iter().all(u8::is_ascii_whitespace) || is_no_such_key(response)
}

/// An error response whose XML body has S3's code `NoSuchKey`.
fn is_no_such_key(response: &HttpResponse) -> bool {
    xml::parse_error_body(&response.body).and_then(|b| b.code).as_deref() == Some("NoSuchKey")
}
