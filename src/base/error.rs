//! The one error type of fencepost. Every failure a caller can see is one of these variants, each
//! with a stable machine-readable [`Error::code`]; the JS bindings map them onto JS classes.

use crate::base::sync::Shared;
use std::any::Any;
use std::fmt;

/// A fencepost failure. `Clone`, so one reason can settle many waiters (a [`crate::Cancel`] hands
/// its reason to every call it aborts). `#[non_exhaustive]`: match the variants you handle and
/// keep a `_` arm (or use [`Error::code`]); new kinds of failure may be added.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// The caller's input was rejected before anything was written (bad key, ttl, value…).
    InvalidArgument(String),
    /// The lease handle no longer names the current ownership period; `reason` says why (see
    /// [`LostReason`]), `message` in words, and `cause` is the last storage error when keep-alive
    /// could not renew in time. The holder must discard its work.
    LeaseLost { key: String, reason: LostReason, message: String, cause: Option<Box<Error>> },
    /// A compare-and-swap loop ran out of attempts.
    Conflict { key: String, attempts: u32 },
    /// The store refused the request or could not be reached (after bounded retries).
    Storage(StorageFailure),
    /// A write's response was lost (or the call was cancelled while it was in flight) and reading
    /// the key back could not prove whether it landed. fencepost never guesses: the caller decides
    /// (usually: re-read and retry the operation). `cause`: what interrupted the write when that was
    /// not the store (a cancel's reason), or why the read-back failed; see
    /// [`std::error::Error::source`].
    AmbiguousWrite { key: String, message: String, cause: Option<Box<Error>> },
    /// `wait_for` gave up.
    Timeout { key: String, seconds: f64 },
    /// `doc.update` found no document and was given no `create` value.
    NotFound { key: String },
    /// A stored object is not what fencepost expects (not JSON, wrong shape). Nothing was written.
    Corrupt { key: String, message: String },
    /// The call was cancelled through a [`crate::Cancel`] without a reason of its own.
    Aborted,
    /// An error raised by a caller-supplied function (a `stateFn`, an `update` callback…), carried
    /// through unchanged so the bindings can hand the very same value back to the caller (`Shared` so
    /// the error stays `Clone`; the wasm binding downcasts it to a `JsValue`, through
    /// [`Error::callback_value`] when it is a [`CodedCallback`]). `Send + Sync`
    /// natively, like every fencepost error, so it crosses threads and fits `anyhow`/`Box<dyn Error + Send + Sync>`.
    Callback(CallbackValue),
}

/// The codes of fencepost's own errors ([`Error::code`], `CALLBACK` aside).
const CODES: [&str; 9] = [
    "INVALID_ARGUMENT",
    "LEASE_LOST",
    "CONFLICT",
    "STORAGE_ERROR",
    "AMBIGUOUS_WRITE",
    "TIMEOUT",
    "NOT_FOUND",
    "CORRUPT",
    "ABORTED",
];

/// What [`Error::callback_coded`] wraps in [`Error::Callback`]: the caller's value, and the code
/// of the fencepost error it is (the call's outcome).
pub struct CodedCallback {
    pub code: &'static str,
    pub value: CallbackValue,
}

/// What [`Error::Callback`] carries: any value, `Send + Sync` natively.
#[cfg(not(target_arch = "wasm32"))]
pub type CallbackValue = Shared<dyn Any + Send + Sync>;
/// What [`Error::Callback`] carries: any value (in wasm32, usually a `JsValue`).
#[cfg(target_arch = "wasm32")]
pub type CallbackValue = Shared<dyn Any>;

/// Why a lease's ownership period ended for its holder (`LeaseLost.reason` in JS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    /// Released through one of the period's handles: this one, or another on the same period (an
    /// `attach_lease` handle, a clone) whose release this handle learnt of.
    Released,
    /// The deadline passed before a renewal landed (keep-alive gives up just before it).
    Expired,
    /// Another epoch or holder is recorded: taken over after expiry, or broken (`breakLease`);
    /// also a handle that gave up under a stream of cooperative writes.
    Stolen,
    /// The lease document is gone.
    Deleted,
}

impl LostReason {
    /// The reason as JS sees it: `"released"`, `"expired"`, `"stolen"` or `"deleted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LostReason::Released => "released",
            LostReason::Expired => "expired",
            LostReason::Stolen => "stolen",
            LostReason::Deleted => "deleted",
        }
    }
}

/// What a store said when it refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StorageFailure {
    /// The store's error code (`SignatureDoesNotMatch`, `SlowDown`, …) when it gave one.
    pub code: Option<String>,
    /// HTTP status, when there was an HTTP response at all.
    pub status: Option<u16>,
    /// Human-readable detail. Never contains credentials or signatures.
    pub message: String,
    /// The key the refused request was about (not a listing's prefix), when there was one.
    pub key: Option<String>,
}

impl Error {
    /// The stable code carried to JS as `err.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::LeaseLost { .. } => "LEASE_LOST",
            Error::Conflict { .. } => "CONFLICT",
            Error::Storage(_) => "STORAGE_ERROR",
            Error::AmbiguousWrite { .. } => "AMBIGUOUS_WRITE",
            Error::Timeout { .. } => "TIMEOUT",
            Error::NotFound { .. } => "NOT_FOUND",
            Error::Corrupt { .. } => "CORRUPT",
            Error::Aborted => "ABORTED",
            Error::Callback(payload) => payload.downcast_ref::<CodedCallback>().map_or("CALLBACK", |c| c.code),
        }
    }

    /// [`Error::callback`] for a value that is itself one of fencepost's errors as the host carries
    /// it, with code `code` (a JS `LeaseLost` thrown through a callback): the call's outcome is then
    /// that code, not `CALLBACK`. A code that is not one of [`Error::code`]'s (`ENOENT`) is ignored.
    pub fn callback_coded<T: Any + crate::base::sync::MaybeSend + crate::base::sync::MaybeSync>(
        value: T,
        code: &str,
    ) -> Self {
        match CODES.iter().find(|c| **c == code) {
            Some(code) => Error::Callback(Shared::new(CodedCallback { code, value: Shared::new(value) })),
            None => Error::callback(value),
        }
    }

    /// The caller's own value an [`Error::Callback`] carries ([`CodedCallback::value`] when coded).
    pub fn callback_value(payload: &CallbackValue) -> &CallbackValue {
        payload.downcast_ref::<CodedCallback>().map_or(payload, |c| &c.value)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument(message.into())
    }

    pub fn lease_lost(key: &str, reason: LostReason, message: impl Into<String>) -> Self {
        Error::LeaseLost { key: key.to_owned(), reason, message: message.into(), cause: None }
    }

    pub fn corrupt(key: &str, message: impl Into<String>) -> Self {
        Error::Corrupt { key: key.to_owned(), message: message.into() }
    }

    pub fn ambiguous(key: &str, message: impl Into<String>, cause: Option<Error>) -> Self {
        Error::AmbiguousWrite { key: key.to_owned(), message: message.into(), cause: cause.map(Box::new) }
    }

    /// Wrap a caller's own error value (see [`Error::Callback`]).
    pub fn callback<T: Any + crate::base::sync::MaybeSend + crate::base::sync::MaybeSync>(value: T) -> Self {
        Error::Callback(Shared::new(value))
    }
}

/// `s` in double quotes for a message, `"` `\\` and control characters escaped (JSON-style), other
/// characters as they are. Not `{:?}`: `str`'s `Debug` brings Unicode tables into the wasm.
pub fn quoted(s: &str) -> impl fmt::Display + '_ {
    struct Quoted<'a>(&'a str);
    impl fmt::Display for Quoted<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            use fmt::Write;
            f.write_char('"')?;
            for c in self.0.chars() {
                match c {
                    '"' => f.write_str("\\\"")?,
                    '\\' => f.write_str("\\\\")?,
                    '\n' => f.write_str("\\n")?,
                    '\t' => f.write_str("\\t")?,
                    c if c.is_control() => write!(f, "\\u{:04x}", u32::from(c))?,
                    c => f.write_char(c)?,
                }
            }
            f.write_char('"')
        }
    }
    Quoted(s)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::LeaseLost { key, message, .. } => write!(f, "lease {} lost: {message}", quoted(key)),
            Error::Conflict { key, attempts } => {
                write!(f, "{}: still conflicting after {attempts} attempts", quoted(key))
            }
            Error::Storage(s) => fmt::Display::fmt(s, f),
            Error::AmbiguousWrite { key, message, .. } => {
                write!(f, "write to {} may or may not have landed: {message}", quoted(key))
            }
            Error::Timeout { key, seconds } => {
                write!(f, "timed out after {}s waiting for {}", crate::base::number::number_text(*seconds), quoted(key))
            }
            Error::NotFound { key } => write!(f, "{} does not exist and no create value was given", quoted(key)),
            Error::Corrupt { key, message } => write!(f, "stored object {} is corrupt: {message}", quoted(key)),
            Error::Aborted => write!(f, "the operation was aborted"),
            Error::Callback(_) => write!(f, "a callback failed"),
        }
    }
}

impl fmt::Display for StorageFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "storage error")?;
        match (&self.code, self.status) {
            (Some(c), Some(s)) => write!(f, " {c} (HTTP {s})")?,
            (Some(c), None) => write!(f, " {c}")?,
            (None, Some(s)) => write!(f, " (HTTP {s})")?,
            (None, None) => {}
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::AmbiguousWrite { cause: Some(cause), .. } | Error::LeaseLost { cause: Some(cause), .. } => {
                Some(cause.as_ref())
            }
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coded_callback_reports_its_code_and_keeps_its_value() {
        let every = [
            Error::invalid("x"),
            Error::lease_lost("k", LostReason::Stolen, "x"),
            Error::Conflict { key: "k".into(), attempts: 1 },
            Error::Storage(StorageFailure { code: None, status: None, message: String::new(), key: None }),
            Error::ambiguous("k", "x", None),
            Error::Timeout { key: "k".into(), seconds: 1.0 },
            Error::NotFound { key: "k".into() },
            Error::corrupt("k", "x"),
            Error::Aborted,
        ];
        assert_eq!(every.iter().map(Error::code).collect::<Vec<_>>(), CODES, "one code per variant, in CODES");
        let coded = Error::callback_coded(7_u32, "LEASE_LOST");
        assert_eq!(coded.code(), "LEASE_LOST");
        let Error::Callback(payload) = &coded else { panic!("a callback") };
        assert_eq!(Error::callback_value(payload).downcast_ref::<u32>(), Some(&7));
        let plain = Error::callback_coded(7_u32, "ENOENT");
        assert_eq!(plain.code(), "CALLBACK", "not one of ours");
        let Error::Callback(payload) = &plain else { panic!("a callback") };
        assert_eq!(Error::callback_value(payload).downcast_ref::<u32>(), Some(&7));
    }
}
