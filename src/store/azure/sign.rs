//! Azure Storage's Shared Key signature (version 2009-09-19 and later), sans-IO: the string to
//! sign is a pure function of the request, tested against the examples Microsoft documents.
//!
//! ```text
//! VERB \n Content-Encoding \n Content-Language \n Content-Length (empty when 0) \n Content-MD5 \n
//! Content-Type \n Date \n If-Modified-Since \n If-Match \n If-None-Match \n If-Unmodified-Since \n
//! Range \n CanonicalizedHeaders (x-ms-*: lowercase, sorted, `name:value\n`) CanonicalizedResource
//! (`/account/path`, then `\nname:value` per query parameter, names lowercase and sorted)
//! ```
//!
//! `Authorization: SharedKey account:base64(HMAC-SHA256(base64-decoded key, string to sign))`.

use crate::codec::encoding::base64;
use crate::store::http::hmac_sha256;

/// The standard headers that are signed, in their order (`Content-Length` is given apart).
const SIGNED: [&str; 10] = [
    "content-encoding",
    "content-language",
    "content-md5",
    "content-type",
    "date",
    "if-modified-since",
    "if-match",
    "if-none-match",
    "if-unmodified-since",
    "range",
];

/// A request as the signature sees it.
pub(crate) struct ToSign<'a> {
    pub method: &'a str,
    /// Lowercase names.
    pub headers: &'a [(String, String)],
    pub content_length: usize,
    pub account: &'a str,
    /// The URL path as sent (percent-encoded), from its leading `/`.
    pub path: &'a str,
    /// Decoded names and values.
    pub query: &'a [(&'a str, &'a str)],
}

pub(crate) fn string_to_sign(request: &ToSign<'_>) -> String {
    let header = |name: &str| request.headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str());
    let mut out = String::with_capacity(256);
    out.push_str(request.method);
    out.push('\n');
    for (i, name) in SIGNED.iter().enumerate() {
        if i == 2 {
            // Content-Length sits between Content-Language and Content-MD5; empty when zero.
            if request.content_length > 0 {
                out.push_str(&request.content_length.to_string());
            }
            out.push('\n');
        }
        out.push_str(header(name));
        out.push('\n');
    }
    // The x-ms-* headers as `name:value` lines, and the query as `\nname:value` lines, each kept
    // sorted as it is built (a request has a handful of each).
    let mut lines: Vec<String> = Vec::new();
    let mut add = |line: String| {
        let at = lines.partition_point(|l| *l < line);
        lines.insert(at, line);
    };
    for (name, value) in request.headers.iter().filter(|(n, _)| n.starts_with("x-ms-")) {
        add(format!("{name}:{}\n", value.trim()));
    }
    out.extend(lines.drain(..));
    out.push('/');
    out.push_str(request.account);
    out.push_str(request.path);
    // Parameters by lowercase name; a repeated one is one line, its values joined by commas.
    let mut query: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, value) in request.query {
        let name = name.to_ascii_lowercase();
        let at = query.partition_point(|(n, _)| *n < name);
        match query.get_mut(at) {
            Some((n, values)) if *n == name => {
                let v = values.partition_point(|v| v < value);
                values.insert(v, value);
            }
            _ => query.insert(at, (name, vec![value])),
        }
    }
    for (name, values) in query {
        out.push('\n');
        out.push_str(&name);
        out.push(':');
        out.push_str(&values.join(","));
    }
    out
}

/// The `Authorization` header's value, and the signature alone (a secret errors must not show).
pub(crate) fn authorization(account: &str, key: &[u8], string_to_sign: &str) -> (String, String) {
    let signature = base64(&hmac_sha256(key, string_to_sign.as_bytes()));
    (format!("SharedKey {account}:{signature}"), signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn microsoft_example_get_container_metadata() {
        // "Authorize with Shared Key", the Blob service example of a string to sign.
        let h = headers(&[("x-ms-version", "2009-09-19"), ("x-ms-date", "Sun, 11 Oct 2009 21:49:13 GMT")]);
        let request = ToSign {
            method: "GET",
            headers: &h,
            content_length: 0,
            account: "myaccount",
            path: "/myaccount/mycontainer",
            query: &[("restype", "container"), ("comp", "metadata"), ("timeout", "20")],
        };
        assert_eq!(
            string_to_sign(&request),
            "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Sun, 11 Oct 2009 21:49:13 GMT\nx-ms-version:2009-09-19\n\
             /myaccount/myaccount/mycontainer\ncomp:metadata\nrestype:container\ntimeout:20"
        );
    }

    #[test]
    fn microsoft_examples_of_canonicalized_resources() {
        let resource = |path: &str, query: &[(&str, &str)]| {
            let s = string_to_sign(&ToSign {
                method: "GET",
                headers: &[],
                content_length: 0,
                account: "myaccount",
                path,
                query,
            });
            s.rsplit_once("\n\n").map_or(String::new(), |(_, r)| r.to_owned())
        };
        assert_eq!(
            resource("/mycontainer", &[("restype", "container"), ("comp", "metadata")]),
            "/myaccount/mycontainer\ncomp:metadata\nrestype:container"
        );
        assert_eq!(
            resource(
                "/mycontainer",
                &[
                    ("restype", "container"),
                    ("comp", "list"),
                    ("include", "snapshots"),
                    ("include", "metadata"),
                    ("include", "uncommittedblobs")
                ]
            ),
            "/myaccount/mycontainer\ncomp:list\ninclude:metadata,snapshots,uncommittedblobs\nrestype:container"
        );
        assert_eq!(resource("/mycontainer/myblob", &[]), "/myaccount/mycontainer/myblob");
    }

    #[test]
    fn a_put_signs_length_conditions_and_metadata() {
        let h = headers(&[
            ("x-ms-meta-fencepost_token", " t1 "),
            ("if-none-match", "*"),
            ("x-ms-blob-type", "BlockBlob"),
            ("x-ms-date", "Thu, 01 Jan 2026 00:00:00 GMT"),
            ("x-ms-version", "2021-12-02"),
        ]);
        let sts = string_to_sign(&ToSign {
            method: "PUT",
            headers: &h,
            content_length: 11,
            account: "devstoreaccount1",
            path: "/devstoreaccount1/c/a%20b",
            query: &[],
        });
        assert_eq!(
            sts,
            "PUT\n\n\n11\n\n\n\n\n\n*\n\n\nx-ms-blob-type:BlockBlob\nx-ms-date:Thu, 01 Jan 2026 00:00:00 GMT\n\
             x-ms-meta-fencepost_token:t1\nx-ms-version:2021-12-02\n/devstoreaccount1/devstoreaccount1/c/a%20b"
        );
        // The signature as Python's hmac and base64 compute it for the emulator's published key.
        let key = crate::codec::encoding::base64_decode(
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        )
        .unwrap();
        let (header, signature) = authorization("devstoreaccount1", &key, &sts);
        assert_eq!(header, format!("SharedKey devstoreaccount1:{signature}"));
        assert_eq!(signature, PYTHON_SIGNATURE);
    }

    /// `base64.b64encode(hmac.new(base64.b64decode(KEY), STS.encode(), hashlib.sha256).digest())`
    const PYTHON_SIGNATURE: &str = "AUq1hve1NOXsJxx/PgGmUgqn2tMEn3tulym1Mzrs/HI=";
}
