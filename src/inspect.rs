//! inspect: what a key holds, for operators (`fencepost show`, dashboards): a lease with its
//! period, any other JSON value (claims and docs are the same bytes on the wire), or bytes. One
//! request; nothing is written.

use serde_json::Value;

use crate::base::error::Result;
use crate::codec::json;
use crate::lease::{LeaseDoc, LeaseView};
use crate::objects::Objects;
use crate::time::Timestamp;

/// What [`crate::Fencepost::inspect`] found at a key.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub key: String,
    pub etag: String,
    /// Bytes stored.
    pub size: u64,
    /// When the store last wrote it, if the store says (S3: whole seconds).
    pub last_modified: Option<Timestamp>,
    pub kind: Held,
}

/// What kind of object a key holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Held {
    /// A lease document (`{epoch, holder, deadline_at, state}`), judged at the time of the read.
    Lease(LeaseView),
    /// Any other JSON value: a claim, a doc, a JSON object of another tool.
    Json(Value),
    /// Not JSON.
    Bytes(Vec<u8>),
}

/// Read `key` once and say what it holds; `None` when absent.
pub(crate) async fn inspect(objects: &Objects, key: &str) -> Result<Option<Inspection>> {
    objects.check_key(key)?;
    match objects.read(key).await? {
        Some(obj) => inspection(objects, key, obj).map(Some),
        None => Ok(None),
    }
}

/// What the version `obj` of `key` holds (judged as of now).
pub(crate) fn inspection(objects: &Objects, key: &str, obj: crate::store::StoredObject) -> Result<Inspection> {
    // One parse: the value, then (when it has a lease document's shape) the document from it.
    let kind = match json::parse(&obj.body) {
        Err(_) => Held::Bytes(obj.body.clone()),
        Ok(value) => match LeaseDoc::from_value(key, value.clone()) {
            Ok(doc) => Held::Lease(doc.view(value, objects.now()?)),
            Err(_) => Held::Json(value),
        },
    };
    Ok(Inspection {
        key: key.to_owned(),
        etag: obj.etag,
        size: obj.body.len() as u64,
        last_modified: obj.last_modified,
        kind,
    })
}
