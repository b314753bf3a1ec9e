//! Google Cloud Storage JSON API requests and responses as pure functions: what each operation
//! sends, and what each answer means.
//!
//! The etag fencepost hands out is the object's **generation** (a number GCS gives every write of
//! a name): conditions are `ifGenerationMatch=0` (create only) and `ifGenerationMatch=<generation>`
//! (compare-and-swap), on uploads and deletes. Uploads are multipart (metadata and body in one
//! request): GCS honours the conditions on every upload, and the emulator only on multipart ones.

use serde_json::Value;

use crate::codec::json::string_literal as literal;
use crate::store::http::encode::{canonical_query, encode_query_component};
use crate::store::http::{self, Endpoint, HttpRequest, HttpResponse};
use crate::store::{
    ListPage, Listed, Precondition, PutOutcome, Reply, Request, StoreError, StoreResult, StoredObject, WriteMeta,
};
use crate::time::Timestamp;

/// Custom metadata comes back on a media download as `x-goog-meta-<name>` headers.
const META_PREFIX: &str = "x-goog-meta-";

/// GCS's most results per list page.
const PAGE_SIZE: &str = "1000";

/// Where requests go: `{endpoint}/storage/v1/b/{bucket}/o…` and `{endpoint}/upload/storage/v1/…`.
pub(crate) struct Target<'a> {
    pub endpoint: &'a Endpoint,
    pub bucket: &'a str,
}

impl Target<'_> {
    fn url(&self, api: &str, object: Option<&str>, query: &[(&str, &str)]) -> String {
        let e = self.endpoint;
        let object = object.map_or(String::new(), |o| format!("/{}", encode_query_component(o)));
        let query = canonical_query(query);
        let separator = if query.is_empty() { "" } else { "?" };
        format!("{}://{}{}/{api}/b/{}/o{object}{separator}{query}", e.scheme, e.authority(), e.path, self.bucket)
    }

    fn http(&self, method: &'static str, url: String) -> HttpRequest {
        HttpRequest { method, url, headers: Vec::new(), body: Vec::new() }
    }

    /// The JSON API request for a store request.
    pub(crate) fn for_request(&self, request: &Request<'_>) -> HttpRequest {
        match *request {
            Request::Get(key) => self.get(key, None),
            Request::GetIfChanged { key, etag } => self.get(key, Some(&crate::store::normalize_etag(etag))),
            Request::Put { key, body, precondition, meta } => self.put(key, body, precondition, meta),
            Request::Delete(key) => self.delete(key, None),
            Request::DeleteIfMatch { key, etag } => self.delete(key, Some(&crate::store::normalize_etag(etag))),
            Request::List { prefix, start_after, cursor } => self.list(prefix, start_after, cursor),
        }
    }

    /// objects.get with `alt=media`: the body, with the generation and metadata as headers; with
    /// `ifGenerationNotMatch` (a 304 while `unless` is still the generation) when given.
    pub(crate) fn get(&self, key: &str, unless: Option<&str>) -> HttpRequest {
        let mut query = vec![("alt", "media")];
        query.extend(unless.map(|g| ("ifGenerationNotMatch", g)));
        let mut request = self.http("GET", self.url("storage/v1", Some(key), &query));
        // A stale copy from an HTTP cache on the path would break linearizability.
        request.headers.push(("cache-control".to_owned(), "no-cache".to_owned()));
        request
    }

    /// objects.insert, multipart: the object resource (name, metadata) and the body in one request.
    pub(crate) fn put(&self, key: &str, body: &[u8], precondition: &Precondition, meta: &WriteMeta) -> HttpRequest {
        let generation = generation_condition(precondition);
        let mut query = vec![("uploadType", "multipart")];
        query.extend(generation.as_deref().map(|g| ("ifGenerationMatch", g)));
        let mut request = self.http("POST", self.url("upload/storage/v1", None, &query));
        // The object resource, written out rather than built as a `Value`.
        let metadata: Vec<String> =
            meta.entries().iter().map(|(name, value)| format!("{}:{}", literal(name), literal(value))).collect();
        let resource = format!(
            r#"{{"contentType":"application/json","metadata":{{{}}},"name":{}}}"#,
            metadata.join(","),
            literal(key)
        );
        let boundary = boundary(body, meta);
        let mut multipart = Vec::with_capacity(body.len() + 512);
        multipart.extend_from_slice(
            format!("--{boundary}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n").as_bytes(),
        );
        multipart.extend_from_slice(resource.as_bytes());
        multipart.extend_from_slice(format!("\r\n--{boundary}\r\ncontent-type: application/json\r\n\r\n").as_bytes());
        multipart.extend_from_slice(body);
        multipart.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        request.headers.push(("content-type".to_owned(), format!("multipart/related; boundary={boundary}")));
        request.body = multipart;
        request
    }

    /// objects.delete, only while the generation is `etag` when one is given.
    pub(crate) fn delete(&self, key: &str, etag: Option<&str>) -> HttpRequest {
        let query: Vec<(&str, &str)> = etag.map(|g| ("ifGenerationMatch", g)).into_iter().collect();
        self.http("DELETE", self.url("storage/v1", Some(key), &query))
    }

    /// objects.list: one page under `prefix`, from `start_offset` (inclusive) or `page_token`.
    pub(crate) fn list(&self, prefix: &str, start_offset: Option<&str>, page_token: Option<&str>) -> HttpRequest {
        let mut query = vec![("prefix", prefix), ("maxResults", PAGE_SIZE)];
        match page_token {
            Some(token) => query.push(("pageToken", token)),
            None => query.extend(start_offset.map(|s| ("startOffset", s))),
        }
        self.http("GET", self.url("storage/v1", None, &query))
    }
}

/// `ifGenerationMatch`: 0 for "only if absent", the generation for "only this version".
fn generation_condition(precondition: &Precondition) -> Option<String> {
    match precondition {
        Precondition::None => None,
        Precondition::IfAbsent => Some("0".to_owned()),
        Precondition::IfMatch(etag) => Some(crate::store::normalize_etag(etag)),
    }
}

/// A multipart boundary that does not occur in the body: the write's random token, lengthened in
/// the (astronomically unlikely) case that it does.
fn boundary(body: &[u8], meta: &WriteMeta) -> String {
    let mut boundary = format!("fencepost_{}", meta.token.as_deref().unwrap_or("boundary"));
    while body.windows(boundary.len()).any(|w| w == boundary.as_bytes()) {
        boundary.push('_');
    }
    boundary
}

/// The answer to `request`, read by the reader of its operation.
pub(crate) fn read(
    response: HttpResponse,
    request: &Request<'_>,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<Reply> {
    Ok(match *request {
        Request::Get(_) | Request::GetIfChanged { .. } => Reply::Object(read_get(response, what)?),
        Request::Put { precondition, .. } => Reply::Put(read_put(response, precondition, what)?),
        Request::Delete(_) => Reply::Deleted(read_delete(response, what).map(|_| true)?),
        Request::DeleteIfMatch { .. } => Reply::Deleted(read_delete(response, what)?),
        Request::List { .. } => Reply::Page(read_list(response, what)?),
    })
}

pub(crate) fn read_get(
    response: HttpResponse,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<Option<StoredObject>> {
    match response.status {
        200..=299 => {
            let generation = response.header("x-goog-generation").map(str::trim).filter(|g| is_generation(g));
            let generation = generation.map(str::to_owned);
            http::stored_object(response, generation, |name| format!("{META_PREFIX}{name}"), what).map(Some)
        }
        404 if !is_missing_bucket(&response) => Ok(None),
        _ => Err(failure(&response, what)),
    }
}

/// A conditional upload that lost (412; 404 for a generation of an object that is gone) is
/// [`PutOutcome::PreconditionFailed`]. A 404 to a create-only upload can only be about the bucket.
pub(crate) fn read_put(
    response: HttpResponse,
    precondition: &Precondition,
    what: &(dyn std::fmt::Display + Sync),
) -> StoreResult<PutOutcome> {
    let conditional = *precondition != Precondition::None;
    let if_match = matches!(precondition, Precondition::IfMatch(_));
    match response.status {
        200..=299 => match object_resource(&response.body).and_then(|o| generation_of(&o)) {
            Some(etag) => Ok(PutOutcome::Written { etag }),
            None => Err(http::unnamed_write(&response, what)),
        },
        412 if conditional => Ok(PutOutcome::PreconditionFailed),
        404 if if_match && !is_missing_bucket(&response) => Ok(PutOutcome::PreconditionFailed),
        _ => Err(failure(&response, what)),
    }
}

/// objects.delete: `true` when deleted; `false` when it was not there (404) or the generation
/// changed (412). A plain delete of a missing object is not an error.
pub(crate) fn read_delete(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<bool> {
    match response.status {
        200..=299 => Ok(true),
        412 => Ok(false),
        404 if !is_missing_bucket(&response) => Ok(false),
        _ => Err(failure(&response, what)),
    }
}

pub(crate) fn read_list(response: HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreResult<ListPage> {
    if !(200..=299).contains(&response.status) {
        return Err(failure(&response, what));
    }
    let page = object_resource(&response.body).ok_or_else(|| http::malformed(what, "a list page that is not JSON"))?;
    let mut entries = Vec::new();
    for item in page.get("items").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            return Err(http::malformed(what, "a listed object without a name"));
        };
        // The rest is informational (operators' listings): read when well-formed, else left out.
        entries.push(Listed {
            key: name.to_owned(),
            etag: generation_of(item),
            size: item.get("size").and_then(Value::as_str).and_then(crate::base::number::parse_u64),
            last_modified: item.get("updated").and_then(Value::as_str).and_then(Timestamp::parse_rfc3339),
        });
    }
    let next = page.get("nextPageToken").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned);
    Ok(ListPage { entries, next })
}

fn object_resource(body: &[u8]) -> Option<Value> {
    crate::codec::json::parse(body).ok().filter(Value::is_object)
}

/// GCS writes generations as decimal strings (the JSON API's int64 form).
fn generation_of(object: &Value) -> Option<String> {
    object.get("generation").and_then(Value::as_str).filter(|g| is_generation(g)).map(str::to_owned)
}

pub(crate) fn is_generation(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `{"error": {"code": 404, "message": "…", "errors": [{"reason": "notFound", …}]}}`: the reason
/// (GCS's error code) and the message.
fn error_body(response: &HttpResponse) -> (Option<String>, Option<String>) {
    let Some(body) = crate::codec::json::parse(&response.body).ok() else { return (None, None) };
    let Some(error) = body.get("error") else { return (None, None) };
    // An OAuth endpoint says `{"error": "invalid_grant", "error_description": "…"}`.
    if let Some(code) = error.as_str() {
        let message = body.get("error_description").and_then(Value::as_str).map(str::to_owned);
        return (Some(code.to_owned()), message);
    }
    let reason = error
        .get("errors")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .and_then(|e| e.get("reason"))
        .and_then(Value::as_str)
        .or_else(|| error.get("status").and_then(Value::as_str))
        .map(str::to_owned);
    let message = error.get("message").and_then(Value::as_str).map(str::to_owned);
    (reason, message)
}

/// A 404 about the bucket is a configuration error, never "the object is absent".
fn is_missing_bucket(response: &HttpResponse) -> bool {
    let message = error_body(response).1.unwrap_or_default();
    let has = |part: &str| crate::base::text::find(&message, part).is_some();
    has("bucket") && (has("does not exist") || has("not found"))
}

pub(crate) fn failure(response: &HttpResponse, what: &(dyn std::fmt::Display + Sync)) -> StoreError {
    let (code, message) = error_body(response);
    http::failure(response, what, code, message.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::FailureKind;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn target_url(request: &HttpRequest) -> &str {
        &request.url
    }

    #[test]
    fn requests_address_objects_and_conditions() {
        let endpoint = Endpoint::parse("GCS", "http://127.0.0.1:4443").unwrap();
        let t = Target { endpoint: &endpoint, bucket: "b" };
        assert_eq!(target_url(&t.get("a/b c", None)), "http://127.0.0.1:4443/storage/v1/b/b/o/a%2Fb%20c?alt=media");
        assert_eq!(
            target_url(&t.delete("k", Some("17"))),
            "http://127.0.0.1:4443/storage/v1/b/b/o/k?ifGenerationMatch=17"
        );
        assert_eq!(
            target_url(&t.list("p/", Some("p/a"), None)),
            "http://127.0.0.1:4443/storage/v1/b/b/o?maxResults=1000&prefix=p%2F&startOffset=p%2Fa"
        );
        assert_eq!(
            target_url(&t.list("p/", Some("p/a"), Some("next"))),
            "http://127.0.0.1:4443/storage/v1/b/b/o?maxResults=1000&pageToken=next&prefix=p%2F"
        );
        let meta = WriteMeta::creating("tok".into());
        let put = t.put("k", b"{\"v\":1}", &Precondition::IfAbsent, &meta);
        assert_eq!(put.url, "http://127.0.0.1:4443/upload/storage/v1/b/b/o?ifGenerationMatch=0&uploadType=multipart");
        assert_eq!(put.header("content-type"), Some("multipart/related; boundary=fencepost_tok"));
        let body = String::from_utf8(put.body).unwrap();
        assert!(body.starts_with("--fencepost_tok\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{"));
        assert!(body.contains(r#""metadata":{"fencepost-token":"tok","fencepost-origin":"tok"},"name":"k""#), "{body}");
        assert!(body.ends_with("\r\n\r\n{\"v\":1}\r\n--fencepost_tok--\r\n"));
        let cas = t.put("k", b"", &Precondition::IfMatch("\"42\"".into()), &meta);
        assert!(cas.url.contains("ifGenerationMatch=42"));
    }

    #[test]
    fn a_boundary_never_occurs_in_the_body() {
        let meta = WriteMeta::creating("x".into());
        assert_eq!(boundary(b"--fencepost_x and fencepost_x_", &meta), "fencepost_x__");
    }

    #[test]
    fn answers_are_read() {
        let what = "GET \"k\"";
        let got = response(200, &[("x-goog-generation", "1700"), ("x-goog-meta-fencepost-token", "t1")], "{}");
        let object = read_get(got, &what).unwrap().unwrap();
        assert_eq!((object.etag.as_str(), object.meta.token.as_deref()), ("1700", Some("t1")));
        let missing = r#"{"error":{"code":404,"message":"No such object: b/k","errors":[{"reason":"notFound"}]}}"#;
        assert_eq!(read_get(response(404, &[], missing), &what).unwrap(), None);
        let no_bucket = r#"{"error":{"code":404,"message":"The specified bucket does not exist."}}"#;
        assert!(read_get(response(404, &[], no_bucket), &what).is_err());
        let written = response(200, &[], r#"{"name":"k","generation":"1701","metadata":{}}"#);
        assert_eq!(
            read_put(written, &Precondition::IfAbsent, &what).unwrap(),
            PutOutcome::Written { etag: "1701".into() }
        );
        let lost = response(412, &[], r#"{"error":{"code":412,"message":"Precondition failed"}}"#);
        assert_eq!(read_put(lost, &Precondition::IfAbsent, &what).unwrap(), PutOutcome::PreconditionFailed);
        // A 404 (a bare one, as an emulator answers) loses an If-Match upload whose object is gone;
        // a create-only upload can only get one for a missing bucket.
        let gone = || response(404, &[], r#"{"error":{"code":404,"message":"Not Found"}}"#);
        let if_match = Precondition::IfMatch("1700".into());
        assert_eq!(read_put(gone(), &if_match, &what).unwrap(), PutOutcome::PreconditionFailed);
        assert!(read_put(gone(), &Precondition::IfAbsent, &what).is_err());
        assert!(!read_delete(response(412, &[], ""), &what).unwrap());
        assert!(read_delete(response(204, &[], ""), &what).unwrap());
        let denied = r#"{"error":{"code":401,"message":"Invalid Credentials","errors":[{"reason":"authError"}]}}"#;
        let err = read_get(response(401, &[], denied), &what).unwrap_err();
        assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("authError")));
        assert_eq!(err.message, "GET \"k\": Invalid Credentials");
    }

    #[test]
    fn list_pages_are_read() {
        let body = r#"{"kind":"storage#objects","nextPageToken":"p/c","items":[
            {"name":"p/a","generation":"5","size":"2","updated":"2026-01-01T00:00:00.000Z"},
            {"name":"p/b","generation":"6"}]}"#;
        let page = read_list(response(200, &[], body), &"LIST").unwrap();
        assert_eq!(page.entries.len(), 2);
        assert_eq!((page.entries[0].etag.as_deref(), page.entries[0].size), (Some("5"), Some(2)));
        assert_eq!(page.entries[1].etag.as_deref(), Some("6"));
        assert_eq!(page.next.as_deref(), Some("p/c"));
        assert_eq!(
            read_list(response(200, &[], r#"{"kind":"storage#objects"}"#), &"LIST").unwrap(),
            ListPage::default()
        );
    }
}
