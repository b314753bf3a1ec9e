//! once: run a function once per key, its result recorded.
//!
//! The key holds an ordinary lease document (the same bytes a CairnDB lease has) whose `state` is
//! the run's record: `null` before any run, `{"status": "running", "attempt": n}` while a holder
//! runs the function, `{"status": "done", "value": v, "attempt": n}` once it returned `v`,
//! `{"status": "failed", "attempt": n, "error": {"name", "message"}}` after it failed.
//!
//! A call reads the key: a `done` record is the answer (1 request). Otherwise it acquires the
//! lease with a state transition that writes `running` with the next attempt number and refuses a
//! `done` record found on the way, whoever holds the key (that record is then the answer); while
//! another holder's unexpired lease is there it waits up to `wait` seconds for `done` or expiry,
//! then answers "running". Holding the lease, it runs the function under keep-alive and releases
//! with `done` or `failed`. A runner that dies leaves `running` behind; its lease expires and the
//! next call runs the function again: execution is at least once, the recorded result exactly
//! one, and a `done` record never changes (no write path replaces one).
//!
//! Requests: 1 when done; 3 for a run nobody raced (read, create or swap, release), plus renewals.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::base::cancel::Cancel;
use crate::base::error::Error;
use crate::base::mutation::{self, Mutation};
use crate::codec::json;
use crate::lease::with_lease::{self, ours};
use crate::lease::{Lease, LeaseOptions, acquire};
use crate::objects::Objects;
use crate::objects::events::Call;
use crate::objects::transition::transition;
use crate::time::Timestamp;

/// Options of [`crate::Fencepost::once`]: `OnceOptions::new(ttl)`, then what differs
/// (`OnceOptions::new(60.0).wait(10.0)`).
#[derive(Clone, PartialEq)]
pub struct OnceOptions {
    /// The run's lease: seconds, > 0. A runner that dies is replaced after this long.
    pub(crate) ttl: f64,
    /// Seconds to wait for a running holder to finish (or expire) before answering "running".
    pub(crate) wait: f64,
    pub(crate) holder: Option<String>,
    /// Renew every this many seconds while the function runs (`None`: `ttl / 3`).
    pub(crate) keep_alive_every: Option<f64>,
}

// By hand: the holder is a credential, shown only as there.
impl std::fmt::Debug for OnceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnceOptions")
            .field("ttl", &self.ttl)
            .field("wait", &self.wait)
            .field("holder", &self.holder.as_ref().map(|_| "[redacted]"))
            .field("keep_alive_every", &self.keep_alive_every)
            .finish()
    }
}

impl OnceOptions {
    /// Runs under a lease of `ttl` seconds; a running holder is not waited for.
    pub fn new(ttl: f64) -> Self {
        OnceOptions { ttl, wait: 0.0, holder: None, keep_alive_every: None }
    }

    /// Wait up to `seconds` for a running holder to finish (its result is then the answer) or to
    /// expire (this call then runs the function).
    pub fn wait(mut self, seconds: f64) -> Self {
        self.wait = seconds;
        self
    }

    /// Hold the run's lease as `holder` (default: a fresh random token).
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// Renew the run's lease every `seconds` (default `ttl / 3`).
    pub fn keep_alive_every(mut self, seconds: f64) -> Self {
        self.keep_alive_every = Some(seconds);
        self
    }

    fn lease_options(&self) -> LeaseOptions {
        let options = LeaseOptions::new(self.ttl).wait(self.wait);
        match &self.holder {
            Some(holder) => options.holder(holder.clone()),
            None => options,
        }
    }
}

/// What [`crate::Fencepost::once`] answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Once<T = Value> {
    /// The recorded result; `ran` is true only for the call whose run recorded it.
    Done { value: T, ran: bool },
    /// Another holder is running the function, its lease good until `deadline_at`.
    Running { deadline_at: Timestamp },
}

/// The record's fields.
const STATUS: &str = "status";
const ATTEMPT: &str = "attempt";

/// `once` on JSON values: `f` runs with the run's lease and gives the result as JSON; `describe`
/// names a failure of `f` for the `failed` record and the call's event (`(name, message,
/// outcome)`: the outcome an error code).
pub(crate) async fn once<E, F>(
    objects: &Objects,
    key: &str,
    options: &OnceOptions,
    f: F,
    describe: impl Fn(&E) -> (String, String, &'static str) + crate::base::sync::MaybeSync,
) -> std::result::Result<Once, E>
where
    F: AsyncFnOnce(&Lease) -> std::result::Result<Value, E>,
    E: From<Error> + 'static,
{
    let (scoped, call) = objects.call("once");
    let (answer, outcome) = run(&scoped, key, options, f, describe).await;
    Call::report(call, objects, key, outcome);
    answer
}

async fn run<E, F>(
    objects: &Objects,
    key: &str,
    options: &OnceOptions,
    f: F,
    describe: impl Fn(&E) -> (String, String, &'static str) + crate::base::sync::MaybeSync,
) -> (std::result::Result<Once, E>, &'static str)
where
    F: AsyncFnOnce(&Lease) -> std::result::Result<Value, E>,
    E: From<Error> + 'static,
{
    if let Err(e) = with_lease::check_every(options.ttl, options.keep_alive_every) {
        return ours(e);
    }
    let mut done: Option<Value> = None;
    let acquired = {
        let mut start = transition(|record: Value| {
            if status(&record) == Some("done") && !mutation::on(Mutation::OnceIgnoresDone) {
                done = Some(record);
                // Aborts the acquisition with nothing written; the record is the answer.
                return Err(Error::invalid("the run is recorded as done"));
            }
            Ok(record_of("running", attempt(&record) + 1, None))
        });
        acquire::lease_or_holder(objects, key, options.lease_options(), acquire::Rule::Once, Some(&mut *start)).await
    };
    let lease = match acquired {
        Err(_) if done.is_some() => {
            let value = done.and_then(|mut r| r.get_mut("value").map(Value::take)).unwrap_or(Value::Null);
            return (Ok(Once::Done { value, ran: false }), "ok");
        }
        Err(e) => return ours(e),
        Ok(Err(deadline)) => {
            let deadline_at = match deadline {
                Some(d) => d,
                None => match objects.now() {
                    Ok(now) => now,
                    Err(e) => return ours(e),
                },
            };
            return (Ok(Once::Running { deadline_at }), "ok");
        }
        Ok(Ok(lease)) => lease,
    };
    let n = attempt(&lease.state_value());
    let finish = |outcome: std::result::Result<&Value, &E>| {
        Some(match outcome {
            Ok(value) => record_of("done", n, Some(("value", value.clone()))),
            Err(e) => {
                let (name, message, _) = describe(e);
                let mut error = Map::new();
                error.insert("name".to_owned(), name.into());
                error.insert("message".to_owned(), message.into());
                record_of("failed", n, Some(("error", Value::Object(error))))
            }
        })
    };
    let (ran, outcome) = with_lease::hold(objects, lease, options.keep_alive_every, f, &finish).await;
    // `hold` knows fencepost's own errors; `describe` knows the caller's (a result the binding
    // refused as JSON is an `InvalidArgument`, not the callback's own error).
    let outcome = match &ran {
        Err(e) if outcome == "CALLBACK" => describe(e).2,
        _ => outcome,
    };
    (ran.map(|value| Once::Done { value, ran: true }), outcome)
}

/// A record's status, when it is one.
fn status(record: &Value) -> Option<&str> {
    record.get(STATUS)?.as_str()
}

/// A record's attempt number (0 before any run).
fn attempt(record: &Value) -> u64 {
    record.get(ATTEMPT).and_then(Value::as_u64).unwrap_or(0)
}

fn record_of(status: &str, attempt: u64, extra: Option<(&str, Value)>) -> Value {
    // Built by insertion: `Map::from_iter` would sort, bringing a sort into the wasm for two keys.
    let mut record = Map::new();
    record.insert(STATUS.to_owned(), status.into());
    record.insert(ATTEMPT.to_owned(), attempt.into());
    if let Some((name, value)) = extra {
        record.insert(name.to_owned(), value);
    }
    Value::Object(record)
}

/// The typed form [`crate::Fencepost::once`] offers: `f` gets the run's cancel (fired when the
/// lease is lost) and returns a `T`, recorded as JSON; a failure is recorded under its type's name.
pub(crate) async fn once_typed<T, E, F, Fut>(
    objects: &Objects,
    key: &str,
    options: &OnceOptions,
    f: F,
) -> std::result::Result<Once<T>, E>
where
    T: Serialize + DeserializeOwned,
    F: FnOnce(Cancel) -> Fut,
    Fut: Future<Output = std::result::Result<T, E>>,
    E: From<Error> + std::fmt::Display + 'static,
{
    let run = async |lease: &Lease| {
        // `f`'s own view of the lease's end: firing it stops `f`'s work, not the lease (a clone of
        // `ended()` would end the period, and the run's record would stay `running` until its ttl).
        let cancel = Cancel::new();
        cancel.follow(lease.ended());
        let value = f(cancel).await?;
        json::to_json(&value, "once's result", key).map_err(E::from)
    };
    let describe = |e: &E| (type_name::<E>(), e.to_string(), with_lease::callback_outcome(e));
    match once(objects, key, options, run, describe).await? {
        Once::Done { value, ran } => Ok(Once::Done { value: json::from_json(value, "once's result", key)?, ran }),
        Once::Running { deadline_at } => Ok(Once::Running { deadline_at }),
    }
}

/// The last segment of a type's path, without generics: `MyError` for `my_crate::MyError<X>`.
fn type_name<E>() -> String {
    let full = std::any::type_name::<E>();
    let plain = full.split('<').next().unwrap_or(full);
    plain.rsplit("::").next().unwrap_or(plain).to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_result_json_cannot_hold_is_refused_and_recorded_as_failed() {
        use crate::store::MemoryStore;
        use crate::{Error, Fencepost, Once, OnceOptions, Options};
        futures::executor::block_on(async {
            let db = Fencepost::new(MemoryStore::new(), Options::default()).unwrap();
            let nan = db.once("job", OnceOptions::new(60.0), |_| async { Ok::<_, Error>(f64::NAN) }).await;
            assert!(matches!(nan, Err(Error::InvalidArgument(_))), "{nan:?}");
            let record = db.inspect("job").await.unwrap().expect("recorded");
            let crate::Held::Lease(lease) = record.kind else { panic!("a lease document") };
            assert_eq!(lease.state["status"], "failed", "not done with null: {:?}", lease.state);
            let again = db.once("job", OnceOptions::new(60.0), |_| async { Ok::<_, Error>(2.5) }).await.unwrap();
            assert_eq!(again, Once::Done { value: 2.5, ran: true }, "the next call runs it again");
            let claimed = db.claim("reading", f64::INFINITY).await;
            assert!(matches!(claimed, Err(Error::InvalidArgument(_))), "{claimed:?}");
            assert!(db.inspect("reading").await.unwrap().is_none(), "nothing written");
        });
    }

    #[test]
    fn failures_are_named_by_their_type() {
        assert_eq!(super::type_name::<crate::Error>(), "Error");
        assert_eq!(super::type_name::<std::io::Error>(), "Error");
        assert_eq!(super::type_name::<Option<u8>>(), "Option");
    }
}
