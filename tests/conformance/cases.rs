//! The behaviours every store and runtime must show. One `async fn` per case.

use super::prelude::*;

fn lost(e: &Error) -> bool {
    matches!(e, Error::LeaseLost { .. })
}

// ---------------------------------------------------------------- claim

pub async fn claim_first_caller_wins(cx: Ctx) {
    let c = cx.db.claim("cron/tick-1", json!({"by": "a"})).await.unwrap();
    assert!(c.won);
    assert_eq!(c.value, json!({"by": "a"}));
    assert!(!c.etag.is_empty());
    assert_eq!(cx.take_counts(), counts(0, 1), "claim won = 1 request");
    assert_eq!(cx.raw_body("cron/tick-1").await.unwrap(), br#"{"by":"a"}"#);
}

pub async fn claim_losers_converge_on_winner(cx: Ctx) {
    let first = cx.peer().claim("k", json!({"n": 1, "z": [1, "é"]})).await.unwrap();
    let c = cx.db.claim("k", json!({"n": 2})).await.unwrap();
    assert!(!c.won);
    assert_eq!(c.value, json!({"n": 1, "z": [1, "é"]}));
    assert_eq!(c.etag, first.etag);
    assert_eq!(cx.take_counts(), counts(1, 1), "claim lost = 2 requests");
}

pub async fn claim_key_deleted_before_readback_is_claimed_again(cx: Ctx) {
    cx.peer().claim("k", json!("first")).await.unwrap();
    let raw = cx.raw.clone();
    cx.store.inject(Op::Get, before(async move { raw.delete("k").await.unwrap() }));
    let c = cx.db.claim("k", json!("second")).await.unwrap();
    assert!(c.won, "the vanished key is claimed again");
    assert_eq!(c.value, json!("second"));
    assert_eq!(cx.take_counts(), counts(1, 2));
}

pub async fn claim_rejects_bad_keys_and_writes_nothing(cx: Ctx) {
    for key in ["", "log/x", "snapshots/x", "logs/x", "txapplied/x", "a/../b", "./a", "a\u{1}b", &"x".repeat(1025)] {
        let e = cx.db.claim(key, json!(1)).await.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{key:?}: {e}");
    }
    assert_eq!(cx.take_counts().total(), 0, "rejected before any request");
    assert!(cx.raw.list("").await.unwrap().is_empty());
}

pub async fn claim_race_has_exactly_one_winner(cx: Ctx) {
    let dbs: Vec<_> = (0..12).map(|_| cx.peer()).collect();
    let results = join_all(dbs.iter().enumerate().map(|(i, db)| db.claim("race", json!(i)))).await;
    let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    let winners: Vec<_> = results.iter().filter(|c| c.won).collect();
    assert_eq!(winners.len(), 1);
    assert!(results.iter().all(|c| c.value == winners[0].value), "losers converge");
}

pub async fn claim_lost_response_still_wins_for_that_caller_only(cx: Ctx) {
    cx.store.inject(Op::Put, Fault::LoseResponse);
    let c = cx.db.claim("k", json!("mine")).await.unwrap();
    assert!(c.won, "read-back finds our write token");
    assert_eq!(cx.take_counts(), counts(1, 1), "one put, one read-back");
    let other = cx.peer().claim("k", json!("theirs")).await.unwrap();
    assert!(!other.won);
    assert_eq!(other.value, json!("mine"));
}

pub async fn claim_lost_response_without_visible_tokens_is_ambiguous(cx: Ctx) {
    // A browser whose bucket CORS rules hide x-amz-meta-* cannot see write tokens: a lost winning
    // response must not be reported as a loss (nobody would run the job), nor as a win by guess.
    cx.store.hide_write_meta(true);
    cx.store.inject(Op::Put, Fault::LoseResponse);
    let e = cx.db.claim("k", json!("mine")).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
}

pub async fn doc_create_lost_response_without_visible_tokens_is_ambiguous(cx: Ctx) {
    cx.store.hide_write_meta(true);
    cx.store.inject(Op::Put, Fault::LoseResponse);
    let calls = Calls::new();
    let e = cx.db.doc("n").unwrap().update_or_insert(json!(0), counting(&calls, incr)).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
    assert_eq!(calls.get(), 1, "never applied twice");
    assert_eq!(cx.raw_body("n").await.unwrap(), b"1");
}

pub async fn doc_cas_lost_response_back_to_same_bytes_is_not_retried_blindly(cx: Ctx) {
    // Our CAS lands, its response is lost, and another writer puts the old bytes back (same etag).
    // Without visible tokens an equal etag proves nothing: retrying would apply ours twice.
    let d = cx.db.doc("n").unwrap();
    d.update_or_insert(json!(0), Ok).await.unwrap();
    d.forget(); // the read-then-CAS path
    cx.store.hide_write_meta(true);
    let raw = cx.raw.clone();
    cx.lose_put_response_then(async move {
        raw.put("n", b"0", &Precondition::None, &Default::default()).await.unwrap();
    });
    let e = d.update(|v| Ok(json!(v.as_i64().unwrap() + 1))).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
    assert_eq!(cx.raw_body("n").await.unwrap(), b"0");
}

pub async fn claim_timed_out_attempt_landing_late_still_wins(cx: Ctx) {
    // The first put times out client-side but reaches the store just before the retry: the
    // retry's 412 is our own write, so we won.
    cx.store.inject(Op::Put, Fault::Late);
    let c = cx.db.claim("k", json!("mine")).await.unwrap();
    assert!(c.won, "our own late write is a win");
    assert_eq!(c.value, json!("mine"));
}

pub async fn doc_timed_out_attempt_landing_late_is_applied_once(cx: Ctx) {
    let d = cx.db.doc("n").unwrap();
    d.update_or_insert(json!(0), Ok).await.unwrap();
    cx.store.inject(Op::Put, Fault::Late);
    let calls = Calls::new();
    let v = d.update(counting(&calls, incr)).await.unwrap();
    assert_eq!((v, calls.get()), (json!(1), 1));
    assert_eq!(cx.raw_body("n").await.unwrap(), b"1");
}

pub async fn doc_create_lost_response_then_layer0_cas_on_top_is_not_reapplied(cx: Ctx) {
    // Our create lands (response lost); a layer-0 ifMatch put (which knows neither the history nor
    // the origin of what it replaces) lands on top before the read-back. Nothing proves whose
    // create it was any more: an AmbiguousWriteError, and `fn` is never applied twice.
    let peer = cx.peer();
    cx.lose_put_response_then(async move {
        let o = peer.objects();
        let etag = o.get("n").await.unwrap().unwrap().etag;
        o.put("n", br#"{"count":5}"#, Precondition::IfMatch(etag)).await.unwrap().unwrap();
    });
    let calls = Calls::new();
    let e = cx.db.doc("n").unwrap().update_or_insert(json!({"count": 0}), counting(&calls, add(1))).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
    assert_eq!(calls.get(), 1);
    assert_eq!(cx.raw_body("n").await.unwrap(), br#"{"count":5}"#);
}

pub async fn failed_read_back_is_an_ambiguous_write(cx: Ctx) {
    cx.store.inject(Op::Put, Fault::LoseResponse);
    for _ in 0..4 {
        cx.store.inject(Op::Get, Fault::Status(503, "SlowDown"));
    }
    let e = cx.db.claim("k", json!(1)).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
}

pub async fn plain_put_lost_response_then_overwritten_is_not_retried_blindly(cx: Ctx) {
    // A plain put has no read of its own: the hook runs just before the read-back.
    let raw = cx.raw.clone();
    cx.store.inject(Op::Put, Fault::LoseResponse);
    cx.store.inject(
        Op::Get,
        before(async move {
            raw.put("k", b"theirs", &Precondition::None, &Default::default()).await.unwrap();
        }),
    );
    let e = cx.db.objects().put("k", b"mine", Precondition::None).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
    assert_eq!(cx.raw_body("k").await.unwrap(), b"theirs", "the later write is not overwritten");
}

pub async fn released_lease_with_null_deadline_stays_readable(cx: Ctx) {
    cx.raw_put("job", br#"{"deadline_at":null,"epoch":3,"holder":null,"state":{"n":1}}"#).await;
    cx.db.cooperative_write("job", add(1)).await.unwrap();
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["deadline_at"], Value::Null, "not invented");
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    assert_eq!(l.epoch(), 4);
    cx.raw_put("far", br#"{"deadline_at":"9999-12-31T23:59:59-01:00","epoch":1,"holder":"h","state":null}"#).await;
    assert!(matches!(cx.db.lease("far", lease_opts(10.0, "a")).await.unwrap_err(), Error::Corrupt { .. }));
}

pub async fn claim_transport_error_before_landing_is_retried(cx: Ctx) {
    cx.store.inject(Op::Put, Fault::Transport);
    let c = cx.db.claim("k", json!(1)).await.unwrap();
    assert!(c.won);
    assert_eq!(cx.take_counts(), counts(1, 2), "put, read-back (absent), put again");
}

// ---------------------------------------------------------------- lease

pub async fn lease_fresh_has_epoch_one_and_random_holder(cx: Ctx) {
    let l = cx.db.lease("job", LeaseOptions::new(30.0)).await.unwrap().unwrap();
    assert_eq!(l.epoch(), 1);
    assert_eq!(l.holder().len(), 22);
    assert!(l.holder().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(l.state().unwrap(), Value::Null);
    assert_eq!(l.deadline_at(), cx.clock_now().plus_secs(30.0));
    assert_eq!(cx.take_counts(), counts(1, 1), "fresh lease = 2 requests");
    let other = cx.db.lease("job2", LeaseOptions::new(30.0)).await.unwrap().unwrap();
    assert_ne!(other.holder(), l.holder());
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["epoch"], json!(1));
    assert_eq!(stored["holder"], json!(l.holder()));
    assert_eq!(stored["deadline_at"], json!(l.deadline_at().to_rfc3339()));
    assert_eq!(stored["state"], Value::Null);
}

pub async fn lease_held_returns_none_without_calling_state_fn(cx: Ctx) {
    cx.peer().lease("job", lease_opts(30.0, "a")).await.unwrap().unwrap();
    let called = Calls::new();
    let f = |v: Option<Value>| {
        called.bump();
        Ok(v.unwrap_or_default())
    };
    let got = cx.db.lease_with_state("job", lease_opts(30.0, "b"), f).await.unwrap();
    assert!(got.is_none());
    assert_eq!(called.get(), 0, "stateFn is not called when the lease is held");
    assert_eq!(cx.take_counts(), counts(1, 0), "held = 1 request");
}

pub async fn lease_renew_extends_deadline(cx: Ctx) {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    cx.clock.advance(7.0);
    cx.take_counts();
    l.renew().await.unwrap();
    assert_eq!(cx.take_counts(), counts(0, 1), "renew = 1 request");
    assert_eq!(l.deadline_at(), cx.clock_now().plus_secs(10.0));
    cx.clock.advance(7.0);
    assert!(cx.peer().lease("job", lease_opts(10.0, "b")).await.unwrap().is_none(), "still held after renew");
}

pub async fn lease_release_then_reacquire_bumps_epoch_keeps_state(cx: Ctx) {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    l.write(&json!({"step": 3})).await.unwrap();
    cx.take_counts();
    l.release().await.unwrap();
    assert_eq!(cx.take_counts(), counts(0, 1), "release = 1 request");
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["holder"], Value::Null);
    assert_eq!(stored["deadline_at"], json!(cx.clock_now().to_rfc3339()));
    let again = cx.db.lease("job", lease_opts(10.0, "b")).await.unwrap().unwrap();
    assert_eq!(cx.take_counts(), counts(1, 1), "re-acquire = 2 requests");
    assert_eq!(again.epoch(), 2);
    assert_eq!(again.state().unwrap(), json!({"step": 3}), "state survives release");
}

pub async fn lease_expired_is_stolen_and_old_handle_fenced(cx: Ctx) {
    let old = cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    old.write(&json!("work")).await.unwrap();
    cx.clock.advance(10.5);
    let new = cx.db.lease("job", lease_opts(10.0, "b")).await.unwrap().unwrap();
    assert_eq!(cx.take_counts(), counts(1, 1), "steal = 2 requests");
    assert_eq!(new.epoch(), 2);
    assert_eq!(new.state().unwrap(), json!("work"), "a steal keeps the state");
    assert!(lost(&old.renew().await.unwrap_err()));
    assert!(lost(&old.release().await.unwrap_err()));
    assert!(lost(&old.write(&json!(1)).await.unwrap_err()));
    new.renew().await.unwrap();
}

pub async fn lease_no_steal_when_steal_if_expired_false(cx: Ctx) {
    cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    cx.clock.advance(60.0);
    let opts = lease_opts(10.0, "b").steal_if_expired(false);
    assert!(cx.db.lease("job", opts.clone()).await.unwrap().is_none());
    assert_eq!(cx.take_counts(), counts(1, 0));
    assert!(cx.db.lease("job", opts.steal_if_expired(true)).await.unwrap().is_some());
}

pub async fn lease_expiry_boundary_is_inclusive(cx: Ctx) {
    let l = cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    cx.clock.set(fencepost::Timestamp::from_micros(l.deadline_at().as_micros() - 1));
    assert!(cx.db.lease("job", lease_opts(10.0, "b")).await.unwrap().is_none(), "1µs before the deadline: held");
    cx.clock.set(l.deadline_at());
    let stolen = cx.db.lease("job", lease_opts(10.0, "b")).await.unwrap();
    assert_eq!(stolen.map(|s| s.epoch()), Some(2), "at the deadline: expired");
}

pub async fn lease_ttl_must_be_positive(cx: Ctx) {
    for ttl in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = cx.db.lease("job", LeaseOptions::new(ttl)).await.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "ttl {ttl}: {e}");
    }
    assert!(matches!(cx.db.lease("job", lease_opts(1.0, "")).await.unwrap_err(), Error::InvalidArgument(_)));
    assert_eq!(cx.take_counts().total(), 0);
    assert!(cx.raw_body("job").await.is_none());
}

pub async fn lease_reacquire_by_same_holder_fences_old_handle(cx: Ctx) {
    let first = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    let second = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    assert_eq!(second.epoch(), 2);
    assert!(lost(&first.renew().await.unwrap_err()), "old period is fenced");
    cx.clock.advance(11.0);
    let third = cx.db.lease("job", lease_opts(10.0, "a").steal_if_expired(false)).await.unwrap().unwrap();
    assert_eq!(third.epoch(), 3, "a holder may always take its own lease back");
    assert!(lost(&second.write(&json!(1)).await.unwrap_err()));
}

pub async fn lease_deleted_document_fences(cx: Ctx) {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    cx.raw.delete("job").await.unwrap();
    assert!(lost(&l.renew().await.unwrap_err()));
    assert!(cx.raw_body("job").await.is_none(), "nothing recreated");
}

pub async fn lease_writes_after_release_fail(cx: Ctx) {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    l.release_with(&json!("done")).await.unwrap();
    let before = cx.raw_body("job").await;
    cx.take_counts();
    assert!(lost(&l.renew().await.unwrap_err()));
    assert!(lost(&l.write(&json!(1)).await.unwrap_err()));
    assert!(lost(&l.update_state(Ok).await.unwrap_err()));
    assert!(lost(&l.release().await.unwrap_err()));
    assert_eq!(cx.take_counts().total(), 0, "a released handle does not even ask");
    assert_eq!(cx.raw_body("job").await, before);
    let stored: Value = serde_json::from_slice(&before.unwrap()).unwrap();
    assert_eq!(stored["state"], json!("done"));
}

pub async fn lease_race_has_exactly_one_acquirer(cx: Ctx) {
    let dbs: Vec<_> = (0..10).map(|_| cx.peer()).collect();
    let got = join_all(dbs.iter().map(|db| db.lease("job", LeaseOptions::new(30.0)))).await;
    let holders: Vec<_> = got.into_iter().filter_map(Result::unwrap).collect();
    assert_eq!(holders.len(), 1);
    assert_eq!(holders[0].epoch(), 1);
}

pub async fn lease_state_fn_seeds_transitions_and_aborts(cx: Ctx) {
    let seen = Mutex::new(Vec::new());
    let seed = |prev: Option<Value>| {
        seen.lock().unwrap().push(prev);
        Ok(json!({"runs": 1}))
    };
    let l = cx.db.lease_with_state("job", lease_opts(10.0, "a"), seed).await.unwrap().unwrap();
    assert_eq!(l.state().unwrap(), json!({"runs": 1}));
    assert_eq!(seen.lock().unwrap().as_slice(), &[None], "fresh creation sees null (None)");
    l.release().await.unwrap();
    let bump = |prev: Option<Value>| Ok(json!({"runs": prev.unwrap()["runs"].as_i64().unwrap() + 1}));
    let l2 = cx.db.lease_with_state("job", lease_opts(10.0, "b"), bump).await.unwrap().unwrap();
    assert_eq!(l2.state().unwrap(), json!({"runs": 2}));
    l2.release().await.unwrap();
    let before = cx.raw_body("job").await;
    cx.take_counts();
    let fail = |_: Option<Value>| Err(Error::invalid("refusing: job already finished"));
    let e = cx.db.lease_with_state("job", lease_opts(10.0, "c"), fail).await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(ref m) if m.contains("refusing")), "{e}");
    assert_eq!(cx.take_counts(), counts(1, 0), "nothing written");
    assert_eq!(cx.raw_body("job").await, before);
}

pub async fn lease_corrupt_document_is_typed_error_and_untouched(cx: Ctx) {
    let bad: [&[u8]; 8] = [
        b"not json",
        b"[]",
        br#"{"epoch":"1","holder":"a","deadline_at":"2026-01-01T00:00:00.000000Z","state":null}"#,
        br#"{"epoch":-1,"holder":"a","deadline_at":"2026-01-01T00:00:00.000000Z","state":null}"#,
        br#"{"epoch":1,"holder":5,"deadline_at":"2026-01-01T00:00:00.000000Z","state":null}"#,
        br#"{"epoch":1,"holder":"a","deadline_at":"yesterday","state":null}"#,
        br#"{"holder":"a","deadline_at":"2026-01-01T00:00:00.000000Z"}"#,
        b"\xff\xfe",
    ];
    for body in bad {
        cx.raw_put("job", body).await;
        let e = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        assert!(matches!(cx.db.attach_lease("job", "a", 10.0).await.unwrap_err(), Error::Corrupt { .. }));
        assert!(matches!(cx.db.cooperative_write("job", Ok::<Value, _>).await.unwrap_err(), Error::Corrupt { .. }));
        assert_eq!(cx.raw_body("job").await.unwrap(), body, "never overwritten");
    }
    assert_eq!(cx.take_counts().put, 0);
}

pub async fn lease_unknown_fields_survive_every_rewrite(cx: Ctx) {
    // Another tool (CairnDB, a later fencepost) keeps its own field in the lease document.
    cx.raw_put(
        "job",
        br#"{"deadline_at":"2025-01-01T00:00:00+00:00","epoch":4,"holder":null,"note":{"by":"py"},"state":1}"#,
    )
    .await;
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    assert_eq!(l.epoch(), 5);
    cx.peer().cooperative_write("job", add(1)).await.unwrap();
    l.renew().await.unwrap();
    l.release().await.unwrap();
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["note"], json!({"by": "py"}));
    assert_eq!(stored["state"], json!({"count": 1}));
}

pub async fn lease_lost_acquire_response_still_holds(cx: Ctx) {
    cx.store.inject(Op::Put, Fault::LoseResponse);
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().expect("learns it holds the lease");
    assert_eq!(l.epoch(), 1);
    l.renew().await.unwrap();
    assert!(cx.peer().lease("job", lease_opts(10.0, "b")).await.unwrap().is_none());
}

pub async fn lease_lost_renew_response_then_cooperative_write(cx: Ctx) {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    // The renew lands but its response is lost, and a cooperative write lands on top before the
    // read-back: the renew is known to have landed; the next write absorbs the cooperative state.
    let peer = cx.peer();
    cx.store.inject(Op::Put, Fault::LoseResponse);
    cx.store.inject(
        Op::Get,
        before(async move {
            peer.cooperative_write("job", |_| Ok(json!("cancel"))).await.unwrap();
        }),
    );
    l.renew().await.unwrap();
    assert_eq!(l.etag(), None, "landed, then superseded");
    l.update_state(|v| Ok(json!([v, "seen"]))).await.unwrap();
    assert_eq!(l.state().unwrap(), json!(["cancel", "seen"]));
}

// ---------------------------------------------------------------- cooperative writes

async fn held(cx: &Ctx) -> fencepost::Lease {
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    l.write(&json!({"count": 0})).await.unwrap();
    cx.take_counts();
    l
}

pub async fn cooperative_write_observed_on_renew_without_fencing(cx: Ctx) {
    let l = held(&cx).await;
    let s = cx.peer().cooperative_write("job", |_| Ok(json!({"cancel": true}))).await.unwrap();
    assert_eq!(s, Some(json!({"cancel": true})));
    l.renew().await.unwrap();
    assert_eq!(cx.take_counts(), counts(1, 2), "renew after a cooperative write = 3 requests");
    assert_eq!(l.state().unwrap(), json!({"cancel": true}));
    assert_eq!(l.epoch(), 1, "not fenced");
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["epoch"], json!(1));
    assert_eq!(stored["holder"], json!("a"));
}

pub async fn cooperative_write_merged_by_update_state(cx: Ctx) {
    let l = held(&cx).await;
    cx.peer().cooperative_write("job", add(10)).await.unwrap();
    let written = l.update_state(add(1)).await.unwrap();
    assert_eq!(written, json!({"count": 11}));
    assert_eq!(cx.take_counts(), counts(1, 2));
}

pub async fn cooperative_write_discarded_by_write(cx: Ctx) {
    let l = held(&cx).await;
    cx.peer().cooperative_write("job", add(10)).await.unwrap();
    l.write(&json!({"count": 5})).await.unwrap();
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["state"], json!({"count": 5}));
}

pub async fn cooperative_write_kept_by_release(cx: Ctx) {
    let l = held(&cx).await;
    cx.peer().cooperative_write("job", add(10)).await.unwrap();
    l.release().await.unwrap();
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["state"], json!({"count": 10}));
    assert_eq!(stored["holder"], Value::Null);
}

pub async fn cooperative_write_missing_lease_is_none(cx: Ctx) {
    let called = Calls::new();
    let got = cx
        .db
        .cooperative_write("nope", |v: Value| {
            called.bump();
            Ok(v)
        })
        .await
        .unwrap();
    assert_eq!(got, None);
    assert_eq!(called.get(), 0);
    assert_eq!(cx.take_counts(), counts(1, 0));
    held(&cx).await;
    cx.db.cooperative_write("job", add(1)).await.unwrap();
    assert_eq!(cx.take_counts(), counts(1, 1), "cooperative write = 2 requests");
}

pub async fn cooperative_write_stream_exhausts_patience(cx: Ctx) {
    let l = held(&cx).await;
    for _ in 0..12 {
        let peer = cx.peer();
        cx.store.inject(
            Op::Put,
            before(async move {
                peer.cooperative_write("job", add(1)).await.unwrap();
            }),
        );
    }
    let e = l.renew().await.unwrap_err();
    assert!(lost(&e), "{e}");
}

pub async fn cooperative_write_lost_response_applied_once(cx: Ctx) {
    let _l = held(&cx).await;
    // Our cooperative write lands but its response is lost; another one lands on top before the
    // read-back, which finds our token in the history: applied once, not retried.
    let peer = cx.peer();
    cx.lose_put_response_then(async move {
        peer.cooperative_write("job", add(100)).await.unwrap();
    });
    let got = cx.db.cooperative_write("job", add(1)).await.unwrap();
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!(stored["state"]["count"].as_i64().unwrap(), 101, "ours once, theirs once (got {got:?})");
}

// ---------------------------------------------------------------- attach

pub async fn attach_gives_handle_without_writing(cx: Ctx) {
    let l = cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    l.write(&json!("s")).await.unwrap();
    let before = cx.raw_body("job").await;
    let a = cx.db.attach_lease("job", "a", 10.0).await.unwrap().unwrap();
    assert_eq!(cx.take_counts(), counts(1, 0), "attach = 1 request, nothing written");
    assert_eq!(cx.raw_body("job").await, before);
    assert_eq!((a.epoch(), a.holder(), a.state().unwrap()), (1, "a", json!("s")));
    assert_eq!(a.deadline_at(), l.deadline_at(), "no deadline change");
}

pub async fn attach_two_handles_do_not_fence_each_other(cx: Ctx) {
    let l = cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    let a = cx.db.attach_lease("job", "a", 10.0).await.unwrap().unwrap();
    a.update_state(add(1)).await.unwrap();
    l.update_state(add(1)).await.unwrap();
    a.renew().await.unwrap();
    assert_eq!(a.state().unwrap(), json!({"count": 2}));
    l.renew().await.unwrap();
    assert_eq!(l.epoch(), a.epoch());
}

pub async fn attach_refused_for_other_absent_released_expired(cx: Ctx) {
    assert!(cx.db.attach_lease("job", "a", 10.0).await.unwrap().is_none(), "absent");
    let l = cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    assert!(cx.db.attach_lease("job", "b", 10.0).await.unwrap().is_none(), "another holder");
    cx.clock.advance(10.0);
    assert!(cx.db.attach_lease("job", "a", 10.0).await.unwrap().is_none(), "expired (inclusive)");
    cx.clock.advance(-5.0);
    l.release().await.unwrap();
    assert!(cx.db.attach_lease("job", "a", 10.0).await.unwrap().is_none(), "released");
    assert_eq!(cx.take_counts().put, 0);
}

pub async fn attach_handle_fenced_by_steal(cx: Ctx) {
    cx.peer().lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    let a = cx.db.attach_lease("job", "a", 10.0).await.unwrap().unwrap();
    cx.clock.advance(10.0);
    cx.peer().lease("job", lease_opts(10.0, "b")).await.unwrap().unwrap();
    assert!(lost(&a.renew().await.unwrap_err()));
}

// ---------------------------------------------------------------- doc

pub async fn doc_creates_from_create(cx: Ctx) {
    let d = cx.db.doc("cfg").unwrap();
    assert_eq!(d.get().await.unwrap(), None);
    let v = d.update_or_insert(json!({"count": 41}), add(1)).await.unwrap();
    assert_eq!(v, json!({"count": 42}));
    let got = d.get().await.unwrap().unwrap();
    assert_eq!(got.value, json!({"count": 42}));
    assert_eq!(cx.raw_body("cfg").await.unwrap(), br#"{"count":42}"#);
}

pub async fn doc_retries_on_conflict(cx: Ctx) {
    let d = cx.db.doc("cfg").unwrap();
    d.update_or_insert(json!({"count": 0}), Ok).await.unwrap();
    d.forget(); // the read-then-CAS path
    cx.store.inject(Op::Put, Fault::competing_put(cx.raw.clone(), "cfg", br#"{"count":10}"#.to_vec()));
    let calls = Calls::new();
    cx.take_counts();
    let v = d.update(counting(&calls, add(1))).await.unwrap();
    assert_eq!(v, json!({"count": 11}));
    assert_eq!(calls.get(), 2);
    assert_eq!(cx.take_counts(), counts(2, 2), "2 requests per attempt");
}

pub async fn doc_absent_without_create_is_error(cx: Ctx) {
    let e = cx.db.doc::<Value>("cfg").unwrap().update(Ok).await.unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert!(cx.raw_body("cfg").await.is_none());
}

pub async fn doc_delete_is_idempotent(cx: Ctx) {
    let d = cx.db.doc("cfg").unwrap();
    d.update_or_insert(json!(1), Ok).await.unwrap();
    d.delete().await.unwrap();
    d.delete().await.unwrap();
    assert_eq!(d.get().await.unwrap(), None);
}

pub async fn doc_create_race_converges(cx: Ctx) {
    let dbs: Vec<_> = (0..8).map(|_| cx.peer()).collect();
    let docs: Vec<_> = dbs.iter().map(|db| db.doc("counter").unwrap()).collect();
    let results = join_all(docs.iter().map(|d| async move {
        d.update_with(
            UpdateOptions { create: Some(json!({"count": 0})), max_attempts: 50, ..Default::default() },
            add(1),
        )
        .await
    }))
    .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(cx.db.doc::<Value>("counter").unwrap().get().await.unwrap().unwrap().value, json!({"count": 8}));
}

pub async fn doc_max_attempts_is_honoured(cx: Ctx) {
    let d = cx.db.doc("cfg").unwrap();
    d.update_or_insert(json!({"count": 0}), Ok).await.unwrap();
    for i in 0..3 {
        cx.store.inject(
            Op::Put,
            Fault::competing_put(cx.raw.clone(), "cfg", format!(r#"{{"count":{}}}"#, 100 + i).into_bytes()),
        );
    }
    d.forget(); // the read-then-CAS path
    let calls = Calls::new();
    let e =
        d.update_with(UpdateOptions { max_attempts: 3, ..Default::default() }, counting(&calls, Ok)).await.unwrap_err();
    assert!(matches!(e, Error::Conflict { attempts: 3, .. }), "{e}");
    assert_eq!(calls.get(), 3, "the function runs exactly max_attempts times");
}

pub async fn doc_lost_response_applied_once(cx: Ctx) {
    let d = cx.db.doc("counter").unwrap();
    d.update_or_insert(json!({"count": 0}), Ok).await.unwrap();
    d.forget(); // the read-then-CAS path
    // Our update lands but the response is lost; two other increments land on top before we read
    // back. The read-back finds our token in the history: applied once, not retried.
    let peer = cx.peer();
    cx.lose_put_response_then(async move {
        let d = peer.doc("counter").unwrap();
        d.update(add(10)).await.unwrap();
        d.update(add(100)).await.unwrap();
    });
    let v = d.update(add(1)).await.unwrap();
    assert_eq!(v, json!({"count": 1}));
    assert_eq!(d.get().await.unwrap().unwrap().value, json!({"count": 111}));
}

pub async fn doc_unprovable_outcome_is_ambiguous_error(cx: Ctx) {
    let d = cx.db.doc("cfg").unwrap();
    d.update_or_insert(json!({"count": 0}), Ok).await.unwrap();
    d.forget(); // the read-then-CAS path
    // Our write lands, its response is lost, and then a writer that keeps no history overwrites it:
    // nothing left proves what happened to ours.
    let raw = cx.raw.clone();
    cx.lose_put_response_then(async move {
        raw.put("cfg", br#"{"count":7}"#, &Precondition::None, &Default::default()).await.unwrap();
    });
    let e = d.update(add(1)).await.unwrap_err();
    assert!(matches!(e, Error::AmbiguousWrite { .. }), "{e}");
}

pub async fn doc_update_from_the_handles_view_is_one_request(cx: Ctx) {
    let d = cx.db.doc("n").unwrap();
    d.update_or_insert(json!(0), incr).await.unwrap();
    assert_eq!(cx.take_counts(), counts(1, 1), "the first update reads");
    for n in 2..=4 {
        assert_eq!(d.update(incr).await.unwrap(), json!(n));
        assert_eq!(cx.take_counts(), counts(0, 1), "then one guarded PUT per update");
    }
    // A clone (with a cancel) shares the view; a get refreshes it.
    let cancel = Cancel::new();
    d.with_cancel(&cancel).update(incr).await.unwrap();
    assert_eq!(cx.take_counts(), counts(0, 1));
    cx.peer().doc("n").unwrap().update(incr).await.unwrap();
    assert_eq!(d.get().await.unwrap().unwrap().value, json!(6));
    cx.take_counts();
    assert_eq!(d.update(incr).await.unwrap(), json!(7));
    assert_eq!(cx.take_counts(), counts(0, 1), "after a get, too");
    assert_eq!(cx.raw_body("n").await.unwrap(), b"7");
}

pub async fn doc_update_from_a_stale_view_costs_one_extra_put(cx: Ctx) {
    let d = cx.db.doc("n").unwrap();
    d.update_or_insert(json!(0), incr).await.unwrap();
    cx.peer().doc("n").unwrap().update(incr).await.unwrap();
    cx.take_counts();
    let calls = Calls::new();
    let v = d.update(counting(&calls, incr)).await.unwrap();
    assert_eq!(v, json!(3), "exact: the other writer's increment is kept");
    assert_eq!(calls.get(), 2, "f ran on the remembered value, then on the current one");
    assert_eq!(cx.take_counts(), counts(1, 2), "the refused guarded PUT, then read and CAS");
    // A lost response on the guarded PUT is resolved by the read-back, as every write is.
    cx.store.inject(Op::Put, Fault::LoseResponse);
    assert_eq!(d.update(incr).await.unwrap(), json!(4));
    assert_eq!(cx.raw_body("n").await.unwrap(), b"4", "applied once");
    // Forgotten (as after a delete): the next update reads first.
    d.forget();
    cx.take_counts();
    d.update(incr).await.unwrap();
    assert_eq!(cx.take_counts(), counts(1, 1));
    d.delete().await.unwrap();
    cx.take_counts();
    assert!(matches!(d.update(incr).await, Err(Error::NotFound { .. })));
    assert_eq!(cx.take_counts(), counts(1, 0), "a deleted doc is read, not written blindly");
}

// ---------------------------------------------------------------- counter

pub async fn counter_is_exact_under_concurrency_and_lost_responses(cx: Ctx) {
    let peers: Vec<_> = (0..4).map(|_| cx.peer()).collect();
    let counters: Vec<_> = peers.iter().map(|db| db.counter_with_shards("hits", 4).unwrap()).collect();
    let adds = counters.iter().flat_map(|c| (0..10).map(move |_| c.add(1)));
    assert!(join_all(adds).await.into_iter().all(|r| r.is_ok()));
    let mine = cx.db.counter_with_shards("hits", 4).unwrap();
    cx.take_counts();
    assert_eq!(mine.value().await.unwrap(), 40);
    assert_eq!(cx.take_counts(), counts(4, 0), "value reads every shard");
    // A lost response on an add is resolved by reading back: counted once.
    cx.store.inject(Op::Put, Fault::LoseResponse);
    mine.add(5).await.unwrap();
    mine.add(-3).await.unwrap();
    assert_eq!(mine.value().await.unwrap(), 42);
    // The shards are docs at key/<i>.
    let keys = cx.raw.list("hits/").await.unwrap();
    assert!(keys.iter().all(|k| ["hits/0", "hits/1", "hits/2", "hits/3"].contains(&k.as_str())), "{keys:?}");
    // After value() every shard's handle knows its version: an add is one request.
    cx.take_counts();
    mine.add(1).await.unwrap();
    assert_eq!(cx.take_counts(), counts(0, 1));
    for bad in [0, 1001] {
        assert!(matches!(cx.db.counter_with_shards("c", bad), Err(Error::InvalidArgument(_))), "{bad} shards");
    }
    assert!(matches!(mine.add(1 << 53).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(cx.db.counter("log/x"), Err(Error::InvalidArgument(_))), "key rules");
}

pub async fn fault_store_limit_writes_answers_429_past_the_limit(cx: Ctx) {
    let clock = fencepost::testing::ManualClock::new(fencepost::testing::ManualClock::START_2026);
    let store = fencepost::testing::FaultStore::with_clock(cx.raw.clone(), fencepost::Shared::new(clock.clone()));
    store.limit_writes(Some(2));
    let (none, meta) = (Precondition::None, Default::default());
    let put = |body: &'static [u8]| store.put("k", body, &none, &meta);
    assert!(put(b"1").await.is_ok() && put(b"2").await.is_ok());
    let e = put(b"3").await.unwrap_err();
    assert_eq!((e.status, e.code.as_deref()), (Some(429), Some("SlowDown")));
    assert!(store.get("k").await.is_ok(), "reads are not limited");
    assert!(store.put("other", b"x", &Precondition::None, &Default::default()).await.is_ok(), "per key");
    clock.advance(1.0);
    assert!(put(b"4").await.is_ok(), "a second later");
    store.limit_writes(None);
    assert!(put(b"5").await.is_ok() && put(b"6").await.is_ok() && put(b"7").await.is_ok());
    assert_eq!(cx.raw_body("k").await.unwrap(), b"7");
}

// ---------------------------------------------------------------- objects (layer 0)

pub async fn objects_conditional_puts(cx: Ctx) {
    let o = cx.db.objects();
    let w = o.put("k", b"one", Precondition::IfAbsent).await.unwrap().unwrap();
    let etag = w.etag.unwrap();
    assert!(o.put("k", b"two", Precondition::IfAbsent).await.unwrap().is_none());
    assert!(o.put("k", b"two", Precondition::IfMatch("0123".into())).await.unwrap().is_none());
    // An etag no store of this kind gives (not even a GCS generation number) matches nothing.
    for key in ["k", "missing"] {
        let foreign = o.put(key, b"x", Precondition::IfMatch("0f-not-an-etag".into())).await.unwrap();
        assert!(foreign.is_none(), "a foreign etag on {key}");
    }
    assert!(
        o.put("missing", b"x", Precondition::IfMatch(etag.clone())).await.unwrap().is_none(),
        "If-Match on a missing key fails"
    );
    let got = o.get("k").await.unwrap().unwrap();
    assert_eq!((got.body.as_slice(), got.etag.as_str()), (&b"one"[..], etag.as_str()));
    let w2 = o.put("k", b"two", Precondition::IfMatch(etag.clone())).await.unwrap().unwrap();
    assert_ne!(w2.etag.as_deref(), Some(etag.as_str()));
    o.put("k", b"three", Precondition::None).await.unwrap().unwrap();
    assert_eq!(o.get("k").await.unwrap().unwrap().body, b"three");
    let w3 = o
        .put("k", b"four", Precondition::IfMatch(format!("\"{}\"", o.get("k").await.unwrap().unwrap().etag)))
        .await
        .unwrap();
    assert!(w3.is_some(), "a quoted (HTTP-style) etag is the same etag");
    for bad in ["*", "", "\"\""] {
        let e = o.put("k", b"x", Precondition::IfMatch(bad.into())).await.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "ifMatch {bad:?}: {e}");
    }
    o.delete("k").await.unwrap();
    o.delete("k").await.unwrap();
    assert!(o.get("k").await.unwrap().is_none());
    assert!(o.get("missing").await.unwrap().is_none());
    assert!(matches!(o.get("log/1").await.unwrap_err(), Error::InvalidArgument(_)));
}

pub async fn objects_conditional_get_answers_not_modified(cx: Ctx) {
    use fencepost::store::IfChanged;
    let o = cx.db.objects();
    let etag = o.put("k", b"one", Precondition::IfAbsent).await.unwrap().unwrap().etag.unwrap();
    cx.take_counts();
    assert_eq!(o.get_if_changed("k", &etag).await.unwrap(), IfChanged::NotModified);
    let quoted = format!("\"{etag}\"");
    assert_eq!(o.get_if_changed("k", &quoted).await.unwrap(), IfChanged::NotModified, "a quoted etag is the same");
    assert_eq!(cx.take_counts(), counts(2, 0), "one request each");
    // The store itself answers "not modified" (a 304 without the body), not only fencepost's check.
    if cx.raw.conditional_get() && cx.server_answers_304 {
        assert_eq!(cx.raw.get_if_changed("k", &etag).await.unwrap(), IfChanged::NotModified);
    }
    let two = o.put("k", b"two", Precondition::IfMatch(etag.clone())).await.unwrap().unwrap().etag.unwrap();
    let IfChanged::Current(Some(now)) = o.get_if_changed("k", &etag).await.unwrap() else {
        panic!("a changed key answers its current version")
    };
    assert_eq!((now.body.as_slice(), now.etag.as_str()), (&b"two"[..], two.as_str()));
    o.delete("k").await.unwrap();
    assert_eq!(o.get_if_changed("k", &two).await.unwrap(), IfChanged::Current(None), "deleted");
    assert_eq!(o.get_if_changed("missing", &two).await.unwrap(), IfChanged::Current(None));
    assert!(matches!(o.get_if_changed("log/1", &two).await.unwrap_err(), Error::InvalidArgument(_)));
}

pub async fn objects_list_is_ascending_and_relative(cx: Ctx) {
    let o = cx.db.objects();
    for k in ["b/2", "a", "b/1", "c", "b/10"] {
        o.put(k, b"x", Precondition::None).await.unwrap();
    }
    assert_eq!(o.list("").await.unwrap(), ["a", "b/1", "b/10", "b/2", "c"]);
    assert_eq!(o.list("b/").await.unwrap(), ["b/1", "b/10", "b/2"]);
    assert!(o.list("zzz").await.unwrap().is_empty());
    assert_eq!(cx.take_counts().list, 3);
}

pub async fn objects_tricky_keys_round_trip(cx: Ctx) {
    let o = cx.db.objects();
    let keys = [
        "sp ace",
        "plus+sign",
        "per%cent",
        "eq=ual&amp?q#frag~t",
        "ünïcödé/ключ",
        "astral/😀𝄞",
        "dir/sub/leaf.json",
        "a'b\"c<d>",
    ];
    for (i, k) in keys.iter().enumerate() {
        o.put(k, format!("v{i}").as_bytes(), Precondition::IfAbsent).await.unwrap().unwrap_or_else(|| panic!("{k}"));
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(o.get(k).await.unwrap().unwrap().body, format!("v{i}").into_bytes(), "{k}");
    }
    let mut sorted: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    sorted.sort();
    assert_eq!(o.list("").await.unwrap(), sorted);
}

pub async fn objects_wait_for_appears_changes_and_times_out(cx: Ctx) {
    let o = cx.db.objects();
    let opts = WaitOptions { timeout: 3.0, poll_interval: 1.0, changed_from: None };
    let e = o.wait_for("k", &opts).await.unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert_eq!(cx.take_counts(), counts(4, 0), "one GET per poll: t=0,1,2,3");
    let w = o.put("k", b"v1", Precondition::None).await.unwrap().unwrap();
    let got = o.wait_for("k", &opts).await.unwrap();
    assert_eq!(got.body, b"v1");
    let changed = WaitOptions { changed_from: w.etag.clone(), ..opts };
    assert!(matches!(o.wait_for("k", &changed).await.unwrap_err(), Error::Timeout { .. }));
    let raw = cx.raw.clone();
    cx.store.inject(Op::Get, Fault::Pass);
    cx.store.inject(
        Op::Get,
        before(async move {
            raw.put("k", b"v2", &Precondition::None, &Default::default()).await.unwrap();
        }),
    );
    let got = o.wait_for("k", &changed).await.unwrap();
    assert_eq!(got.body, b"v2");
}

pub async fn objects_retries_transient_failures(cx: Ctx) {
    let o = cx.db.objects();
    cx.store.inject(Op::Get, Fault::Status(500, "InternalError"));
    cx.store.inject(Op::Get, Fault::Status(503, "SlowDown"));
    cx.store.inject(Op::Get, Fault::Transport);
    assert!(o.get("k").await.unwrap().is_none());
    assert_eq!(cx.take_counts(), counts(4, 0));
    cx.store.inject(Op::Put, Fault::Status(409, "ConditionalRequestConflict"));
    cx.store.inject(Op::Put, Fault::Status(429, "TooManyRequests"));
    assert!(o.put("k", b"x", Precondition::IfAbsent).await.unwrap().is_some());
    assert_eq!(cx.take_counts(), counts(0, 3));
    cx.store.inject(Op::Put, Fault::Status(500, "InternalError"));
    assert!(o.put("k2", b"x", Precondition::IfAbsent).await.unwrap().is_some());
    assert_eq!(cx.take_counts(), counts(1, 2), "a 500 is ambiguous: read back, then retry");
}

pub async fn objects_fatal_errors_are_not_retried(cx: Ctx) {
    cx.store.inject(Op::Put, Fault::Status(403, "AccessDenied"));
    let e = cx.db.claim("k", json!(1)).await.unwrap_err();
    match e {
        Error::Storage(f) => {
            assert_eq!(f.code.as_deref(), Some("AccessDenied"));
            assert_eq!(f.status, Some(403));
            assert_eq!(f.key.as_deref(), Some("k"), "the refused request's key");
        }
        other => panic!("{other}"),
    }
    assert_eq!(cx.take_counts(), counts(0, 1));
}

pub async fn objects_retry_budget_is_bounded(cx: Ctx) {
    for _ in 0..4 {
        cx.store.inject(Op::Get, Fault::Status(503, "SlowDown"));
    }
    let e = cx.db.doc::<Value>("d").unwrap().get().await.unwrap_err();
    assert!(
        matches!(&e, Error::Storage(f) if f.code.as_deref() == Some("SlowDown") && f.key.as_deref() == Some("d")),
        "{e}"
    );
    assert_eq!(cx.take_counts(), counts(4, 0), "max_attempts = 4 in the suite");
    for _ in 0..4 {
        cx.store.inject(Op::Put, Fault::Status(409, "ConditionalRequestConflict"));
    }
    assert!(
        cx.db.objects().put("k", b"x", Precondition::IfAbsent).await.unwrap().is_none(),
        "conflict after retries = lost"
    );
    assert_eq!(cx.take_counts(), counts(0, 4));
    assert!(cx.raw_body("k").await.is_none());
}

// ---------------------------------------------------------------- cancellation

fn aborted(e: &Error) -> bool {
    matches!(e, Error::Aborted)
}

/// A hook that fires `cancel`, then never lets the request answer.
async fn cancel_and_hang(cancel: Cancel) {
    cancel.cancel();
    std::future::pending::<()>().await
}

pub async fn cancel_before_a_call_sends_nothing(cx: Ctx) {
    let c = Cancel::new();
    c.cancel();
    let db = cx.db.with_cancel(&c);
    assert!(aborted(&db.claim("k", json!(1)).await.unwrap_err()));
    assert!(aborted(&db.lease("job", lease_opts(10.0, "a")).await.unwrap_err()));
    assert!(aborted(&db.attach_lease("job", "a", 10.0).await.unwrap_err()));
    assert!(aborted(&db.cooperative_write("job", Ok::<Value, _>).await.unwrap_err()));
    let d = db.doc("d").unwrap();
    assert!(aborted(&d.get().await.unwrap_err()));
    assert!(aborted(&d.update_or_insert(json!(0), Ok).await.unwrap_err()));
    assert!(aborted(&d.delete().await.unwrap_err()));
    let o = db.objects();
    assert!(aborted(&o.get("k").await.unwrap_err()));
    assert!(aborted(&o.put("k", b"x", Precondition::None).await.unwrap_err()));
    assert!(aborted(&o.list("").await.unwrap_err()));
    assert!(aborted(&o.wait_for("k", &WaitOptions::default()).await.unwrap_err()));
    // A reason of the caller's own comes back as given; a handle without the cancel is unaffected.
    let shutdown = Cancel::new();
    shutdown.cancel_with(Error::invalid("shutting down"));
    let e = cx.db.doc::<Value>("d").unwrap().with_cancel(&shutdown).get().await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(ref m) if m == "shutting down"), "{e}");
    assert_eq!(cx.take_counts().total(), 0, "nothing sent");
    assert!(cx.raw.list("").await.unwrap().is_empty());
    assert!(cx.db.claim("k", json!(1)).await.unwrap().won);
}

pub async fn cancel_while_polling_stops_at_once(cx: Ctx) {
    // `wait_for` cancelled during its third poll: that request is abandoned, no other is made.
    let c = cancel_on_third_get(&cx);
    let opts = WaitOptions { timeout: 60.0, poll_interval: 1.0, changed_from: None };
    let started = cx.clock_now();
    let e = cx.db.objects().with_cancel(&c).wait_for("k", &opts).await.unwrap_err();
    assert!(aborted(&e), "{e}");
    assert_eq!(cx.take_counts(), counts(3, 0));
    assert!(cx.clock_now() < started.plus_secs(3.0), "no wait after the cancel");
}

pub async fn cancel_while_a_put_is_in_flight_resolves_by_read_back(cx: Ctx) {
    // Landed: the read-back finds our token, so the claim is still won (and only by us).
    let c = Cancel::new();
    cx.store.inject(Op::Put, after(cancel_and_hang(c.clone())));
    let claim = cx.db.with_cancel(&c).claim("k", json!("mine")).await.unwrap();
    assert!(claim.won, "a landed claim is never reported lost because of a cancel");
    assert_eq!(cx.take_counts(), counts(1, 1), "the put, one read-back");
    // Prompt: settled by that one read, in real time (a generous bound: it must not wait for a
    // timeout, which is what it would do if the abandoned put were awaited).
    let c = Cancel::new();
    let real = fencepost::SystemClock;
    let cancelled_at = std::sync::Arc::new(Mutex::new(None));
    let (c2, at) = (c.clone(), cancelled_at.clone());
    cx.store.inject(
        Op::Put,
        after(async move {
            *at.lock().unwrap() = Some(real.now().unwrap());
            cancel_and_hang(c2).await
        }),
    );
    assert!(cx.db.with_cancel(&c).claim("k3", json!("mine")).await.unwrap().won);
    let settled_in = cancelled_at.lock().unwrap().unwrap().secs_until(real.now().unwrap());
    assert!(settled_in < 1.0, "settled {settled_in} s after the cancel");
    cx.take_counts();
    assert!(!cx.peer().claim("k", json!("theirs")).await.unwrap().won);

    // Not there at the read-back: but the abandoned put may still reach the store (an aborted
    // request can), so "nothing was written" is not proven: ambiguous, caused by the cancel.
    let c = Cancel::new();
    cx.store.inject(Op::Put, before(cancel_and_hang(c.clone())));
    let e = cx.db.with_cancel(&c).claim("k2", json!("mine")).await.unwrap_err();
    assert!(matches!(&e, Error::AmbiguousWrite { cause: Some(cause), .. } if aborted(cause)), "{e:?}");
    assert_eq!(cx.take_counts(), counts(1, 1), "the put, one read-back, no retry");
    assert!(cx.raw_body("k2").await.is_none());

    // Landed, but the read-back cannot tell whose write it is: ambiguous, caused by the cancel.
    cx.store.hide_write_meta(true);
    let c = Cancel::new();
    cx.store.inject(Op::Put, after(cancel_and_hang(c.clone())));
    let calls = Calls::new();
    let e = cx.db.doc("n").unwrap().with_cancel(&c).update_or_insert(json!(0), counting(&calls, incr)).await;
    let e = e.unwrap_err();
    assert!(matches!(&e, Error::AmbiguousWrite { cause: Some(cause), .. } if aborted(cause)), "{e:?}");
    assert!(std::error::Error::source(&e).is_some(), "the cause is the error's source");
    assert_eq!(calls.get(), 1);
    assert_eq!(cx.raw_body("n").await.unwrap(), b"1");
}

// ---------------------------------------------------------------- lease lifecycle

fn waiting(ttl: f64, holder: &str, wait: f64) -> LeaseOptions {
    lease_opts(ttl, holder).wait(wait)
}

fn secs_since(cx: &Ctx, start: fencepost::Timestamp) -> f64 {
    start.secs_until(cx.clock_now())
}

pub async fn lease_wait_acquires_after_release(cx: Ctx) {
    let held = cx.peer().lease("job", lease_opts(60.0, "a")).await.unwrap().unwrap();
    // The holder releases just before the second poll.
    cx.store.inject(Op::Get, Fault::Pass);
    cx.store.inject(Op::Get, before(async move { held.release().await.unwrap() }));
    let start = cx.clock_now();
    let l = cx.db.lease("job", waiting(10.0, "b", 30.0)).await.unwrap().expect("acquired once released");
    assert_eq!(l.epoch(), 2);
    assert_eq!(cx.take_counts(), counts(2, 1), "one GET per held attempt, then the acquisition");
    assert!(secs_since(&cx, start) <= 0.1, "the first poll comes quickly");
}

pub async fn lease_wait_runs_out_with_none(cx: Ctx) {
    cx.peer().lease("job", lease_opts(600.0, "a")).await.unwrap().unwrap();
    let start = cx.clock_now();
    assert!(cx.db.lease("job", waiting(10.0, "b", 5.0)).await.unwrap().is_none());
    let waited = secs_since(&cx, start);
    assert!((5.0..5.01).contains(&waited), "tried until the end of the wait, not beyond: {waited}");
    let c = cx.take_counts();
    assert_eq!(c.put, 0);
    // Backoff from 0.1 s up to about 1 s: a handful of polls, not a spin.
    assert!((5..=20).contains(&c.get), "{c:?}");
    // A zero wait is a single attempt.
    assert!(cx.db.lease("job", waiting(10.0, "b", 0.0)).await.unwrap().is_none());
    assert_eq!(cx.take_counts(), counts(1, 0));
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = cx.db.lease("job", waiting(10.0, "b", bad)).await.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "wait {bad}: {e}");
    }
}

pub async fn lease_wait_steals_at_the_deadline(cx: Ctx) {
    let held = cx.peer().lease("job", lease_opts(3.0, "a")).await.unwrap().unwrap();
    let l = cx.db.lease("job", waiting(10.0, "b", 60.0)).await.unwrap().expect("stolen once expired");
    assert_eq!(l.epoch(), 2);
    let late = held.deadline_at().secs_until(cx.clock_now());
    assert!((0.0..0.01).contains(&late), "taken at the held deadline, {late} s after it");
}

pub async fn lease_wait_is_cancelled_at_once(cx: Ctx) {
    cx.peer().lease("job", lease_opts(60.0, "a")).await.unwrap().unwrap();
    let c = cancel_on_third_get(&cx);
    let start = cx.clock_now();
    let e = cx.db.with_cancel(&c).lease("job", waiting(10.0, "b", 30.0)).await.unwrap_err();
    assert!(aborted(&e), "{e}");
    assert_eq!(cx.take_counts(), counts(3, 0), "no attempt after the cancel");
    assert!(secs_since(&cx, start) < 2.0);
}

/// A cancel that fires during the third GET.
fn cancel_on_third_get(cx: &Ctx) -> Cancel {
    let c = Cancel::new();
    cx.store.inject(Op::Get, Fault::Pass);
    cx.store.inject(Op::Get, Fault::Pass);
    let c2 = c.clone();
    cx.store.inject(Op::Get, before(async move { c2.cancel() }));
    c
}

pub async fn lease_end_signal_fires_on_release_and_on_loss(cx: Ctx) {
    // Released through another handle on the same period: both see the end.
    let l = cx.db.lease("job", lease_opts(10.0, "a")).await.unwrap().unwrap();
    assert!(!l.ended().is_cancelled());
    let per_call = l.with_cancel(&Cancel::new());
    per_call.release().await.unwrap();
    assert!(l.is_released());
    assert!(l.ended().reason().as_ref().is_some_and(lost), "{:?}", l.ended().reason());
    cx.take_counts();
    assert!(lost(&l.renew().await.unwrap_err()));
    assert_eq!(cx.take_counts().total(), 0);

    // Lost: the first write that finds out ends the period; later writes make no request.
    let l = cx.db.lease("job2", lease_opts(10.0, "a")).await.unwrap().unwrap();
    cx.clock.advance(10.0);
    cx.peer().lease("job2", lease_opts(10.0, "b")).await.unwrap().unwrap();
    assert!(lost(&l.write(&json!(1)).await.unwrap_err()));
    assert!(l.ended().is_cancelled() && !l.is_released());
    cx.take_counts();
    assert!(lost(&l.renew().await.unwrap_err()));
    assert_eq!(cx.take_counts().total(), 0);

    // A cancelled call through a handle ends nothing.
    let l = cx.db.lease("job3", lease_opts(10.0, "a")).await.unwrap().unwrap();
    let c = Cancel::new();
    c.cancel();
    assert!(aborted(&l.with_cancel(&c).renew().await.unwrap_err()));
    assert!(!l.ended().is_cancelled());
    l.renew().await.unwrap();
}

pub async fn with_lease_runs_f_then_releases(cx: Ctx) {
    let db = cx.real_time();
    let got = db
        .with_lease("job", lease_opts(30.0, "a"), async |lease| {
            lease.write(&json!("working")).await?;
            Ok::<_, fencepost::Error>((lease.epoch(), lease.holder().to_owned()))
        })
        .await
        .unwrap();
    assert_eq!(got, Some((1, "a".to_owned())));
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!((&stored["holder"], &stored["state"]), (&Value::Null, &json!("working")), "released after f");
    // `f` releasing the lease itself is fine too.
    let got = db
        .with_lease("job", lease_opts(30.0, "a"), async |lease| {
            Ok::<_, fencepost::Error>(lease.release_with(&json!("done")).await.is_ok())
        })
        .await
        .unwrap();
    assert_eq!(got, Some(true));
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!((&stored["epoch"], &stored["state"]), (&json!(2), &json!("done")));
    // With a state transition: written with the new epoch; its error refuses before `f` runs.
    let runs = |prev: Option<u32>| match prev.unwrap_or(0) {
        0 => Ok(1),
        _ => Err(fencepost::Error::invalid("ran already")),
    };
    let first = db.with_lease_with_state("stamped", lease_opts(30.0, "a"), runs, async |lease| {
        Ok::<_, fencepost::Error>((lease.epoch(), lease.state()?))
    });
    assert_eq!(first.await.unwrap(), Some((1, 1)));
    let called = Calls::new();
    let again = db.with_lease_with_state("stamped", lease_opts(30.0, "a"), runs, async |_| {
        called.bump();
        Ok::<_, fencepost::Error>(())
    });
    assert!(matches!(again.await, Err(fencepost::Error::InvalidArgument(_))));
    assert_eq!(called.get(), 0, "f is not called when the transition refuses");
}

pub async fn with_lease_does_not_call_f_when_held(cx: Ctx) {
    cx.peer().lease("job", lease_opts(30.0, "b")).await.unwrap().unwrap();
    let called = Calls::new();
    let got = cx.db.with_lease("job", lease_opts(30.0, "a"), async |_| {
        called.bump();
        Ok::<_, fencepost::Error>(())
    });
    let got = got.await.unwrap();
    assert!(got.is_none() && called.get() == 0);
    assert_eq!(cx.take_counts(), counts(1, 0));
}

// ---------------------------------------------------------------- store clock

pub async fn store_clock_corrects_a_fast_client(cx: Ctx) {
    // A client whose clock is ten minutes fast, judging in the store's time. Real time here: the
    // store's clock is compared with it.
    let real_now = fencepost::SystemClock.now().unwrap();
    let fast = fencepost::testing::ManualClock::new(real_now.plus_secs(600.0));
    let options = fencepost::Options {
        clock: Some(fencepost::Shared::new(fast)),
        clock_source: fencepost::ClockSource::Store,
        ..Default::default()
    };
    let db = fencepost::Fencepost::new(cx.store.clone(), options).unwrap();
    assert_eq!(db.objects().store_offset(), Some(0.0), "no answer yet");
    db.objects().get("k").await.unwrap();
    if cx.raw.server_time().is_none() {
        // No clock of its own (memory store, R2 binding): the local clock serves.
        assert_eq!(db.objects().store_offset(), Some(0.0));
        return;
    }
    let offset = db.objects().store_offset().unwrap();
    assert!((offset + 600.0).abs() < 5.0, "the store's Date shows the client 10 minutes fast: {offset}");
    // A lease held in real time is not stolen by the fast client.
    let holder = cx.real_time();
    holder.lease("job", lease_opts(30.0, "a")).await.unwrap().unwrap();
    assert!(db.lease("job", lease_opts(30.0, "b")).await.unwrap().is_none());
}

// ---------------------------------------------------------------- events

pub async fn events_report_requests_calls_and_lease_transitions(cx: Ctx) {
    let (db, seen) = cx.observed();
    let take = || std::mem::take(&mut *seen.lock().unwrap());
    db.claim("cron/1", json!(1)).await.unwrap();
    assert_eq!(take(), ["request put cron/1 200 1 ok", "call claim cron/1 1 ok"]);
    db.claim("cron/1", json!(2)).await.unwrap();
    assert_eq!(take(), ["request put cron/1 412 1 refused", "request get cron/1 200 1 ok", "call claim cron/1 2 ok"]);

    let lease = db.lease("jobs/1", LeaseOptions::new(30.0)).await.unwrap().unwrap();
    assert_eq!(
        take(),
        [
            "request get jobs/1 404 1 absent",
            "request put jobs/1 200 1 ok",
            "lease jobs/1 1 acquired",
            "call lease jobs/1 2 ok"
        ]
    );
    lease.renew().await.unwrap();
    assert_eq!(take(), ["request put jobs/1 200 1 ok", "call lease.renew jobs/1 1 ok", "lease jobs/1 1 renewed"]);
    let broken = db.break_lease("jobs/1").await.unwrap().unwrap();
    assert_eq!(broken.epoch, 2);
    assert_eq!(
        take(),
        [
            "request get jobs/1 200 1 ok",
            "request put jobs/1 200 1 ok",
            "lease jobs/1 2 broken",
            "call breakLease jobs/1 2 ok"
        ]
    );
    assert!(matches!(lease.write(&json!("late")).await, Err(Error::LeaseLost { .. })));
    assert_eq!(
        take(),
        [
            "request put jobs/1 412 1 refused",
            "request get jobs/1 200 1 ok",
            "lease jobs/1 1 lost stolen",
            "call lease.write jobs/1 2 LEASE_LOST"
        ]
    );
    let next = db.lease("jobs/1", LeaseOptions::new(30.0)).await.unwrap().unwrap();
    next.release().await.unwrap();
    let lines = take();
    assert_eq!(
        lines[lines.len() - 3..],
        ["request put jobs/1 200 1 ok", "lease jobs/1 3 released", "call lease.release jobs/1 1 ok"]
    );

    // Each attempt of a retried request is a request event.
    cx.store.inject(Op::Get, Fault::Status(503, "SlowDown"));
    db.doc("stats").unwrap().update_or_insert(json!(0), incr).await.unwrap();
    assert_eq!(
        take(),
        [
            "request get stats 503 1 transient",
            "request get stats 404 2 absent",
            "request put stats 200 1 ok",
            "call doc.update stats 3 ok"
        ]
    );
    // A call that holds a lease throughout is one call: its acquisition, what its work does
    // through the lease and its release are its requests, reported once.
    // (On the system clock: keep-alive's deadline timer would fire during real requests on one that
    // moves by itself.)
    let (held_db, held_seen) = cx.observed_in_real_time();
    let take_held = || std::mem::take(&mut *held_seen.lock().unwrap());
    let ran = held_db
        .with_lease("held", LeaseOptions::new(30.0), async |lease: &fencepost::Lease| {
            lease.write(&json!("inside")).await
        })
        .await
        .unwrap();
    assert!(ran.is_some());
    let lines = take_held();
    assert_eq!(lines.iter().filter(|l| l.starts_with("call ")).collect::<Vec<_>>(), ["call withLease held 4 ok"]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("request ")).count(), 4, "{lines:?}");
    // A clone of the held lease that outlives its call makes calls of its own again.
    let mut kept = None;
    held_db
        .with_lease("kept", LeaseOptions::new(30.0), async |lease: &fencepost::Lease| {
            kept = Some(lease.clone());
            Ok::<_, Error>(())
        })
        .await
        .unwrap();
    take_held();
    assert!(kept.expect("f ran").renew().await.is_err(), "released with its call");
    let lines = take_held();
    assert!(lines.iter().any(|l| l.starts_with("call lease.renew kept ")), "{lines:?}");
    let done = held_db
        .once("report", fencepost::OnceOptions::new(30.0), |_: Cancel| async { Ok::<_, Error>(json!(1)) })
        .await
        .unwrap();
    assert!(matches!(done, fencepost::Once::Done { ran: true, .. }));
    let lines = take_held();
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("call ")).collect::<Vec<_>>(),
        ["call once report 3 ok"],
        "{lines:?}"
    );

    // A call that fails before any request still ends with an event; nothing was sent.
    assert!(db.claim("", json!(1)).await.is_err());
    assert_eq!(take(), ["call claim  0 INVALID_ARGUMENT"]);

    // The request events are exactly the requests the store saw.
    cx.take_counts();
    db.objects().put("o/1", b"x", Precondition::None).await.unwrap();
    db.objects().list("o/").await.unwrap();
    db.objects().delete("o/1").await.unwrap();
    let requests = take().iter().filter(|l| l.starts_with("request ")).count() as u32;
    assert_eq!(requests, cx.take_counts().total());
}

// ---------------------------------------------------------------- once

/// The run record `once` keeps in the lease document's state.
async fn once_record(cx: &Ctx, key: &str) -> Value {
    let stored: Value = serde_json::from_slice(&cx.raw_body(key).await.expect("a once record")).unwrap();
    stored["state"].clone()
}

pub async fn once_runs_then_answers_the_record(cx: Ctx) {
    use fencepost::{Once, OnceOptions};
    let db = cx.real_time();
    let ran = Calls::new();
    let first = db
        .once("report", OnceOptions::new(30.0), |_| async {
            ran.bump();
            Ok::<_, Error>(json!({"sent": 12}))
        })
        .await
        .unwrap();
    assert_eq!(first, Once::Done { value: json!({"sent": 12}), ran: true });
    assert_eq!(cx.take_counts(), counts(1, 2), "read, create, release");
    assert_eq!(once_record(&cx, "report").await, json!({"status": "done", "value": {"sent": 12}, "attempt": 1}));
    for _ in 0..2 {
        let again =
            db.once("report", fencepost::OnceOptions::new(30.0), |_| async { Ok::<_, Error>(json!("not run")) });
        assert_eq!(again.await.unwrap(), Once::Done { value: json!({"sent": 12}), ran: false });
        assert_eq!(cx.take_counts(), counts(1, 0), "a done record answers in one request");
    }
    assert_eq!(ran.get(), 1);
    // Typed results round-trip.
    let typed: Once<Vec<u32>> =
        db.once("typed", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(vec![1, 2]) }).await.unwrap();
    assert_eq!(typed, Once::Done { value: vec![1, 2], ran: true });
    // `f`'s cancel is its own: firing it does not end the run's lease, whose result is recorded.
    let own = db.once("own-cancel", OnceOptions::new(30.0), |cancel: Cancel| async move {
        cancel.cancel();
        Ok::<_, Error>(json!(1))
    });
    assert_eq!(own.await.unwrap(), Once::Done { value: json!(1), ran: true });
    assert_eq!(once_record(&cx, "own-cancel").await["status"], json!("done"));
}

pub async fn once_duplicate_during_a_run_waits_or_answers_running(cx: Ctx) {
    use fencepost::{Once, OnceOptions};
    let (db, peer) = (cx.real_time(), cx.real_time());
    let (finish, finished) = futures::channel::oneshot::channel::<()>();
    let (started, running) = futures::channel::oneshot::channel::<()>();
    let runner = db.once("job", OnceOptions::new(30.0), |_| async {
        started.send(()).unwrap();
        finished.await.ok();
        Ok::<_, Error>(json!("result"))
    });
    let duplicates = async {
        running.await.unwrap();
        let at_once =
            peer.once("job", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(json!("dup")) }).await.unwrap();
        let Once::Running { deadline_at } = at_once else { panic!("wait 0 answers running, got {at_once:?}") };
        assert!(deadline_at > fencepost::SystemClock.now().unwrap(), "the running holder's deadline");
        finish.send(()).unwrap();
        let latched = peer.once("job", OnceOptions::new(30.0).wait(10.0), |_| async { Ok::<_, Error>(json!("dup")) });
        latched.await.unwrap()
    };
    let (ran, latched) = futures::join!(runner, duplicates);
    assert_eq!(ran.unwrap(), Once::Done { value: json!("result"), ran: true });
    assert_eq!(latched, Once::Done { value: json!("result"), ran: false }, "wait latches onto the run");
}

pub async fn once_failure_is_recorded_and_run_again(cx: Ctx) {
    use fencepost::{Once, OnceOptions};
    let db = cx.real_time();
    let failed: Result<Once, Error> =
        db.once("job", OnceOptions::new(30.0), |_| async { Err(Error::invalid("disk full")) }).await;
    assert!(matches!(failed, Err(Error::InvalidArgument(ref m)) if m == "disk full"), "{failed:?}");
    let record = once_record(&cx, "job").await;
    assert_eq!((&record["status"], &record["attempt"]), (&json!("failed"), &json!(1)));
    assert_eq!(record["error"], json!({"name": "Error", "message": "invalid argument: disk full"}));
    let again = db.once("job", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(json!(2)) }).await.unwrap();
    assert_eq!(again, Once::Done { value: json!(2), ran: true });
    assert_eq!(once_record(&cx, "job").await["attempt"], json!(2));
    // A result that is not JSON is refused and recorded as a failure.
    let mut bad = std::collections::HashMap::new();
    bad.insert((1, 2), 3);
    let refused = db.once("bad", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(bad) }).await;
    assert!(matches!(refused, Err(Error::InvalidArgument(_))), "{refused:?}");
    assert_eq!(once_record(&cx, "bad").await["status"], json!("failed"));
}

pub async fn once_dead_runner_is_replaced_after_its_ttl(cx: Ctx) {
    use fencepost::{Once, OnceOptions};
    let db = cx.real_time();
    // A runner that took the run and died: its lease is never renewed nor released.
    let dead = LeaseOptions::new(0.4).holder("dead").initial_state(json!({"status": "running", "attempt": 1}));
    drop(db.lease("job", dead).await.unwrap().expect("acquired"));
    let busy = db.once("job", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(json!("new")) }).await.unwrap();
    assert!(matches!(busy, Once::Running { .. }), "{busy:?}");
    let replaced = db.once("job", OnceOptions::new(30.0).wait(5.0), |_| async { Ok::<_, Error>(json!("new")) });
    assert_eq!(replaced.await.unwrap(), Once::Done { value: json!("new"), ran: true });
    let stored: Value = serde_json::from_slice(&cx.raw_body("job").await.unwrap()).unwrap();
    assert_eq!((&stored["epoch"], &stored["state"]["attempt"]), (&json!(2), &json!(2)), "a new period, attempt 2");
}

pub async fn once_race_records_one_result(cx: Ctx) {
    use fencepost::{Once, OnceOptions};
    let runs = Calls::new();
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (db, runs) = (cx.real_time(), &runs);
            async move {
                db.once("job", OnceOptions::new(30.0).wait(10.0), |_| async move {
                    runs.bump();
                    Ok::<_, Error>(json!(i))
                })
                .await
                .unwrap()
            }
        })
        .collect();
    let answers = join_all(racers).await;
    let ran: Vec<_> = answers.iter().filter(|a| matches!(a, Once::Done { ran: true, .. })).collect();
    assert_eq!((ran.len(), runs.get()), (1, 1), "{answers:?}");
    let Once::Done { value, .. } = ran[0] else { unreachable!() };
    assert!(answers.iter().all(|a| matches!(a, Once::Done { value: v, .. } if v == value)), "{answers:?}");
}

// ---------------------------------------------------------------- semaphore

pub async fn semaphore_admits_at_most_limit_and_fences_each_slot(cx: Ctx) {
    use fencepost::PermitOptions;
    let sem = cx.db.semaphore("api", 3, 30.0).unwrap();
    let any = PermitOptions::default();
    let first = sem.acquire(any.clone()).await.unwrap().expect("a free slot");
    assert_eq!(cx.take_counts(), counts(1, 1), "2 requests when the first slot tried is free");
    let second = sem.acquire(any.clone()).await.unwrap().expect("a free slot");
    let third = sem.acquire(any.clone()).await.unwrap().expect("a free slot");
    cx.take_counts();
    let mut slots = vec![first.key().to_owned(), second.key().to_owned(), third.key().to_owned()];
    slots.sort();
    assert_eq!(slots, ["api/0", "api/1", "api/2"]);
    assert!(sem.acquire(any.clone()).await.unwrap().is_none(), "a fourth permit is refused");
    assert_eq!(cx.take_counts(), counts(3, 0), "one read per slot, nothing written");
    let holders = sem.holders().await.unwrap();
    assert_eq!(holders.iter().map(|p| p.slot).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(holders.iter().all(|p| p.epoch == 1 && p.deadline_at > cx.clock_now()));
    assert_eq!(cx.take_counts(), RequestCounts { list: 1, ..counts(3, 0) });
    second.release().await.unwrap();
    let again = sem.acquire(any.clone()).await.unwrap().expect("the released slot");
    assert_eq!((again.key(), again.epoch()), (second.key(), 2), "the slot's epoch increases");
    assert_eq!(sem.holders().await.unwrap().len(), 3);
    for (limit, key) in [(0, "api"), (1001, "api"), (2, "log/x")] {
        assert!(matches!(cx.db.semaphore(key, limit, 30.0), Err(Error::InvalidArgument(_))), "{key} {limit}");
    }
    assert!(matches!(cx.db.semaphore("api", 2, 0.0), Err(Error::InvalidArgument(_))));
}

pub async fn semaphore_expired_permit_is_taken_and_its_holder_fenced(cx: Ctx) {
    use fencepost::PermitOptions;
    let sem = cx.db.semaphore("one", 1, 10.0).unwrap();
    let stale = sem.acquire(PermitOptions::default().holder("a")).await.unwrap().unwrap();
    assert!(sem.acquire(PermitOptions::default()).await.unwrap().is_none());
    cx.clock.advance(10.5);
    assert!(sem.holders().await.unwrap().is_empty(), "an expired permit is not a holder");
    let fresh = sem.acquire(PermitOptions::default().holder("b")).await.unwrap().expect("expired: taken");
    assert_eq!(fresh.epoch(), 2);
    assert!(matches!(stale.write(&json!("late")).await, Err(Error::LeaseLost { .. })), "the old permit is fenced");
}

pub async fn semaphore_sixteen_acquirers_never_exceed_the_limit(cx: Ctx) {
    use fencepost::PermitOptions;
    use std::sync::atomic::{AtomicU32, Ordering};
    let (now, most, done) = (AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0));
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let db = cx.real_time();
            let (now, most, done) = (&now, &most, &done);
            async move {
                let sem = db.semaphore("pool", 3, 30.0).unwrap();
                let ran = sem
                    .with_permit(PermitOptions::default().wait(60.0), async |permit| {
                        let inside = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(inside, Ordering::SeqCst);
                        fencepost::SystemClock.sleep(0.02).await;
                        now.fetch_sub(1, Ordering::SeqCst);
                        Ok::<_, Error>(permit.epoch())
                    })
                    .await
                    .unwrap();
                assert!(ran.is_some(), "every worker gets a permit within its wait");
                done.fetch_add(1, Ordering::SeqCst);
            }
        })
        .collect();
    join_all(workers).await;
    assert_eq!(done.load(Ordering::SeqCst), 16);
    let most = most.load(Ordering::SeqCst);
    assert!((1..=3).contains(&most), "at most 3 at once, saw {most}");
}

// ---------------------------------------------------------------- watch

pub async fn watch_sees_each_change_in_order_and_deletions_once(cx: Ctx) {
    use fencepost::Held;
    use futures::StreamExt;
    let mut changes = cx.db.watch("flags", 0.05);
    assert_eq!(changes.next().await.unwrap().unwrap(), None, "absent at first");
    let o = cx.db.objects();
    let mut seen = Vec::new();
    for i in 0..20 {
        cx.raw_put("flags", json!({"v": i}).to_string().as_bytes()).await;
        let now = changes.next().await.unwrap().unwrap().expect("written");
        let Held::Json(value) = now.kind else { panic!("json, got {:?}", now.kind) };
        seen.push(value["v"].as_i64().unwrap());
    }
    assert_eq!(seen, (0..20).collect::<Vec<_>>(), "every change, in order");
    assert_eq!(cx.take_counts(), counts(21, 0), "one request per poll");
    o.delete("flags").await.unwrap();
    assert_eq!(changes.next().await.unwrap().unwrap(), None, "a deletion once");
    cx.raw_put("flags", b"{\"v\":99}").await;
    let back = changes.next().await.unwrap().unwrap().expect("back");
    assert_eq!(back.kind, Held::Json(json!({"v": 99})));
    // A lease document is reported as the lease it is.
    cx.db.lease("flags-lease", lease_opts(30.0, "a")).await.unwrap().unwrap();
    let mut lease_watch = cx.db.watch("flags-lease", 1.0);
    let Some(held) = lease_watch.next().await.unwrap().unwrap() else { panic!("held") };
    assert!(matches!(held.kind, Held::Lease(ref l) if l.epoch == 1 && l.holder.as_deref() == Some("a")));
    // A refused interval or key is the stream's one item, and the stream ends.
    for bad in [0.0, 0.01, f64::NAN, f64::INFINITY] {
        let mut refused = cx.db.watch("flags", bad);
        assert!(matches!(refused.next().await, Some(Err(Error::InvalidArgument(_)))), "{bad}");
        assert!(refused.next().await.is_none(), "{bad}: then it ends");
    }
    assert!(matches!(cx.db.watch("log/1", 1.0).next().await, Some(Err(Error::InvalidArgument(_)))));
    // A cancelled watch yields the reason once, then ends: it does not go on failing at once.
    let cancel = Cancel::new();
    let mut cancelled = cx.db.with_cancel(&cancel).watch("flags", 0.05);
    assert!(cancelled.next().await.unwrap().is_ok(), "the current state");
    cancel.cancel();
    assert!(matches!(cancelled.next().await, Some(Err(Error::Aborted))));
    assert!(cancelled.next().await.is_none(), "then it ends");
}
