//! fencepost's example Worker in Rust (workers-rs): the same Worker as `examples/worker.js`, with the
//! same HTTP API and log lines, so the same demo checks it.
//!
//! Two patterns, both driven by one cron trigger (`wrangler.toml`: `crons = ["*/5 * * * *"]`):
//!
//! (a) Cron dispatch with `claim`: one winner per tick. A cron event can be delivered more than
//!     once, and several invocations may race for the same tick. Every invocation claims the key
//!     `cron/<cron>/<scheduled time>`; exactly one wins and runs the tick's work; every loser
//!     learns the winner's value and returns. The tick's work runs at most once: a tick whose
//!     winner crashed is not run again.
//!
//! (b) A job owned through a lease, kept alive, checkpointed, cooperatively cancelled. The tick's
//!     work is to advance today's job, `jobs/rollup-<YYYY-MM-DD>`, by a few steps, under a lease:
//!     acquire (`Fencepost::lease_with_state`: the acquisition is a transition of the job's
//!     state, refusing a finished job), keep the lease alive meanwhile (`Lease::keep_alive`),
//!     release at the end, as `Fencepost::with_lease` does. Each step renews first (a heartbeat that also absorbs a cancel) and
//!     checkpoints after, guarded by the epoch. `POST /jobs/<id>/cancel` sets `state.cancel`
//!     with `cooperative_write`, without fencing the owner, which stops before its next step.
//!     `LeaseLost` means someone else owns the job now: stop at once.
//!
//! HTTP endpoints, all JSON: `GET /ticks`, `GET /jobs/<id>`, `POST /jobs/<id>/cancel`.
//! Every log line is one JSON object (`{"event": "tick.won", …}`), as the JS Worker writes them.

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use fencepost::store::r2::R2Store;
use fencepost::store::{CountingStore, RequestCounts};
use fencepost::{Cancel, Clock, Error, Fencepost, Lease, LeaseOptions, Options, SystemClock, Timestamp};
use serde_json::{Value, json};
use worker::{Context, Delay, Env, Method, Request, Response, ScheduleContext, ScheduledEvent, console_log, event};

#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    run_tick(&event, &env).await;
}

#[event(fetch)]
async fn fetch(request: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    handle_request(request, &env).await
}

// ------------------------------------------------------------------------------------ settings

struct Settings {
    job_steps: i64,
    steps_per_tick: i64,
    step_ms: u64,
    job_ttl: f64,
}

fn settings(env: &Env) -> Settings {
    let int = |name: &str, default: i64| {
        env.var(name).ok().and_then(|v| v.to_string().trim().parse::<i64>().ok()).unwrap_or(default)
    };
    Settings {
        job_steps: int("JOB_STEPS", 7),
        steps_per_tick: int("STEPS_PER_TICK", 3),
        step_ms: int("STEP_MS", 150).max(0) as u64,
        job_ttl: int("JOB_TTL", 30) as f64,
    }
}

/// One `Fencepost` per invocation, on the R2 binding wrapped in a `CountingStore`, so each log line
/// can say how many R2 requests (Workers subrequests) each operation cost. (A store shared in
/// wasm32 is an `Rc`: `fencepost::Shared` is `Rc` there, `Arc` natively.)
struct Open {
    db: Fencepost,
    store: Rc<CountingStore>,
}

fn open(env: &Env) -> worker::Result<Open> {
    let bucket = env.bucket("BUCKET")?;
    let r2 = R2Store::from_bucket(&bucket).map_err(to_worker)?;
    let store = Rc::new(CountingStore::new(r2));
    let db = Fencepost::new(store.clone(), Options::default()).map_err(to_worker)?;
    Ok(Open { db, store })
}

impl Open {
    /// Requests made since the previous call: `{get, put, delete, list, total}`.
    fn requests(&self) -> Value {
        counts_json(self.store.take_counts())
    }
}

fn counts_json(c: RequestCounts) -> Value {
    json!({"get": c.get, "put": c.put, "delete": c.delete, "list": c.list, "total": c.total()})
}

fn to_worker(e: Error) -> worker::Error {
    worker::Error::RustError(e.to_string())
}

fn log(event: &str, mut fields: Value) {
    fields["event"] = json!(event);
    console_log!("{}", fields);
}

fn iso(millis: f64) -> String {
    js_sys::Date::new(&millis.into()).to_iso_string().into()
}

/// A short name for this invocation, so the logs can tell the racers apart.
fn invocation_id() -> String {
    format!("{:08x}", (js_sys::Math::random() * 4_294_967_296.0) as u64)
}

// ------------------------------------------------------ (a) cron dispatch, one winner per tick

thread_local! {
    /// Diagnostics only: how many ticks this isolate is running right now (the racers overlap).
    static IN_FLIGHT: Cell<u32> = const { Cell::new(0) };
}

struct InFlight;

impl InFlight {
    fn enter() -> Self {
        IN_FLIGHT.with(|n| n.set(n.get() + 1));
        InFlight
    }
    fn now() -> u32 {
        IN_FLIGHT.with(Cell::get)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

async fn run_tick(event: &ScheduledEvent, env: &Env) {
    let invocation = invocation_id();
    // Cron has minute resolution: flooring to the minute names the same tick for every delivery.
    let tick = iso((event.schedule() / 60_000.0).floor() * 60_000.0);
    let cron = event.cron();
    let _in_flight = InFlight::enter();
    if let Err(e) = tick_work(&cron, &tick, &invocation, env).await {
        log("tick.error", json!({"cron": cron, "tick": tick, "invocation": invocation, "error": e.to_string()}));
    }
}

async fn tick_work(cron: &str, tick: &str, invocation: &str, env: &Env) -> worker::Result<()> {
    let open = open(env)?;
    // One key per (cron expression, scheduled time); all invocations for this tick race on it.
    let claimed_at = js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default();
    let claim = open
        .db
        .claim(&format!("cron/{cron}/{tick}"), json!({"invocation": invocation, "claimedAt": claimed_at}))
        .await
        .map_err(to_worker)?;
    let claim_requests = open.requests(); // 1 when won, 2 when lost (the loser reads the winner)
    let racing = InFlight::now();
    if !claim.won {
        let winner = claim.value["invocation"].clone();
        let fields = json!({"cron": cron, "tick": tick, "invocation": invocation, "winner": winner,
                            "requests": claim_requests, "racing": racing});
        log("tick.lost", fields);
        return Ok(());
    }
    // This invocation, and no other, does the tick's work: advance today's job.
    let mut job = advance_job(&open.db, &settings(env), &format!("rollup-{}", &tick[..10]), invocation)
        .await
        .map_err(to_worker)?;
    job["requests"] = open.requests();
    let fields = json!({"cron": cron, "tick": tick, "invocation": invocation, "requests": claim_requests,
                        "racing": racing, "job": job});
    log("tick.won", fields);
    Ok(())
}

// ---------------------------------------------------- (b) a job owned through a lease, cancellable

/// Raised by the acquisition's transition to refuse a finished job: nothing is written then. It
/// comes back as `Error::Callback`, unchanged, so it is told apart by downcasting.
struct JobFinished(String);

fn job_finished(e: &Error) -> Option<&str> {
    match e {
        Error::Callback(value) => value.downcast_ref::<JobFinished>().map(|f| f.0.as_str()),
        _ => None,
    }
}

/// Take the job's lease and run at most `steps_per_tick` steps. Returns a summary for the log:
/// `{id, outcome, epoch, from, to, step, total}`, `outcome` one of "paused" (this tick's budget is
/// used up), "done", "cancelled", "refused" (already finished: nothing written), "busy" (another
/// invocation holds it), "lost" (LeaseLost: another invocation took the job over).
async fn advance_job(db: &Fencepost, s: &Settings, job_id: &str, invocation: &str) -> fencepost::Result<Value> {
    let key = format!("jobs/{job_id}");
    let total = s.job_steps;
    // Acquisition is a transition from the previous state, written atomically with the new epoch.
    // It must be pure: it runs again if another invocation wins a race for the document.
    let state_fn = move |prev: Option<Value>| {
        let Some(prev) = prev else {
            return Ok(json!({"status": "running", "step": 0, "total": total, "runs": []})); // fresh job
        };
        match prev["status"].as_str() {
            Some("running") => Ok(prev), // resume from the last checkpoint
            other => Err(Error::callback(JobFinished(other.unwrap_or("finished").to_owned()))),
        }
    };
    // Kept alive in the background (every ttl/3) while `run_steps` runs; released when it ends.
    let ran = with_lease_from(db, &key, LeaseOptions::new(s.job_ttl), state_fn, async |lease| {
        run_steps(lease, s, job_id, invocation).await
    })
    .await;
    match ran {
        Ok(Some(summary)) => Ok(summary),
        Ok(None) => Ok(json!({"id": job_id, "outcome": "busy"})),
        Err(e) if job_finished(&e).is_some() => {
            Ok(json!({"id": job_id, "outcome": "refused", "reason": format!("job already {}", job_finished(&e).unwrap_or_default())}))
        }
        // Someone else owns the job now (our lease expired and was taken over): stop.
        Err(lost @ Error::LeaseLost { .. }) => {
            Ok(json!({"id": job_id, "outcome": "lost", "reason": lost.to_string()}))
        }
        Err(e) => Err(e),
    }
}

/// `Fencepost::with_lease`, acquiring through `state_fn` (see `Fencepost::lease_with_state`):
/// run `f` with the lease while keep-alive renews it, then release it unless `f` ended the
/// period itself (a final state). `Ok(None)` without calling `f` when the lease is held; when the
/// lease is lost while `f` runs, `f` runs to its end and the `LeaseLost` is the outcome.
async fn with_lease_from(
    db: &Fencepost,
    key: &str,
    options: LeaseOptions,
    state_fn: impl FnMut(Option<Value>) -> fencepost::Result<Value>,
    f: impl AsyncFnOnce(&Lease) -> fencepost::Result<Value>,
) -> fencepost::Result<Option<Value>> {
    let Some(lease) = db.lease_with_state(key, options, state_fn).await? else { return Ok(None) };
    let stop = Cancel::new();
    let mut keep_alive = pin!(lease.keep_alive(&stop));
    let mut work = pin!(f(&lease));
    let outcome = match first(work.as_mut(), keep_alive.as_mut()).await {
        // Stop keep-alive and let a renewal in flight settle: the handle's view is then current.
        Some(outcome) => {
            stop.cancel();
            let _ = keep_alive.await;
            outcome
        }
        // Keep-alive is over (lost, or released by `f`): `f` runs on to its end.
        None => work.await,
    };
    let lost = if lease.is_released() { None } else { lease.ended().reason() };
    match (outcome, lost) {
        (Err(e), _) => {
            if !lease.ended().is_cancelled() {
                let _ = lease.release().await;
            }
            Err(e)
        }
        (Ok(_), Some(lost)) => Err(lost),
        (Ok(out), None) => {
            if !lease.ended().is_cancelled() {
                lease.release().await?;
            }
            Ok(Some(out))
        }
    }
}

/// `work`'s output if it finishes first, `None` if `other` does.
async fn first<T>(mut work: Pin<&mut impl Future<Output = T>>, mut other: Pin<&mut impl Future>) -> Option<T> {
    poll_fn(|cx| match work.as_mut().poll(cx) {
        Poll::Ready(out) => Poll::Ready(Some(out)),
        Poll::Pending if other.as_mut().poll(cx).is_ready() => Poll::Ready(None),
        Poll::Pending => Poll::Pending,
    })
    .await
}

async fn run_steps(lease: &Lease, s: &Settings, job_id: &str, invocation: &str) -> fencepost::Result<Value> {
    let step_of = |state: &Value| state["step"].as_i64().unwrap_or(0);
    let from = step_of(&lease.state_value()) + 1;
    let mut to = from - 1;
    let mut ran = 0;
    let outcome = loop {
        // `lease.state_value()` is the freshest state this handle has seen, cooperative writes
        // included.
        let state = lease.state_value();
        if state["cancel"] == json!(true) {
            break "cancelled";
        }
        if step_of(&state) >= state["total"].as_i64().unwrap_or(0) {
            break "done";
        }
        if ran == s.steps_per_tick {
            break "paused";
        }
        // Heartbeat: a full ttl for the step below; a cancel written since our last write is
        // absorbed into `lease.state_value()` here.
        lease.renew().await?;
        if lease.state_value()["cancel"] == json!(true) {
            continue;
        }
        let step = step_of(&lease.state_value()) + 1;
        do_step(job_id, step, s.step_ms).await;
        // Checkpoint, guarded by the epoch: if the job was taken over meanwhile this fails with
        // LeaseLost instead of overwriting the new owner's progress. Steps must be idempotent: a
        // crash between the step and the checkpoint runs the step again on the next owner.
        let epoch = lease.epoch();
        lease
            .update_state(|mut state: Value| {
                let run = json!({"epoch": epoch, "by": invocation, "from": from, "to": step});
                let runs = record_run(state["runs"].take(), run);
                state["step"] = json!(step);
                state["runs"] = runs;
                Ok(state)
            })
            .await?;
        to = step;
        ran += 1;
    };
    if outcome != "paused" {
        // Final state; with_lease_from then has nothing left to release. (When paused, it
        // releases keeping the state, so a cancel arriving right now is absorbed, not lost.)
        let mut last = lease.state_value();
        last["status"] = json!(outcome);
        lease.release_with(&last).await?;
    }
    let state = lease.state_value();
    Ok(json!({"id": job_id, "epoch": lease.epoch(), "from": from, "to": to, "outcome": outcome,
              "step": state["step"], "total": state["total"]}))
}

/// The job's "work": one step of a rollup. Steps must be idempotent.
async fn do_step(_job_id: &str, _step: i64, ms: u64) {
    Delay::from(Duration::from_millis(ms)).await;
}

/// `runs` keeps one entry per ownership period (epoch): who ran which steps.
fn record_run(runs: Value, run: Value) -> Value {
    let mut runs = match runs {
        Value::Array(runs) => runs,
        _ => Vec::new(),
    };
    if runs.last().is_some_and(|last| last["epoch"] == run["epoch"]) {
        runs.pop();
    }
    runs.push(run);
    Value::Array(runs)
}

// ------------------------------------------------------------------------------------ HTTP API

async fn handle_request(request: Request, env: &Env) -> worker::Result<Response> {
    let open = open(env)?;
    let path = request.path();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let valid_id = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let answer = match (request.method(), segments.as_slice()) {
        (Method::Get, ["ticks"]) => list_ticks(&open.db).await.map(|ticks| reply(200, json!({"ticks": ticks}))),
        (Method::Get, ["jobs", id]) if valid_id(id) => read_job(&open.db, id).await.map(|job| match job {
            Some(job) => reply(200, job),
            None => reply(404, json!({"error": format!("no job {id}")})),
        }),
        (Method::Post, ["jobs", id, "cancel"]) if valid_id(id) => cancel_job(&open, id).await,
        (Method::Get, [""]) => {
            Ok(reply(200, json!({"endpoints": ["GET /ticks", "GET /jobs/<id>", "POST /jobs/<id>/cancel"]})))
        }
        _ => Ok(reply(404, json!({"error": "not found"}))),
    };
    match answer {
        Ok(response) => response,
        Err(Error::InvalidArgument(message)) => reply(400, json!({"error": message})),
        Err(e) => reply(500, json!({"error": e.to_string(), "code": e.code()})),
    }
}

/// Change the job's state without fencing its owner: the owner absorbs the write on its next
/// heartbeat or checkpoint, sees `cancel`, and stops. Returning an error writes nothing.
async fn cancel_job(open: &Open, id: &str) -> fencepost::Result<worker::Result<Response>> {
    let cancelled = open
        .db
        .cooperative_write(&format!("jobs/{id}"), |mut state: Value| match state["status"].as_str() {
            Some("running") => {
                state["cancel"] = json!(true);
                Ok(state)
            }
            other => Err(Error::callback(JobFinished(other.unwrap_or("finished").to_owned()))),
        })
        .await;
    Ok(match cancelled {
        Ok(Some(state)) => reply(202, json!({"id": id, "state": state, "requests": open.requests()})),
        Ok(None) => reply(404, json!({"error": format!("no job {id}")})),
        Err(e) => match job_finished(&e) {
            Some(status) => reply(409, json!({"id": id, "error": format!("job already {status}")})),
            None => return Err(e),
        },
    })
}

/// Every claimed tick, oldest first, with the invocation that won it.
async fn list_ticks(db: &Fencepost) -> fencepost::Result<Vec<Value>> {
    let keys = db.objects().list("cron/").await?; // ascending: cron/<cron>/<ISO time>
    let mut ticks = Vec::new();
    for key in keys.iter().rev().take(100).rev() {
        let winner = db.doc::<Value>(key)?.get().await?.map(|d| d.value).unwrap_or(Value::Null);
        let (cron, tick) = key["cron/".len()..].rsplit_once('/').unwrap_or(("", key));
        ticks.push(json!({"cron": cron, "tick": tick, "winner": winner}));
    }
    Ok(ticks)
}

/// A job's lease document read as plain JSON: `{epoch, holder, deadline_at, state}`. The holder
/// token is a credential (whoever knows it can `attach_lease`), so it is not shown.
async fn read_job(db: &Fencepost, id: &str) -> fencepost::Result<Option<Value>> {
    let Some(doc) = db.doc::<Value>(&format!("jobs/{id}"))?.get().await? else { return Ok(None) };
    let v = doc.value;
    let deadline = v["deadline_at"].as_str().and_then(Timestamp::parse_rfc3339);
    let held = !v["holder"].is_null() && deadline.is_some_and(|d| SystemClock.now().is_ok_and(|now| d > now));
    Ok(Some(json!({"id": id, "epoch": v["epoch"], "held": held, "deadlineAt": v["deadline_at"], "state": v["state"]})))
}

fn reply(status: u16, body: Value) -> worker::Result<Response> {
    Ok(Response::from_json(&body)?.with_status(status))
}
