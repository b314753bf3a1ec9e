//! What fencepost writes and reads, as bytes and text: canonical JSON (the wire format shared with
//! CairnDB), random tokens, hex and base64, and the key rules.

pub(crate) mod encoding;
pub(crate) mod json;
pub(crate) mod keys;
pub(crate) mod token;
