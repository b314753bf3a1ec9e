//! Azure Blob requests and responses as pure functions: what each operation sends, and what each
//! answer means (which refusal is a lost precondition, which failure may be retried).

use crate::store::http::encode::{canonical_query, encode_path};
use crate::store::http::xml::{Element, parse_document};
use crate::store::http::{self, Endpoint, HttpRequest, HttpResponse};
use crate::store::{
    FailureKind, ListPage, Listed, Precondition, PutOutcome, Reply, Request as StoreRequest, StoreError, StoreResult,
    StoredObject, WriteMeta, normalize_etag,
};
use crate::time::Timestamp;

/// The Blob REST API version every request asks for (Azurite and Azure both serve it).
pub(crate) const API_VERSION: &str = "2021-12-02";

/// Blob metadata travels as `x-ms-meta-<name>` headers.
const META_PREFIX: &str = "x-ms-meta-";

/// Azure's most keys per list page (its default too).
const PAGE_SIZE: &str = "1000";

/// A request before it is dated and authorized: the store adds `x-ms-date`, `x-ms-version` and
/// the `Authorization` header (or the SAS token), which the signature covers.
pub(crate) struct BlobRequest<'a> {
    pub method: &'static str,
    /// The blob (`None`: the container itself, for a listing).
    pub blob: Option<&'a str>,
    /// Decoded names and values.
    pub query: Vec<(&'a str, &'a str)>,
    /// Lowercase names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl<'a> BlobRequest<'a> {
    fn new(method: &'static str, blob: Option<&'a str>) -> Self {
        BlobRequest { method, blob, query: Vec::new(), headers: Vec::new(), body: Vec::new() }
    }

    fn header(mut self, name: &str, value: String) -> Self {
        self.headers.push((name.to_owned(), value));
        self
    }

    /// The URL path as sent and signed: the endpoint's path (Azurite's account), the container,
    /// the blob name percent-encoded with its slashes kept.
    pub(crate) fn path(&self, endpoint: &Endpoint, container: &str) -> String {
        match self.blob {
            Some(blob) => format!("{}/{container}/{}", endpoint.path, encode_path(blob)),
            None => format!("{}/{container}", endpoint.path),
        }
    }

    pub(crate) fn to_http(&self, endpoint: &Endpoint, path: &str, sas: Option<&str>) -> HttpRequest {
        let mut query = canonical_query(&self.query);
        if let Some(sas) = sas {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(sas);
        }
        let separator = if query.is_empty() { "" } else { "?" };
        HttpRequest {
            method: self.method,
            url: format!("{}://{}{path}{separator}{query}", endpoint.scheme, endpoint.authority()),
            headers: self.headers.clone(),
            body: self.body.clone(),
        }
    }
}

/// The Blob API request for a store request.
pub(crate) fn request<'a>(request: &StoreRequest<'a>) -> BlobRequest<'a> {
    match *request {
        StoreRequest::Get(key) => get(key),
        StoreRequest::GetIfChanged { key, etag } => get(key).header("if-none-match", quoted_etag(etag)),
        StoreRequest::Put { key, body, precondition, meta } => put(key, body, precondition, meta),
        StoreRequest::Delete(key) => delete(key, None),
        StoreRequest::DeleteIfMatch { key, etag } => delete(key, Some(etag)),
        StoreRequest::List { prefix, cursor, .. } => list(prefix, cursor),
    }
}

/// The answer to `request`, read by the reader of its operation.
pub(crate) fn read(
    response: HttpResponse,
    request: &StoreRequest<'_>,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<Reply> {
    Ok(match *request {
        StoreRequest::Get(_) | StoreRequest::GetIfChanged { .. } => Reply::Object(read_get(response, what)?),
        StoreRequest::Put { precondition, .. } => Reply::Put(read_put(response, precondition, what)?),
        StoreRequest::Delete(_) => Reply::Deleted(read_delete(response, what).map(|_| true)?),
        StoreRequest::DeleteIfMatch { .. } => Reply::Deleted(read_delete(response, what)?),
        StoreRequest::List { .. } => Reply::Page(read_list(response, what)?),
    })
}

/// The quoted form Azure compares (an etag may be handed in bare or quoted).
fn quoted_etag(etag: &str) -> String {
    format!("\"{}\"", normalize_etag(etag))
}

/// Get Blob. `no-cache`: a stale copy from an HTTP cache on the path would break linearizability.
pub(crate) fn get(key: &str) -> BlobRequest<'_> {
    BlobRequest::new("GET", Some(key)).header("cache-control", "no-cache".to_owned())
}

/// Put Blob (a block blob in one request), the precondition as `If-None-Match: *` or
/// `If-Match: "etag"`, the write provenance as metadata.
pub(crate) fn put<'a>(key: &'a str, body: &[u8], precondition: &Precondition, meta: &WriteMeta) -> BlobRequest<'a> {
    let mut request = BlobRequest::new("PUT", Some(key))
        .header("content-type", "application/json".to_owned())
        .header("x-ms-blob-type", "BlockBlob".to_owned());
    match precondition {
        Precondition::None => {}
        Precondition::IfAbsent => request = request.header("if-none-match", "*".to_owned()),
        Precondition::IfMatch(etag) => request = request.header("if-match", quoted_etag(etag)),
    }
    for (name, value) in meta.entries() {
        request = request.header(&meta_header(name), value);
    }
    request.body = body.to_vec();
    request
}

/// Delete Blob, only while its etag is `etag` when one is given.
pub(crate) fn delete<'a>(key: &'a str, etag: Option<&str>) -> BlobRequest<'a> {
    let request = BlobRequest::new("DELETE", Some(key));
    match etag {
        Some(etag) => request.header("if-match", quoted_etag(etag)),
        None => request,
    }
}

/// List Blobs: one page of the container's blobs under `prefix`, from `marker`.
pub(crate) fn list<'a>(prefix: &'a str, marker: Option<&'a str>) -> BlobRequest<'a> {
    let mut request = BlobRequest::new("GET", None);
    request.query = vec![("restype", "container"), ("comp", "list"), ("prefix", prefix), ("maxresults", PAGE_SIZE)];
    request.query.extend(marker.map(|m| ("marker", m)));
    request
}

/// Metadata names are C# identifiers on Azure: `fencepost-token` is stored as `fencepost_token`.
fn meta_header(name: &str) -> String {
    format!("{META_PREFIX}{}", name.replace('-', "_"))
}

pub(crate) fn read_get(
    response: HttpResponse,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<Option<StoredObject>> {
    match response.status {
        200..=299 => {
            let etag = response.header("etag").map(normalize_etag);
            http::stored_object(response, etag, meta_header, what).map(Some)
        }
        404 if code(&response).as_deref() == Some("BlobNotFound") => Ok(None),
        _ => Err(failure(&response, what)),
    }
}

/// A conditional Put Blob that lost is [`PutOutcome::PreconditionFailed`]: 412 ConditionNotMet,
/// 409 BlobAlreadyExists (Azure's answer to `If-None-Match: *` on an existing blob), 404 for
/// `If-Match` on a blob that is gone.
pub(crate) fn read_put(
    response: HttpResponse,
    precondition: &Precondition,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<PutOutcome> {
    let code = code(&response);
    match (response.status, precondition, code.as_deref()) {
        (200..=299, ..) => match response.header("etag").map(normalize_etag).filter(|e| !e.is_empty()) {
            Some(etag) => Ok(PutOutcome::Written { etag }),
            None => Err(http::unnamed_write(&response, what)),
        },
        (412, Precondition::IfAbsent | Precondition::IfMatch(_), _)
        | (409, Precondition::IfAbsent, Some("BlobAlreadyExists"))
        | (404, Precondition::IfMatch(_), Some("BlobNotFound")) => Ok(PutOutcome::PreconditionFailed),
        _ => Err(failure(&response, what)),
    }
}

/// Delete Blob: `true` when deleted; `false` when it was not there (404 BlobNotFound) or the
/// version changed (412). A plain delete of a missing blob is not an error.
pub(crate) fn read_delete(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<bool> {
    match response.status {
        200..=299 => Ok(true),
        412 => Ok(false),
        404 if code(&response).as_deref() == Some("BlobNotFound") => Ok(false),
        _ => Err(failure(&response, what)),
    }
}

pub(crate) fn read_list(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<ListPage> {
    if !(200..=299).contains(&response.status) {
        return Err(failure(&response, what));
    }
    parse_list(&response.body).map_err(|e| StoreError { message: format!("{what}: {}", e.message), ..e })
}

/// An `<EnumerationResults>` page: the blobs, and `<NextMarker>` when there are more.
fn parse_list(body: &[u8]) -> StoreResult<ListPage> {
    let root = parse_document(body)?;
    if root.name != "EnumerationResults" {
        return Err(crate::store::http::xml::malformed(format!("expected <EnumerationResults>, got <{}>", root.name)));
    }
    let mut entries = Vec::new();
    for blob in root.children_named("Blobs").flat_map(|b| b.children_named("Blob")) {
        let Some(name) = blob.child_text("Name") else {
            return Err(crate::store::http::xml::malformed("a <Blob> has no <Name>"));
        };
        let property = |n: &str| blob.children_named("Properties").find_map(|p: &Element| p.child_text(n));
        // The rest is informational (operators' listings): read when well-formed, else left out.
        entries.push(Listed {
            key: name.to_owned(),
            etag: property("Etag").map(normalize_etag),
            size: property("Content-Length").and_then(|s| crate::base::number::parse_u64(s.trim())),
            last_modified: property("Last-Modified").and_then(|t| Timestamp::parse_http_date(t.trim())),
        });
    }
    let next = root.child_text("NextMarker").map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
    Ok(ListPage { entries, next })
}

/// The store's error code: the `x-ms-error-code` header (every answer has it, HEAD included), else
/// the XML body's `<Code>`.
fn code(response: &HttpResponse) -> Option<String> {
    response.header("x-ms-error-code").map(str::to_owned).or_else(|| error_body(response).0)
}

/// `<Error><Code>…</Code><Message>…</Message></Error>`; the message's first line (Azure appends
/// request ids and times on the next ones).
fn error_body(response: &HttpResponse) -> (Option<String>, Option<String>) {
    let Ok(root) = parse_document(&response.body) else { return (None, None) };
    if root.name != "Error" {
        return (None, None);
    }
    // The first line, trimmed (split at `'\n'`: `str::lines` was a splitter of its own in the wasm).
    let text = |name: &str| {
        root.child_text(name)
            .and_then(|t| t.trim().split('\n').next().map(str::trim_end))
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    (text("Code"), text("Message"))
}

/// A refusal or failure, classified. Azure's 409s are refusals that a retry will not change (a
/// lease on the blob, a container being deleted), unlike S3's.
fn failure(response: &HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreError {
    let (body_code, message) = error_body(response);
    let code = response.header("x-ms-error-code").map(str::to_owned).or(body_code);
    let mut err = http::failure(response, what, code, message.as_deref());
    if response.status == 409 {
        err.kind = FailureKind::Fatal;
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn writes_carry_conditions_and_provenance() {
        let meta = WriteMeta::replacing("t2".into(), &WriteMeta::creating("t1".into()));
        let request = put("k", b"{}", &Precondition::IfMatch("0x8D1".into()), &meta);
        let header = |n: &str| request.headers.iter().find(|(h, _)| h == n).map(|(_, v)| v.as_str());
        assert_eq!(header("if-match"), Some("\"0x8D1\""));
        assert_eq!(header("x-ms-blob-type"), Some("BlockBlob"));
        assert_eq!(header("x-ms-meta-fencepost_token"), Some("t2"));
        assert_eq!(header("x-ms-meta-fencepost_history"), Some("t1"));
        assert_eq!(header("x-ms-meta-fencepost_origin"), Some("t1"));
        let create = put("k", b"{}", &Precondition::IfAbsent, &meta);
        assert!(create.headers.contains(&("if-none-match".into(), "*".into())));
    }

    #[test]
    fn lost_preconditions_are_outcomes_not_errors() {
        let what = "PUT \"k\"";
        let exists = response(409, &[("x-ms-error-code", "BlobAlreadyExists")], "");
        assert_eq!(read_put(exists, &Precondition::IfAbsent, &what).unwrap(), PutOutcome::PreconditionFailed);
        let stale = response(412, &[("x-ms-error-code", "ConditionNotMet")], "");
        let etag = Precondition::IfMatch("e".into());
        assert_eq!(read_put(stale, &etag, &what).unwrap(), PutOutcome::PreconditionFailed);
        let gone = response(404, &[("x-ms-error-code", "BlobNotFound")], "");
        assert_eq!(read_put(gone, &etag, &what).unwrap(), PutOutcome::PreconditionFailed);
        let leased = response(409, &[("x-ms-error-code", "LeaseIdMissing")], "");
        let err = read_put(leased, &Precondition::None, &what).unwrap_err();
        assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("LeaseIdMissing")));
        let no_container = response(404, &[("x-ms-error-code", "ContainerNotFound")], "");
        assert!(read_get(no_container, &what).is_err());
        assert!(!read_delete(response(404, &[("x-ms-error-code", "BlobNotFound")], ""), &what).unwrap());
    }

    #[test]
    fn errors_name_the_code_and_the_first_line_of_the_message() {
        let body = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>AuthenticationFailed</Code>\
                    <Message>Server failed to authenticate the request.\nRequestId:1\nTime:2026</Message></Error>";
        let err = read_get(response(403, &[], body), &"GET \"k\"").unwrap_err();
        assert_eq!(
            (err.kind, err.code.as_deref(), err.status),
            (FailureKind::Fatal, Some("AuthenticationFailed"), Some(403))
        );
        assert_eq!(err.message, "GET \"k\": Server failed to authenticate the request.");
        let busy = read_get(response(503, &[("x-ms-error-code", "ServerBusy")], ""), &"GET \"k\"").unwrap_err();
        assert_eq!(busy.kind, FailureKind::Transient);
    }

    #[test]
    fn list_pages_are_read() {
        let body = r#"<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1" ContainerName="c">
  <Prefix>p/</Prefix><MaxResults>2</MaxResults>
  <Blobs>
    <Blob><Name>p/a &amp; b</Name><Properties><Last-Modified>Thu, 01 Jan 2026 00:00:00 GMT</Last-Modified>
      <Etag>0x8DCB1</Etag><Content-Length>2</Content-Length></Properties></Blob>
    <Blob><Name>p/c</Name><Properties /></Blob>
  </Blobs>
  <NextMarker>2!8!cC9j</NextMarker>
</EnumerationResults>"#;
        let page = read_list(response(200, &[], body), &"LIST").unwrap();
        assert_eq!(page.entries.len(), 2);
        assert_eq!(page.entries[0].key, "p/a & b");
        assert_eq!(page.entries[0].etag.as_deref(), Some("0x8DCB1"));
        assert_eq!(page.entries[0].size, Some(2));
        assert_eq!(page.entries[0].last_modified, Timestamp::parse_rfc3339("2026-01-01T00:00:00Z"));
        assert_eq!(page.next.as_deref(), Some("2!8!cC9j"));
        let last = body.replace("<NextMarker>2!8!cC9j</NextMarker>", "<NextMarker />");
        assert_eq!(read_list(response(200, &[], &last), &"LIST").unwrap().next, None);
    }
}
