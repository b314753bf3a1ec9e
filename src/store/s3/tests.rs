//! Tests of the S3 store as a whole: config validation, request building for each operation and
//! precondition, response classification for each status, and key round-trips through a tiny
//! in-test S3 emulator. Signing, encoding and XML have their own tests beside their code.

use crate::base::sync::Lock;
use crate::base::sync::Shared;
use std::collections::{BTreeMap, VecDeque};

use futures::executor::block_on;

use super::sigv4::{EMPTY_PAYLOAD_SHA256, sha256_hex};
use super::*;
use crate::store::http::encode::percent_decode;
use crate::store::{FailureKind, PrefixStore};
use crate::store::{ObjectStore, Precondition, PutOutcome, StoreError, WriteMeta};
use crate::time::{ManualClock, Timestamp};
use async_trait::async_trait;

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SESSION: &str = "FwoGZXIvYXdzSESSIONTOKENEXAMPLE";

fn config(endpoint: &str) -> S3Config {
    S3Config::new(endpoint, "bucket", "us-east-1", "AKIAIOSFODNN7EXAMPLE", SECRET).unwrap()
}

fn at() -> Timestamp {
    Timestamp::parse_rfc3339("2026-01-02T03:04:05.678Z").unwrap()
}

fn meta(token: &str, history: &[&str]) -> WriteMeta {
    WriteMeta { token: Some(token.to_owned()), history: history.join(" "), origin: None }
}

fn response(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
    HttpResponse {
        status,
        headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        body: body.as_bytes().to_vec(),
    }
}

fn error_xml(code: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message><RequestId>R1</RequestId></Error>"
    )
}

// ---------------------------------------------------------------------------------------------
// Config

#[test]
fn accepts_usual_endpoints() {
    let cases = [
        ("http://127.0.0.1:9000", "127.0.0.1:9000", ""),
        ("https://s3.us-east-1.amazonaws.com", "s3.us-east-1.amazonaws.com", ""),
        ("https://S3.Example.COM:443/", "s3.example.com", ""),
        ("http://localhost:80", "localhost", ""),
        ("HTTP://localhost:8333/", "localhost:8333", ""),
        ("http://[::1]:9000", "[::1]:9000", ""),
        ("https://acct.r2.cloudflarestorage.com", "acct.r2.cloudflarestorage.com", ""),
        ("http://proxy.local:8080/s3/v1/", "proxy.local:8080", "/s3/v1"),
        ("  https://h  ", "h", ""),
    ];
    for (endpoint, host, path) in cases {
        let config = config(endpoint);
        assert_eq!(config.host(), host, "{endpoint}");
        assert_eq!(config.parsed.path, path, "{endpoint}");
        assert_eq!(config.endpoint(), endpoint);
    }
}

#[test]
fn rejects_bad_endpoints() {
    for endpoint in [
        "",
        "s3.amazonaws.com",
        "ftp://h",
        "http://",
        "http:///path",
        "http://user:pw@h",
        "http://h?x=1",
        "http://h/#frag",
        "http://h:99999",
        "http://h:",
        "http://h:x",
        "http://h/a b",
        "http://h/a%20b",
        "http://h/a//b",
        "http://h/./b",
        "http://[::1",
        "http://[]:80",
        "http://h_h.com",
    ] {
        let err = S3Config::new(endpoint, "bucket", "us-east-1", "AKID", SECRET).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{endpoint}: {err:?}");
    }
    // The message names the endpoint without the credentials in it.
    let err =
        S3Config::new("https://user:topsecret@h.example/base", "bucket", "us-east-1", "AKID", SECRET).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains("topsecret") && !message.contains("user:"), "{message}");
    assert!(message.contains("https://…@h.example/base"), "{message}");
    // Whatever else is wrong with it, and whatever the password holds.
    for endpoint in [
        "https://user:top/secret@h.example",
        "https://user:top?secret@h",
        "https://user:top#secret@h",
        "s3://user:topsecret@h",
    ] {
        let message = S3Config::new(endpoint, "bucket", "us-east-1", "AKID", SECRET).unwrap_err().to_string();
        assert!(!message.contains("secret") && message.contains("user info"), "{endpoint}: {message}");
    }
}

#[test]
fn validates_bucket_region_and_keys() {
    let invalid = |r: Result<S3Config>| assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    invalid(S3Config::new("http://h", "", "us-east-1", "AKID", SECRET));
    invalid(S3Config::new("http://h", "a/b", "us-east-1", "AKID", SECRET));
    invalid(S3Config::new("http://h", "a b", "us-east-1", "AKID", SECRET));
    invalid(S3Config::new("http://h", "..", "us-east-1", "AKID", SECRET));
    invalid(S3Config::new("http://h", "bucket", "", "AKID", SECRET));
    invalid(S3Config::new("http://h", "bucket", "us/east", "AKID", SECRET));
    invalid(S3Config::new("http://h", "bucket", "us-east-1", "", SECRET));
    invalid(S3Config::new("http://h", "bucket", "us-east-1", "AK/ID", SECRET));
    invalid(
        S3Config::builder("http://h", "bucket", "us-east-1", "AKID", SECRET).session_token(Some("a\nb".into())).build(),
    );
    invalid(
        S3Config::builder("http://127.0.0.1:9000", "bucket", "us-east-1", "AKID", SECRET)
            .addressing(Addressing::VirtualHosted)
            .build(),
    );
    invalid(
        S3Config::builder("https://h", "Bucket_1", "us-east-1", "AKID", SECRET)
            .addressing(Addressing::VirtualHosted)
            .build(),
    );
    // Path style tolerates what some non-AWS servers allow.
    S3Config::new("http://h", "Bucket_1", "auto", "AKID", SECRET).unwrap();
}

#[test]
fn builder_sets_options() {
    let config = S3Config::builder("https://s3.amazonaws.com", "examplebucket", "us-east-1", "AKID", SECRET)
        .session_token(Some(SESSION.into()))
        .addressing(Addressing::VirtualHosted)
        .build()
        .unwrap();
    assert_eq!(config.addressing(), Addressing::VirtualHosted);
    assert_eq!(config.host(), "examplebucket.s3.amazonaws.com");
    assert_eq!((config.bucket(), config.region(), config.access_key_id()), ("examplebucket", "us-east-1", "AKID"));
    let empty_token =
        S3Config::builder("http://h", "b", "r", "AKID", SECRET).session_token(Some(String::new())).build().unwrap();
    assert_eq!(empty_token.session_token, None);
}

#[test]
fn debug_never_shows_secrets() {
    let config =
        S3Config::builder("http://h", "b", "r", "AKID", SECRET).session_token(Some(SESSION.into())).build().unwrap();
    let shown = format!("{config:?}");
    assert!(!shown.contains(SECRET) && !shown.contains(SESSION), "{shown}");
    assert!(shown.contains("AKID") && shown.contains("[redacted]"));
    let request = config.get_object_request("k", None, at());
    let signature = request.header("authorization").unwrap().rsplit_once("Signature=").unwrap().1.to_owned();
    let shown = format!("{request:?}");
    assert!(!shown.contains(&signature) && !shown.contains(SESSION) && !shown.contains("Signature="), "{shown}");
    let store =
        S3Store::with_transport(config, Shared::new(Scripted::default()), Shared::new(ManualClock::starting_2026()));
    let shown = format!("{store:?}");
    assert!(!shown.contains(SECRET) && !shown.contains(SESSION), "{shown}");
}

// ---------------------------------------------------------------------------------------------
// Request building

#[test]
fn object_urls_in_both_addressing_styles() {
    let path = S3Config::builder("http://127.0.0.1:9000", "bucket", "us-east-1", "AKID", SECRET).build().unwrap();
    assert_eq!(path.get_object_request("app/jobs/1", None, at()).url, "http://127.0.0.1:9000/bucket/app/jobs/1");
    let with_base = config("https://proxy:8443/s3/");
    assert_eq!(with_base.get_object_request("k", None, at()).url, "https://proxy:8443/s3/bucket/k");
    let virtual_hosted =
        S3Config::builder("https://s3.eu-west-1.amazonaws.com:443", "my-bucket", "eu-west-1", "AKID", SECRET)
            .addressing(Addressing::VirtualHosted)
            .build()
            .unwrap();
    assert_eq!(
        virtual_hosted.get_object_request("a b", None, at()).url,
        "https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b"
    );
    assert_eq!(
        virtual_hosted.list_objects_v2_request("", None, None, at()).url,
        "https://my-bucket.s3.eu-west-1.amazonaws.com/?list-type=2"
    );
    assert_eq!(
        path.list_objects_v2_request("app/", None, None, at()).url,
        "http://127.0.0.1:9000/bucket?list-type=2&prefix=app%2F"
    );
}

#[test]
fn tricky_keys_are_percent_encoded_in_the_path() {
    let config = config("http://h:9000");
    let cases = [
        ("a b+c%d=e&f?g#h~i", "/bucket/a%20b%2Bc%25d%3De%26f%3Fg%23h~i"),
        ("ünï/😀", "/bucket/%C3%BCn%C3%AF/%F0%9F%98%80"),
        ("dir/sub/leaf", "/bucket/dir/sub/leaf"),
        ("a//b", "/bucket/a//b"),
    ];
    for (key, path) in cases {
        assert_eq!(config.canonical_uri(Some(key)), path);
        assert_eq!(config.get_object_request(key, None, at()).url, format!("http://h:9000{path}"));
    }
}

fn header_names(request: &HttpRequest) -> Vec<&str> {
    request.headers.iter().map(|(n, _)| n.as_str()).collect()
}

fn signed_header_list(request: &HttpRequest) -> String {
    let auth = request.header("authorization").unwrap();
    auth.split("SignedHeaders=").nth(1).unwrap().split(',').next().unwrap().to_owned()
}

#[test]
fn get_request_is_signed_and_uncached() {
    let request = config("http://h:9000").get_object_request("k", None, at());
    assert_eq!(request.method, "GET");
    assert!(request.body.is_empty());
    assert_eq!(header_names(&request), ["cache-control", "authorization", "x-amz-content-sha256", "x-amz-date"]);
    assert_eq!(request.header("cache-control"), Some("no-cache"));
    assert_eq!(request.header("x-amz-content-sha256"), Some(EMPTY_PAYLOAD_SHA256));
    assert_eq!(request.header("x-amz-date"), Some("20260102T030405Z"));
    let auth = request.header("authorization").unwrap();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260102/us-east-1/s3/aws4_request,"),
        "{auth}"
    );
    assert_eq!(signed_header_list(&request), "cache-control;host;x-amz-content-sha256;x-amz-date");
}

#[test]
fn signature_covers_exactly_what_is_sent() {
    // Recompute the signature from the request as sent (URL path and query, headers, body hash):
    // what a server does. Any mismatch between URL and canonical request would show here.
    let config = S3Config::builder("http://h:9000", "bucket", "us-east-1", "AKIAIOSFODNN7EXAMPLE", SECRET)
        .session_token(Some(SESSION.into()))
        .build()
        .unwrap();
    let requests = [
        config.get_object_request("a b+c%d=e&f?g#h~i/😀", None, at()),
        config
            .put_object_request("k", b"{}", &Precondition::IfMatch("\"e1\"".into()), &meta("tok", &["h1", "h2"]), at())
            .unwrap(),
        config.delete_object_request("k", at()),
        config.list_objects_v2_request("app/x y", None, Some("tok/+="), at()),
    ];
    for request in requests {
        let without_scheme = request.url.strip_prefix("http://h:9000").unwrap();
        let (path, query) = without_scheme.split_once('?').unwrap_or((without_scheme, ""));
        let mut to_sign = vec![("host".to_owned(), "h:9000".to_owned())];
        to_sign.extend(
            request
                .headers
                .iter()
                .filter(|(n, _)| {
                    !matches!(
                        n.as_str(),
                        "authorization" | "x-amz-date" | "x-amz-content-sha256" | "x-amz-security-token"
                    )
                })
                .cloned(),
        );
        let body_hash = sha256_hex(&request.body);
        assert_eq!(request.header("x-amz-content-sha256"), Some(body_hash.as_str()));
        let expected = sigv4::sign(
            &sigv4::RequestToSign {
                method: request.method,
                canonical_uri: path,
                canonical_query: query,
                headers: &to_sign,
                payload_sha256: &body_hash,
            },
            sigv4::Scope { region: "us-east-1", service: "s3" },
            &sigv4::Credentials {
                access_key_id: "AKIAIOSFODNN7EXAMPLE",
                secret_access_key: SECRET,
                session_token: Some(SESSION),
            },
            at(),
        );
        assert_eq!(request.header("authorization"), Some(expected.authorization()), "{request:?}");
        assert_eq!(request.header("x-amz-security-token"), Some(SESSION));
    }
}

#[test]
fn put_request_for_each_precondition() {
    let config = config("http://h:9000");
    let body = br#"{"a":1}"#;
    let plain = config.put_object_request("k", body, &Precondition::None, &WriteMeta::default(), at()).unwrap();
    assert_eq!(plain.method, "PUT");
    assert_eq!(plain.body, body);
    assert_eq!(plain.header("content-type"), Some("application/json"));
    assert_eq!(plain.header("x-amz-content-sha256"), Some(sha256_hex(body).as_str()));
    assert_eq!((plain.header("if-none-match"), plain.header("if-match")), (None, None));
    assert_eq!((plain.header(request::TOKEN_HEADER), plain.header(request::HISTORY_HEADER)), (None, None));

    let absent = config.put_object_request("k", body, &Precondition::IfAbsent, &meta("t1", &[]), at()).unwrap();
    assert_eq!((absent.header("if-none-match"), absent.header("if-match")), (Some("*"), None));
    assert_eq!(absent.header("x-amz-meta-fencepost-token"), Some("t1"));
    assert_eq!(absent.header("x-amz-meta-fencepost-history"), None);
    assert_eq!(
        signed_header_list(&absent),
        "content-type;host;if-none-match;x-amz-content-sha256;x-amz-date;x-amz-meta-fencepost-token"
    );

    for given in ["abc123", "\"abc123\"", "W/\"abc123\""] {
        let cas = config
            .put_object_request("k", body, &Precondition::IfMatch(given.into()), &meta("t2", &["t1", "t0"]), at())
            .unwrap();
        assert_eq!((cas.header("if-match"), cas.header("if-none-match")), (Some("\"abc123\""), None), "{given}");
        assert_eq!(cas.header("x-amz-meta-fencepost-history"), Some("t1 t0"));
    }
}

#[test]
fn put_refuses_metadata_that_cannot_be_a_header() {
    let err = config("http://h")
        .put_object_request("k", b"", &Precondition::None, &meta("bad\ntoken", &[]), at())
        .unwrap_err();
    assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("InvalidMetadata")));
}

#[test]
fn delete_and_list_requests() {
    let config = S3Config::builder("http://h", "bucket", "us-east-1", "AKID", SECRET).build().unwrap();
    let delete = config.delete_object_request("app/k", at());
    assert_eq!((delete.method, delete.url.as_str()), ("DELETE", "http://h/bucket/app/k"));
    assert_eq!(delete.header("x-amz-content-sha256"), Some(EMPTY_PAYLOAD_SHA256));
    assert_eq!(delete.header("cache-control"), None);

    let first = config.list_objects_v2_request("app/jobs/", None, None, at());
    assert_eq!(first.url, "http://h/bucket?list-type=2&prefix=app%2Fjobs%2F");
    let next =
        config.list_objects_v2_request("app/", None, Some("1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="), at());
    assert_eq!(
        next.url,
        "http://h/bucket?continuation-token=1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D&list-type=2&prefix=app%2F"
    );
    assert_eq!(next.header("cache-control"), Some("no-cache"));
}

#[test]
fn signing_time_comes_from_the_clock() {
    let clock = Shared::new(ManualClock::new(at()));
    let transport = Shared::new(Scripted::default());
    transport.push(Ok(response(404, &[], "")));
    transport.push(Ok(response(404, &[], "")));
    let store = S3Store::with_transport(config("http://h"), transport.clone(), clock.clone());
    block_on(store.get("k")).unwrap();
    clock.advance(3600.0);
    block_on(store.get("k")).unwrap();
    let sent = transport.sent.lock();
    assert_eq!(sent[0].header("x-amz-date"), Some("20260102T030405Z"));
    assert_eq!(sent[1].header("x-amz-date"), Some("20260102T040405Z"));
}

// ---------------------------------------------------------------------------------------------
// Response classification (through the store, with a scripted transport)

/// Answers each request with the next scripted result and records what was sent.
#[derive(Default)]
struct Scripted {
    replies: Lock<VecDeque<std::result::Result<HttpResponse, String>>>,
    sent: Lock<Vec<HttpRequest>>,
}

impl Scripted {
    fn push(&self, reply: std::result::Result<HttpResponse, String>) {
        self.replies.lock().push_back(reply);
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl HttpTransport for Scripted {
    async fn send(&self, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError> {
        self.sent.lock().push(request);
        self.replies.lock().pop_front().unwrap_or_else(|| Err("no scripted reply".into())).map_err(Into::into)
    }
}

fn store_answering(
    replies: Vec<std::result::Result<HttpResponse, String>>,
) -> (Shared<dyn ObjectStore>, Shared<Scripted>) {
    let transport = Shared::new(Scripted::default());
    for reply in replies {
        transport.push(reply);
    }
    let config = S3Config::builder("http://h:9000", "bucket", "us-east-1", "AKID", SECRET)
        .session_token(Some(SESSION.into()))
        .build()
        .unwrap();
    let store = S3Store::with_transport(config, transport.clone(), Shared::new(ManualClock::starting_2026()));
    // Under a store prefix, as a shared bucket is used: the requests show where keys really go.
    (Shared::new(PrefixStore::new(Shared::new(store), "app").unwrap()), transport)
}

fn put_with(precondition: Precondition, reply: std::result::Result<HttpResponse, String>) -> StoreResult<PutOutcome> {
    let (store, _) = store_answering(vec![reply]);
    block_on(store.put("k", b"{}", &precondition, &meta("tok", &[])))
}

fn all_preconditions() -> [Precondition; 3] {
    [Precondition::None, Precondition::IfAbsent, Precondition::IfMatch("e1".into())]
}

#[test]
fn get_reads_body_etag_and_write_meta() {
    let (store, transport) = store_answering(vec![Ok(response(
        200,
        &[
            ("etag", "\"d41d8cd98f00b204e9800998ecf8427e\""),
            ("x-amz-meta-fencepost-token", "tok3"),
            ("X-Amz-Meta-Fencepost-History", "tok2 tok1"),
            ("content-type", "application/json"),
        ],
        "{\"a\":1}",
    ))]);
    let object = block_on(store.get("k")).unwrap().unwrap();
    assert_eq!(object.body, b"{\"a\":1}");
    assert_eq!(object.etag, "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(object.meta, meta("tok3", &["tok2", "tok1"]));
    assert_eq!(transport.sent.lock()[0].url, "http://h:9000/bucket/app/k");
}

#[test]
fn get_without_metadata_has_empty_write_meta() {
    let (store, _) = store_answering(vec![Ok(response(200, &[("etag", "\"e\"")], "x"))]);
    assert_eq!(block_on(store.get("k")).unwrap().unwrap().meta, WriteMeta::default());
}

#[test]
fn get_missing_key_is_none_but_missing_bucket_is_fatal() {
    let (store, _) = store_answering(vec![
        Ok(response(404, &[], &error_xml("NoSuchKey", "The specified key does not exist."))),
        Ok(response(404, &[], "")),
        Ok(response(404, &[], &error_xml("NoSuchBucket", "The specified bucket does not exist"))),
        Ok(response(404, &[], "<html><body>Not Found</body></html>")),
        Ok(response(404, &[], "<html><body>Not Found</body></html>")),
    ]);
    assert_eq!(block_on(store.get("k")).unwrap(), None);
    assert_eq!(block_on(store.get("k")).unwrap(), None);
    let err = block_on(store.get("k")).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref(), err.status), (FailureKind::Fatal, Some("NoSuchBucket"), Some(404)));
    // An endpoint or proxy that is not S3 answering 404 with a page of its own: no empty bucket.
    let err = block_on(store.get("k")).unwrap_err();
    assert_eq!((err.kind, err.status), (FailureKind::Fatal, Some(404)));
    let err = block_on(store.delete("k")).unwrap_err();
    assert_eq!((err.kind, err.status), (FailureKind::Fatal, Some(404)));
}

#[test]
fn get_without_etag_is_malformed() {
    let (store, _) = store_answering(vec![Ok(response(200, &[], "x"))]);
    let err = block_on(store.get("k")).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("MalformedResponse")));
}

#[test]
fn put_success_returns_the_normalised_etag() {
    for precondition in all_preconditions() {
        let outcome =
            put_with(precondition, Ok(response(200, &[("ETag", "\"9a0364b9e99bb480dd25e1f0284c8555\"")], "")));
        assert_eq!(outcome.unwrap(), PutOutcome::Written { etag: "9a0364b9e99bb480dd25e1f0284c8555".into() });
    }
}

#[test]
fn put_success_without_etag_is_indeterminate() {
    let err = put_with(Precondition::IfAbsent, Ok(response(200, &[], ""))).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Indeterminate, Some("MissingETag")));
}

#[test]
fn conditional_put_loses_on_412_and_on_404_no_such_key() {
    for precondition in [Precondition::IfAbsent, Precondition::IfMatch("e1".into())] {
        let lost = put_with(
            precondition.clone(),
            Ok(response(
                412,
                &[],
                &error_xml("PreconditionFailed", "At least one of the pre-conditions you specified did not hold"),
            )),
        );
        assert_eq!(lost.unwrap(), PutOutcome::PreconditionFailed);
        let lost = put_with(
            precondition.clone(),
            Ok(response(404, &[], &error_xml("NoSuchKey", "The specified key does not exist."))),
        );
        assert_eq!(lost.unwrap(), PutOutcome::PreconditionFailed);
        let lost = put_with(precondition.clone(), Ok(response(412, &[], "")));
        assert_eq!(lost.unwrap(), PutOutcome::PreconditionFailed);
        let err = put_with(precondition.clone(), Ok(response(404, &[], &error_xml("NoSuchBucket", "no bucket"))))
            .unwrap_err();
        assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("NoSuchBucket")));
        // A 404 that is not S3's NoSuchKey (a wrong endpoint, a proxy's page) is no lost race.
        for body in ["", "<html><body>Not Found</body></html>"] {
            let err = put_with(precondition.clone(), Ok(response(404, &[], body))).unwrap_err();
            assert_eq!((err.kind, err.status), (FailureKind::Fatal, Some(404)), "{body:?}");
        }
    }
}

#[test]
fn unconditional_put_never_reports_a_lost_race() {
    for status in [404, 412] {
        let err = put_with(Precondition::None, Ok(response(status, &[], ""))).unwrap_err();
        assert_eq!((err.kind, err.status), (FailureKind::Fatal, Some(status)));
    }
}

#[test]
fn status_classification_for_every_operation() {
    let table: &[(u16, &str, FailureKind, Option<&str>)] = &[
        (
            409,
            &error_xml("ConditionalRequestConflict", "A conflicting conditional operation is currently in progress"),
            FailureKind::ConditionalConflict,
            Some("ConditionalRequestConflict"),
        ),
        (
            409,
            &error_xml("OperationAborted", "A conflicting conditional operation is in progress"),
            FailureKind::Transient,
            Some("OperationAborted"),
        ),
        (409, "", FailureKind::Transient, None),
        (429, &error_xml("SlowDown", "Please reduce your request rate."), FailureKind::Transient, Some("SlowDown")),
        (503, &error_xml("SlowDown", "Please reduce your request rate."), FailureKind::Transient, Some("SlowDown")),
        (503, "<html>Service Unavailable</html>", FailureKind::Transient, None),
        (408, "", FailureKind::Transient, None),
        (
            400,
            &error_xml("RequestTimeout", "Your socket connection to the server was not read from"),
            FailureKind::Transient,
            Some("RequestTimeout"),
        ),
        (
            500,
            &error_xml("InternalError", "We encountered an internal error. Please try again."),
            FailureKind::Indeterminate,
            Some("InternalError"),
        ),
        (502, "<html><body>Bad Gateway</body></html>", FailureKind::Indeterminate, None),
        (504, "", FailureKind::Indeterminate, None),
        (507, "", FailureKind::Indeterminate, None),
        (
            403,
            &error_xml(
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.",
            ),
            FailureKind::Fatal,
            Some("SignatureDoesNotMatch"),
        ),
        (403, &error_xml("AccessDenied", "Access Denied"), FailureKind::Fatal, Some("AccessDenied")),
        (
            403,
            &error_xml(
                "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large.",
            ),
            FailureKind::Fatal,
            Some("RequestTimeTooSkewed"),
        ),
        (400, &error_xml("InvalidArgument", "bad"), FailureKind::Fatal, Some("InvalidArgument")),
        (
            400,
            &error_xml("AuthorizationHeaderMalformed", "wrong region"),
            FailureKind::Fatal,
            Some("AuthorizationHeaderMalformed"),
        ),
        (405, "", FailureKind::Fatal, None),
        (
            411,
            &error_xml("MissingContentLength", "You must provide the Content-Length HTTP header."),
            FailureKind::Fatal,
            Some("MissingContentLength"),
        ),
        (301, &error_xml("PermanentRedirect", "use the other endpoint"), FailureKind::Fatal, Some("PermanentRedirect")),
    ];
    for (status, body, kind, code) in table {
        let reply = || Ok(response(*status, &[], body));
        let mut errors = vec![];
        for precondition in all_preconditions() {
            errors.push(put_with(precondition, reply()).unwrap_err());
        }
        let (store, _) = store_answering(vec![reply(), reply(), reply()]);
        errors.push(block_on(store.get("k")).unwrap_err());
        errors.push(block_on(store.delete("k")).unwrap_err());
        errors.push(block_on(store.list("")).unwrap_err());
        for err in errors {
            assert_eq!(
                (err.kind, err.code.as_deref(), err.status),
                (*kind, *code, Some(*status)),
                "{status} {body}: {err:?}"
            );
            assert!(!err.message.is_empty());
        }
    }
}

#[test]
fn transport_errors_are_indeterminate() {
    for precondition in all_preconditions() {
        let err = put_with(precondition, Err("TypeError: fetch failed (cause: ECONNRESET)".into())).unwrap_err();
        assert_eq!((err.kind, err.code, err.status), (FailureKind::Indeterminate, None, None));
        assert!(err.message.contains("ECONNRESET"), "{}", err.message);
    }
    let (store, _) = store_answering(vec![Err("reset".into()), Err("reset".into()), Err("reset".into())]);
    assert_eq!(block_on(store.get("k")).unwrap_err().kind, FailureKind::Indeterminate);
    assert_eq!(block_on(store.delete("k")).unwrap_err().kind, FailureKind::Indeterminate);
    assert_eq!(block_on(store.list("")).unwrap_err().kind, FailureKind::Indeterminate);
}

#[test]
fn the_server_time_is_the_latest_response_date() {
    let (store, _) = store_answering(vec![
        Ok(response(404, &[("date", "Thu, 01 Jan 2026 00:10:00 GMT")], "")),
        Ok(response(404, &[], "")),
        Ok(response(404, &[("Date", "Thu, 01 Jan 2026 00:10:05 GMT")], "")),
        Err("reset".into()),
    ]);
    assert_eq!(store.server_time(), None, "no response yet");
    block_on(store.get("k")).unwrap();
    let ten_past = Timestamp::parse_rfc3339("2026-01-01T00:10:00.5Z");
    assert_eq!(store.server_time(), ten_past, "mid-second of the truncated date");
    block_on(store.get("k")).unwrap();
    assert_eq!(store.server_time(), None, "never an older response's date");
    block_on(store.get("k")).unwrap();
    assert_eq!(store.server_time(), Timestamp::parse_rfc3339("2026-01-01T00:10:05.5Z"));
    block_on(store.get("k")).unwrap_err();
    assert_eq!(store.server_time(), None);
}

#[test]
fn the_timeout_is_validated() {
    let build = |t: f64| S3Config::builder("http://h", "b", "r", "AKID", SECRET).timeout(t).build();
    assert_eq!(config("http://h").timeout(), DEFAULT_TIMEOUT);
    assert_eq!(build(0.5).unwrap().timeout(), 0.5);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(build(bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
}

/// PUTs are never answered; GETs find nothing.
struct PutsHang;

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl HttpTransport for PutsHang {
    async fn send(&self, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError> {
        if request.method == "PUT" {
            std::future::pending::<()>().await;
        }
        Ok(response(404, &[], &error_xml("NoSuchKey", "none")))
    }
}

/// Drive `f` on a plain manual clock, timer by timer, until it settles; the time it took.
fn settle_on<T: 'static>(clock: &ManualClock, f: impl std::future::Future<Output = T> + 'static) -> (T, f64) {
    use futures::task::LocalSpawnExt;
    let mut pool = futures::executor::LocalPool::new();
    let out = Shared::new(Lock::new(None));
    let slot = out.clone();
    pool.spawner().spawn_local(async move { *slot.lock() = Some(f.await) }).unwrap();
    let start = clock.now().unwrap();
    let limit = start.plus_secs(3600.0);
    loop {
        pool.run_until_stalled();
        if let Some(v) = out.lock().take() {
            return (v, start.secs_until(clock.now().unwrap()));
        }
        assert!(clock.step_until(limit), "still pending after an hour");
    }
}

#[test]
fn an_unanswered_attempt_is_a_transport_error_after_the_timeout() {
    let clock = ManualClock::starting_2026();
    let config = S3Config::builder("http://h:9000", "bucket", "us-east-1", "AKID", SECRET).timeout(2.0).build();
    let store = S3Store::with_transport(config.unwrap(), Shared::new(PutsHang), Shared::new(clock.clone()));
    let (err, took) =
        settle_on(&clock, async move { store.put("k", b"x", &Precondition::IfAbsent, &meta("t", &[])).await });
    let err = err.unwrap_err();
    assert_eq!((err.kind, took), (FailureKind::Indeterminate, 2.0));
    assert!(err.message.contains("no answer within 2 s"), "{}", err.message);
    assert_eq!(clock.pending_timers(), 0);
}

#[test]
fn a_put_that_never_answers_settles_within_timeout_times_attempts() {
    let clock = ManualClock::starting_2026();
    let config = S3Config::builder("http://h:9000", "bucket", "us-east-1", "AKID", SECRET).timeout(2.0).build();
    let store = S3Store::with_transport(config.unwrap(), Shared::new(PutsHang), Shared::new(clock.clone()));
    let retry = crate::RetryPolicy { max_attempts: 3, base_delay: 0.0, max_delay: 0.0 };
    let objects = crate::Objects::new(Shared::new(store), Shared::new(clock.clone()), retry).unwrap();
    let (result, took) = settle_on(&clock, async move { objects.put("k", b"x", Precondition::IfAbsent).await });
    // Each timed-out put is read back (nothing there), then tried again; the budget runs out. A
    // timed-out put may still land later, so the outcome is not "nothing was written".
    assert!(matches!(result, Err(Error::AmbiguousWrite { .. })), "{result:?}");
    assert_eq!(took, 6.0, "3 attempts x 2 s");
}

#[test]
fn error_message_names_the_operation_and_the_server_message() {
    let err =
        put_with(Precondition::None, Ok(response(403, &[], &error_xml("AccessDenied", "Access Denied")))).unwrap_err();
    // The key as it is in the bucket (the store prefix included): what an operator looks for there.
    assert_eq!(err.message, "PUT \"app/k\": Access Denied");
    let failure = err.into_failure();
    assert_eq!(failure.to_string(), "storage error AccessDenied (HTTP 403): PUT \"app/k\": Access Denied");
}

#[test]
fn errors_never_carry_secrets_or_the_signature() {
    // The clock stands still, so every `get("k")` is the very same signed request.
    let (store, transport) = store_answering(vec![Err("first".into())]);
    let _ = block_on(store.get("k"));
    let sent = transport.sent.lock()[0].clone();
    let signature = sent.header("authorization").unwrap().rsplit_once("Signature=").unwrap().1.to_owned();
    let everything = format!("{} {:?} {SECRET} {SESSION}", sent.url, sent.headers);
    assert!(everything.contains(&signature));
    // A chatty server echoing the whole request and more, then a transport doing the same.
    transport.push(Ok(response(403, &[], &error_xml("SignatureDoesNotMatch", &xml_escape(&everything)))));
    transport.push(Err(format!("socket closed while sending {everything}")));
    for _ in 0..2 {
        let err = block_on(store.get("k")).unwrap_err();
        assert_eq!(transport.sent.lock().last().unwrap().header("authorization"), sent.header("authorization"));
        let shown = format!("{err:?} {}", err.clone().into_failure());
        for secret in [SECRET, SESSION, signature.as_str()] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}

#[test]
fn long_error_text_is_clipped() {
    let page = format!("<html>{}</html>", "x".repeat(10_000));
    let err = put_with(Precondition::None, Ok(response(502, &[], &page))).unwrap_err();
    assert!(err.message.chars().count() <= 401, "{}", err.message.len());
}

#[test]
fn delete_succeeds_on_204_200_and_404() {
    let (store, transport) = store_answering(vec![
        Ok(response(204, &[], "")),
        Ok(response(200, &[], "")),
        Ok(response(404, &[], &error_xml("NoSuchKey", "gone"))),
    ]);
    for _ in 0..3 {
        block_on(store.delete("k")).unwrap();
    }
    assert!(transport.sent.lock().iter().all(|r| r.method == "DELETE" && r.url == "http://h:9000/bucket/app/k"));
}

fn list_page(keys: &[&str], next: Option<&str>) -> String {
    let contents: String = keys
        .iter()
        .map(|k| {
            format!("<Contents><Key>{}</Key><Size>1</Size></Contents>", k.replace('&', "&amp;").replace('<', "&lt;"))
        })
        .collect();
    let (truncated, token) = match next {
        Some(t) => ("true", format!("<NextContinuationToken>{t}</NextContinuationToken>")),
        None => ("false", String::new()),
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><IsTruncated>{truncated}</IsTruncated>{token}{contents}</ListBucketResult>"
    )
}

#[test]
fn list_follows_every_page_and_strips_the_store_prefix() {
    let (store, transport) = store_answering(vec![
        Ok(response(200, &[], &list_page(&["app/jobs/1", "app/jobs/2"], Some("tok/1+=")))),
        Ok(response(200, &[], &list_page(&["app/jobs/3", "app/jobs/a&b"], Some("tok2")))),
        Ok(response(200, &[], &list_page(&["app/jobs/ü"], None))),
    ]);
    let keys = block_on(store.list("jobs/")).unwrap();
    assert_eq!(keys, ["jobs/1", "jobs/2", "jobs/3", "jobs/a&b", "jobs/ü"]);
    let urls: Vec<String> = transport.sent.lock().iter().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        [
            "http://h:9000/bucket?list-type=2&prefix=app%2Fjobs%2F",
            "http://h:9000/bucket?continuation-token=tok%2F1%2B%3D&list-type=2&prefix=app%2Fjobs%2F",
            "http://h:9000/bucket?continuation-token=tok2&list-type=2&prefix=app%2Fjobs%2F",
        ]
    );
}

#[test]
fn list_sorts_and_ignores_keys_outside_the_prefix() {
    let (store, _) = store_answering(vec![Ok(response(
        200,
        &[],
        &list_page(&["app/b", "other/x", "app/a", "app/b", "apple"], None),
    ))]);
    assert_eq!(block_on(store.list("")).unwrap(), ["a", "b"]);
}

#[test]
fn list_refuses_endless_or_broken_pagination() {
    let (store, _) =
        store_answering(vec![Ok(response(200, &[], &list_page(&["app/a"], None).replace("false", "true")))]);
    let err = block_on(store.list("")).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("MalformedResponse")));
    let (store, _) = store_answering(vec![
        Ok(response(200, &[], &list_page(&["app/a"], Some("same")))),
        Ok(response(200, &[], &list_page(&["app/b"], Some("same")))),
    ]);
    let err = block_on(store.list("")).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("MalformedResponse")));
    let (store, _) = store_answering(vec![Ok(response(200, &[], "<ListBucketResult><Contents><Key>app/a"))]);
    let err = block_on(store.list("")).unwrap_err();
    assert_eq!((err.kind, err.code.as_deref(), err.status), (FailureKind::Fatal, Some("MalformedResponse"), Some(200)));
}

// ---------------------------------------------------------------------------------------------
// Round trips through a tiny S3 emulator: what the server decodes is what we meant.

/// Decodes requests the way an S3 server does (percent-decoding path and query), keeps objects in
/// a map, and answers with real S3 shapes. Conditional puts behave as on AWS.
#[derive(Default)]
struct Emulator {
    objects: Lock<BTreeMap<String, EmulatedObject>>,
    page_size: usize,
}

/// Body, quoted ETag, `x-amz-meta-*` headers.
type EmulatedObject = (Vec<u8>, String, Vec<(String, String)>);

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl HttpTransport for Emulator {
    async fn send(&self, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError> {
        let rest = request.url.strip_prefix("http://h:9000/bucket").unwrap();
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        // Every byte outside the unreserved set must arrive escaped, or a server would misread it.
        assert!(path.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b)), "{path}");
        let key = percent_decode(path.strip_prefix('/').unwrap_or(path));
        let mut objects = self.objects.lock();
        let etag_of = |body: &[u8]| format!("\"{}\"", crate::store::content_etag(body));
        Ok(match (request.method, key.is_empty()) {
            ("GET", true) => {
                let params: BTreeMap<String, String> = query
                    .split('&')
                    .filter_map(|p| p.split_once('='))
                    .map(|(n, v)| (percent_decode(n), percent_decode(v)))
                    .collect();
                let prefix = params.get("prefix").cloned().unwrap_or_default();
                let after = params.get("continuation-token").cloned();
                let matching: Vec<&String> = objects
                    .keys()
                    .filter(|k| k.starts_with(&prefix) && after.as_ref().is_none_or(|a| *k > a))
                    .collect();
                let page: Vec<&String> = matching.iter().take(self.page_size).copied().collect();
                let next = if matching.len() > page.len() { page.last().map(|k| k.as_str()) } else { None };
                let body = format!(
                    "<ListBucketResult><IsTruncated>{}</IsTruncated>{}{}</ListBucketResult>",
                    next.is_some(),
                    next.map(|t| format!("<NextContinuationToken>{}</NextContinuationToken>", xml_escape(t)))
                        .unwrap_or_default(),
                    page.iter()
                        .map(|k| format!("<Contents><Key>{}</Key></Contents>", xml_escape(k)))
                        .collect::<String>()
                );
                response(200, &[], &body)
            }
            ("GET", false) => match objects.get(&key) {
                Some((body, etag, meta)) => {
                    let mut headers = vec![("etag".to_owned(), etag.clone())];
                    headers.extend(meta.iter().cloned());
                    HttpResponse { status: 200, headers, body: body.clone() }
                }
                None => response(404, &[], &error_xml("NoSuchKey", "The specified key does not exist.")),
            },
            ("PUT", false) => {
                let existing = objects.get(&key).map(|(_, etag, _)| etag.clone());
                if request.header("if-none-match") == Some("*") && existing.is_some() {
                    return Ok(response(
                        412,
                        &[],
                        &error_xml(
                            "PreconditionFailed",
                            "At least one of the pre-conditions you specified did not hold",
                        ),
                    ));
                }
                if let Some(wanted) = request.header("if-match") {
                    match existing {
                        None => {
                            return Ok(response(
                                404,
                                &[],
                                &error_xml("NoSuchKey", "The specified key does not exist."),
                            ));
                        }
                        Some(etag) if etag != wanted => {
                            return Ok(response(412, &[], &error_xml("PreconditionFailed", "x")));
                        }
                        Some(_) => {}
                    }
                }
                let meta = request.headers.iter().filter(|(n, _)| n.starts_with("x-amz-meta-")).cloned().collect();
                let etag = etag_of(&request.body);
                objects.insert(key, (request.body, etag.clone(), meta));
                response(200, &[("etag", &etag)], "")
            }
            ("DELETE", false) => {
                objects.remove(&key);
                response(204, &[], "")
            }
            _ => response(405, &[], ""),
        })
    }
}

fn emulated_store(page_size: usize) -> Shared<dyn ObjectStore> {
    let config = S3Config::builder("http://h:9000", "bucket", "us-east-1", "AKID", SECRET).build().unwrap();
    let emulator = Shared::new(Emulator { page_size, ..Emulator::default() });
    let store = S3Store::with_transport(config, emulator, Shared::new(ManualClock::starting_2026()));
    Shared::new(PrefixStore::new(Shared::new(store), "app").unwrap())
}

const TRICKY_KEYS: [&str; 14] = [
    "plain",
    "with space",
    "plus+sign",
    "percent%20literal",
    "equals=and&amp",
    "question?mark",
    "hash#tag",
    "tilde~",
    "ünïcödé/ß",
    "astral/😀𝄞",
    "quote\"apos'lt<gt>",
    "dir/sub/leaf",
    "trailing/",
    "*'()!,;:@[]$",
];

#[test]
fn tricky_keys_round_trip_through_put_get_list() {
    block_on(async {
        let store = emulated_store(3);
        for (i, key) in TRICKY_KEYS.iter().enumerate() {
            let body = format!("{{\"i\":{i}}}");
            let written = store
                .put(key, body.as_bytes(), &Precondition::IfAbsent, &meta(&format!("tok{i}"), &["old"]))
                .await
                .unwrap();
            let PutOutcome::Written { etag } = written else { panic!("{key}: {written:?}") };
            let object = store.get(key).await.unwrap().unwrap_or_else(|| panic!("{key} missing"));
            assert_eq!(object.body, body.as_bytes(), "{key}");
            assert_eq!(object.etag, etag);
            assert_eq!(object.meta, meta(&format!("tok{i}"), &["old"]));
            assert_eq!(
                store.put(key, b"2", &Precondition::IfAbsent, &WriteMeta::default()).await.unwrap(),
                PutOutcome::PreconditionFailed
            );
            let cas = store.put(key, b"3", &Precondition::IfMatch(etag.clone()), &WriteMeta::default()).await.unwrap();
            assert!(matches!(cas, PutOutcome::Written { .. }), "{key}");
            assert_eq!(
                store.put(key, b"4", &Precondition::IfMatch(etag), &WriteMeta::default()).await.unwrap(),
                PutOutcome::PreconditionFailed
            );
        }
        let mut expected: Vec<String> = TRICKY_KEYS.iter().map(|k| k.to_string()).collect();
        expected.sort();
        assert_eq!(store.list("").await.unwrap(), expected);
        assert_eq!(store.list("astral/").await.unwrap(), ["astral/😀𝄞"]);
        assert_eq!(store.list("dir/").await.unwrap(), ["dir/sub/leaf"]);
        assert_eq!(store.list("nothing").await.unwrap(), Vec::<String>::new());
        for key in TRICKY_KEYS {
            store.delete(key).await.unwrap();
            store.delete(key).await.unwrap();
            assert_eq!(store.get(key).await.unwrap(), None);
        }
        assert_eq!(store.list("").await.unwrap(), Vec::<String>::new());
        assert_eq!(
            store.put("never", b"x", &Precondition::IfMatch("abc".into()), &WriteMeta::default()).await.unwrap(),
            PutOutcome::PreconditionFailed
        );
    });
}

#[test]
fn redaction_never_rewrites_text_that_is_not_a_secret() {
    let err = |m: &str| StoreError::new(FailureKind::Indeterminate, None, None, m);
    // A one-character secret: only where it stands alone.
    let out = crate::store::http::sanitize(err("no response (s) from host"), &["s"]);
    assert_eq!(out.message, "no response ([redacted]) from host");
    // A long one: wherever it appears, even glued to other credential characters.
    let long = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let out = crate::store::http::sanitize(err(&format!("token=x&secret={long}&y")), &[long]);
    assert_eq!(out.message, "token=x&secret=[redacted]&y");
}

#[test]
fn config_from_the_aws_environment() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    };
    let aws = S3Config::from_vars(
        Some("b"),
        vars(&[("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "s"), ("AWS_DEFAULT_REGION", "eu-west-3")]),
    )
    .unwrap();
    assert_eq!(
        (aws.endpoint(), aws.region(), aws.addressing()),
        ("https://s3.eu-west-3.amazonaws.com", "eu-west-3", Addressing::VirtualHosted)
    );
    let r2 = S3Config::from_vars(
        None,
        vars(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_SESSION_TOKEN", "tok"),
            ("AWS_REGION", "auto"),
            ("AWS_ENDPOINT_URL", "https://other.example"),
            ("AWS_ENDPOINT_URL_S3", "https://acct.r2.cloudflarestorage.com"),
            ("FENCEPOST_S3_BUCKET", "from-env"),
        ]),
    )
    .unwrap();
    assert_eq!(
        (r2.endpoint(), r2.region(), r2.addressing(), r2.bucket()),
        ("https://acct.r2.cloudflarestorage.com", "auto", Addressing::Path, "from-env")
    );
    assert!(format!("{r2:?}").contains("session_token: Some(\"[redacted]\")"));
    let missing = S3Config::from_vars(Some("b"), vars(&[("AWS_ACCESS_KEY_ID", "AKID")])).unwrap_err();
    assert_eq!(missing.to_string(), "invalid argument: AWS_SECRET_ACCESS_KEY is not set");
    let no_bucket = S3Config::from_vars(None, vars(&[("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "s")]));
    assert!(no_bucket.unwrap_err().to_string().contains("FENCEPOST_S3_BUCKET"), "the bucket's variable named");
    let cli = S3Config::from_vars(
        None,
        vars(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_BUCKET", "aws-named"),
            ("FENCEPOST_S3_ENDPOINT", "http://127.0.0.1:8333"),
            ("AWS_ENDPOINT_URL", "https://other.example"),
        ]),
    )
    .unwrap();
    assert_eq!(
        (cli.endpoint(), cli.bucket()),
        ("http://127.0.0.1:8333", "aws-named"),
        "the command line's variables first"
    );
}

#[test]
fn a_key_the_store_calls_too_long_is_an_invalid_argument() {
    // SeaweedFS refuses a path segment over 255 bytes, though the key is within the key rules.
    let too_long = || Ok(response(400, &[], &error_xml("KeyTooLongError", "Your key is too long")));
    let (store, _) = store_answering(vec![too_long(), too_long()]);
    let db = crate::Fencepost::from_shared(store, crate::Options::default()).unwrap();
    let key = "x".repeat(300);
    let err = block_on(db.claim_value(&key, serde_json::Value::Null)).unwrap_err();
    assert!(matches!(err, crate::Error::InvalidArgument(_)), "{err:?}");
    assert!(err.to_string().contains("255 bytes"), "{err}");
    let err = block_on(db.objects().get(&key)).unwrap_err();
    assert!(matches!(err, crate::Error::InvalidArgument(_)), "{err:?}");
}
