//! The conformance suite, written once and run against every store the Rust tests reach: natively
//! on the memory store (`tests/native.rs`), natively against SeaweedFS and moto through
//! `ReqwestTransport` (`tests/native_s3.rs`), and in wasm under Node against the memory store,
//! SeaweedFS and moto through `fetch` (`tests/wasm.rs`). `cases` holds the cases every store runs,
//! `s3` the checks only a real S3 server can answer (contention, a wrong secret). Each case gets a
//! fresh, empty namespace, a manual clock (so expiry is exact) and a `FaultStore` in front of the
//! store, which counts requests (asserted against the floor in docs/operations.md's "Requests per
//! operation") and injects faults (lost responses, competing writes).

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use fencepost::store::{ObjectStore, Op, Precondition, RequestCounts};
use fencepost::testing::{Fault, FaultStore, ManualClock};
use fencepost::{Clock, Event, Fencepost, LeaseOptions, MaybeSend, Options, RetryPolicy, Shared, Timestamp};
use serde_json::{Value, json};

pub mod cases;
pub mod s3;

/// One test's world.
pub struct Ctx {
    /// The backend itself (a fresh namespace); writes here are "other processes" and not counted.
    pub raw: Shared<dyn ObjectStore>,
    /// What `db` talks to: counts requests and injects faults.
    pub store: Shared<FaultStore>,
    pub clock: ManualClock,
    pub db: Fencepost,
    /// Whether the server itself answers a conditional read with 304 (every server the suites run
    /// but fake-gcs-server).
    pub server_answers_304: bool,
}

impl Ctx {
    pub fn new(raw: Shared<dyn ObjectStore>) -> Ctx {
        let store = Shared::new(FaultStore::new(raw.clone()));
        let clock = ManualClock::auto_advancing(ManualClock::START_2026);
        let db = Fencepost::new(store.clone(), options(&clock)).expect("valid options");
        Ctx { raw, store, clock, db, server_answers_304: true }
    }

    /// Another worker on the same bucket and clock, not counted and without faults.
    pub fn peer(&self) -> Fencepost {
        Fencepost::new(self.raw.clone(), options(&self.clock)).expect("valid options")
    }

    /// The client with a listener: every event it reports, rendered as a line (`request get k 404
    /// 1 absent`, `call claim k 1 ok`, `lease k 1 acquired`); durations left out.
    pub fn observed(&self) -> (Fencepost, Arc<Mutex<Vec<String>>>) {
        self.observed_with(options(&self.clock))
    }

    /// [`Ctx::observed`] on the system clock, as [`Ctx::real_time`] (for keep-alive).
    pub fn observed_in_real_time(&self) -> (Fencepost, Arc<Mutex<Vec<String>>>) {
        self.observed_with(Options { retry: real_time_retry(), ..Options::default() })
    }

    fn observed_with(&self, options: Options) -> (Fencepost, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let on_event = Shared::new(move |e: &Event<'_>| {
            let line = match *e {
                Event::Request { op, key, status, attempt, ms, outcome } => {
                    assert!(ms >= 0.0);
                    let status = status.map_or("-".to_owned(), |s| s.to_string());
                    format!("request {} {key} {status} {attempt} {outcome}", op.as_str())
                }
                Event::Call { method, key, requests, ms, outcome } => {
                    assert!(ms >= 0.0);
                    format!("call {method} {key} {requests} {outcome}")
                }
                Event::Lease { key, epoch, action, reason } => {
                    let reason = reason.map_or(String::new(), |r| format!(" {}", r.as_str()));
                    format!("lease {key} {epoch} {}{reason}", action.as_str())
                }
            };
            log.lock().unwrap().push(line);
        });
        let options = Options { on_event: Some(on_event), ..options };
        (Fencepost::new(self.store.clone(), options).expect("valid options"), seen)
    }

    /// The client again, on the system clock: for keep-alive, whose deadline timer races its
    /// renewals (an auto-advancing clock would fire it during any real request).
    pub fn real_time(&self) -> Fencepost {
        Fencepost::new(self.store.clone(), Options { retry: real_time_retry(), ..Options::default() })
            .expect("valid options")
    }

    /// The operation's write lands but its response is lost; `meanwhile` runs after the
    /// operation's own read and before its read-back (other writers landing on top).
    pub fn lose_put_response_then(&self, meanwhile: impl Future<Output = ()> + MaybeSend + 'static) {
        self.store.inject(Op::Put, Fault::LoseResponse);
        self.store.inject(Op::Get, Fault::Pass);
        self.store.inject(Op::Get, before(meanwhile));
    }

    pub fn clock_now(&self) -> Timestamp {
        self.clock.now().expect("a manual clock always knows the time")
    }

    pub fn take_counts(&self) -> RequestCounts {
        self.store.take_counts()
    }

    pub async fn raw_body(&self, key: &str) -> Option<Vec<u8>> {
        self.raw.get(key).await.expect("raw get").map(|o| o.body)
    }

    pub async fn raw_put(&self, key: &str, body: &[u8]) {
        self.raw.put(key, body, &Precondition::None, &Default::default()).await.expect("raw put");
    }
}

fn real_time_retry() -> RetryPolicy {
    RetryPolicy { max_attempts: 4, base_delay: 0.01, max_delay: 0.05 }
}

fn options(clock: &ManualClock) -> Options {
    Options {
        clock: Some(Shared::new(clock.clone())),
        retry: RetryPolicy { max_attempts: 4, base_delay: 0.01, max_delay: 0.05 },
        ..Options::default()
    }
}

/// Requests as (get, put, delete, list).
pub fn counts(get: u32, put: u32) -> RequestCounts {
    RequestCounts { get, put, delete: 0, list: 0 }
}

pub fn lease_opts(ttl: f64, holder: &str) -> LeaseOptions {
    LeaseOptions::new(ttl).holder(holder)
}

/// A transition that adds `n` to `state.count` (null counts as 0).
pub fn add(n: i64) -> impl FnMut(Value) -> fencepost::Result<Value> + MaybeSend {
    move |v: Value| Ok(json!({"count": v.get("count").and_then(Value::as_i64).unwrap_or(0) + n}))
}

/// How many times something ran (shared with closures that must be `Send` natively).
#[derive(Debug, Default)]
pub struct Calls(AtomicU32);

impl Calls {
    pub fn new() -> Calls {
        Calls::default()
    }
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `f`, counting its calls in `calls` (to assert how often a transition ran).
pub fn counting<'a>(
    calls: &'a Calls,
    mut f: impl FnMut(Value) -> fencepost::Result<Value> + MaybeSend + 'a,
) -> impl FnMut(Value) -> fencepost::Result<Value> + MaybeSend + 'a {
    move |v| {
        calls.bump();
        f(v)
    }
}

/// [`Fault::before`] for any hook: natively the fault store asks the hook's future to be `Sync`
/// as well as `Send`, which a future awaiting a store call (a boxed `dyn Future + Send`) is not;
/// a `Mutex` makes it so (it is only ever polled through `&mut`).
pub fn before(hook: impl Future<Output = ()> + MaybeSend + 'static) -> Fault {
    Fault::before(SyncHook(Mutex::new(Box::pin(hook))))
}

/// [`Fault::after`] for any hook (see [`before`]).
pub fn after(hook: impl Future<Output = ()> + MaybeSend + 'static) -> Fault {
    Fault::after(SyncHook(Mutex::new(Box::pin(hook))))
}

struct SyncHook<F>(Mutex<Pin<Box<F>>>);

impl<F: Future<Output = ()>> Future for SyncHook<F> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let hook = self.get_mut().0.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        hook.as_mut().poll(cx)
    }
}

/// Adds 1 to a plain number.
pub fn incr(v: Value) -> fencepost::Result<Value> {
    Ok(json!(v.as_i64().unwrap_or(0) + 1))
}

/// Every conformance case, by name, for the runners' macros.
#[macro_export]
macro_rules! for_each_case {
    ($m:ident) => {
        $m!(
            claim_first_caller_wins,
            claim_losers_converge_on_winner,
            claim_key_deleted_before_readback_is_claimed_again,
            claim_rejects_bad_keys_and_writes_nothing,
            claim_race_has_exactly_one_winner,
            claim_lost_response_still_wins_for_that_caller_only,
            claim_transport_error_before_landing_is_retried,
            claim_timed_out_attempt_landing_late_still_wins,
            doc_timed_out_attempt_landing_late_is_applied_once,
            doc_create_lost_response_then_layer0_cas_on_top_is_not_reapplied,
            failed_read_back_is_an_ambiguous_write,
            plain_put_lost_response_then_overwritten_is_not_retried_blindly,
            released_lease_with_null_deadline_stays_readable,
            claim_lost_response_without_visible_tokens_is_ambiguous,
            doc_create_lost_response_without_visible_tokens_is_ambiguous,
            doc_cas_lost_response_back_to_same_bytes_is_not_retried_blindly,
            lease_fresh_has_epoch_one_and_random_holder,
            lease_held_returns_none_without_calling_state_fn,
            lease_renew_extends_deadline,
            lease_release_then_reacquire_bumps_epoch_keeps_state,
            lease_expired_is_stolen_and_old_handle_fenced,
            lease_no_steal_when_steal_if_expired_false,
            lease_expiry_boundary_is_inclusive,
            lease_ttl_must_be_positive,
            lease_reacquire_by_same_holder_fences_old_handle,
            lease_deleted_document_fences,
            lease_writes_after_release_fail,
            lease_race_has_exactly_one_acquirer,
            lease_state_fn_seeds_transitions_and_aborts,
            lease_corrupt_document_is_typed_error_and_untouched,
            lease_unknown_fields_survive_every_rewrite,
            lease_lost_acquire_response_still_holds,
            lease_lost_renew_response_then_cooperative_write,
            cooperative_write_observed_on_renew_without_fencing,
            cooperative_write_merged_by_update_state,
            cooperative_write_discarded_by_write,
            cooperative_write_kept_by_release,
            cooperative_write_missing_lease_is_none,
            cooperative_write_stream_exhausts_patience,
            cooperative_write_lost_response_applied_once,
            attach_gives_handle_without_writing,
            attach_two_handles_do_not_fence_each_other,
            attach_refused_for_other_absent_released_expired,
            attach_handle_fenced_by_steal,
            doc_creates_from_create,
            doc_retries_on_conflict,
            doc_absent_without_create_is_error,
            doc_delete_is_idempotent,
            doc_create_race_converges,
            doc_max_attempts_is_honoured,
            doc_lost_response_applied_once,
            doc_unprovable_outcome_is_ambiguous_error,
            objects_conditional_puts,
            objects_conditional_get_answers_not_modified,
            objects_list_is_ascending_and_relative,
            objects_tricky_keys_round_trip,
            objects_wait_for_appears_changes_and_times_out,
            objects_retries_transient_failures,
            objects_fatal_errors_are_not_retried,
            objects_retry_budget_is_bounded,
            cancel_before_a_call_sends_nothing,
            cancel_while_polling_stops_at_once,
            cancel_while_a_put_is_in_flight_resolves_by_read_back,
            lease_wait_acquires_after_release,
            lease_wait_runs_out_with_none,
            lease_wait_steals_at_the_deadline,
            lease_wait_is_cancelled_at_once,
            lease_end_signal_fires_on_release_and_on_loss,
            with_lease_runs_f_then_releases,
            with_lease_does_not_call_f_when_held,
            store_clock_corrects_a_fast_client,
            events_report_requests_calls_and_lease_transitions,
            doc_update_from_the_handles_view_is_one_request,
            doc_update_from_a_stale_view_costs_one_extra_put,
            counter_is_exact_under_concurrency_and_lost_responses,
            fault_store_limit_writes_answers_429_past_the_limit,
            once_runs_then_answers_the_record,
            once_duplicate_during_a_run_waits_or_answers_running,
            once_failure_is_recorded_and_run_again,
            once_dead_runner_is_replaced_after_its_ttl,
            once_race_records_one_result,
            semaphore_admits_at_most_limit_and_fences_each_slot,
            semaphore_expired_permit_is_taken_and_its_holder_fenced,
            semaphore_sixteen_acquirers_never_exceed_the_limit,
            watch_sees_each_change_in_order_and_deletions_once,
        );
    };
}

pub use cases::*;

// Re-exports the cases need, kept here so `cases.rs` reads as a list of behaviours.
pub(crate) mod prelude {
    pub use super::{Calls, Ctx, add, after, before, counting, counts, incr, lease_opts};
    pub use fencepost::store::{ObjectStore, Op, Precondition, RequestCounts};
    pub use fencepost::testing::Fault;
    pub use fencepost::{Cancel, Clock, Error, LeaseOptions, UpdateOptions, WaitOptions};
    pub use futures::future::join_all;
    pub use serde_json::{Value, json};
    pub use std::sync::Mutex;
}
