//! A native Rust service coordinating with the example Worker (`examples/worker.js` or
//! `examples/worker-rs`) on one bucket, through the bucket's S3 API (for R2:
//! `https://<account>.r2.cloudflarestorage.com`, region `auto`), while the Worker uses its binding.
//! Keys and documents are the Worker's: claims under `cron/`, job leases under `jobs/`.
//!
//! ```sh
//! export FENCEPOST_S3_ENDPOINT=… FENCEPOST_S3_BUCKET=… FENCEPOST_S3_ACCESS_KEY=… FENCEPOST_S3_SECRET_KEY=…
//! # optional: FENCEPOST_S3_REGION (default us-east-1; R2: auto), FENCEPOST_S3_PREFIX
//! cargo run --example service --features reqwest -- ticks              # the ticks the Worker ran, and who won each
//! cargo run --example service --features reqwest -- claim '*/5 * * * *' 2026-05-01T09:00:00.000Z
//!                                                                      # claim a tick as a fallback scheduler would
//! cargo run --example service --features reqwest -- status rollup-2026-05-01
//! cargo run --example service --features reqwest -- cancel rollup-2026-05-01   # as POST /jobs/<id>/cancel does
//! cargo run --example service --features reqwest -- selftest           # plays both sides under a fresh prefix
//! ```
//!
//! It runs on a tokio current-thread runtime; `ReqwestTransport` then sends its requests on that
//! runtime. fencepost's handles are `Send + Sync + Clone` and their futures `Send`, so a
//! multi-threaded runtime serves as well, and work moves into `tokio::spawn`ed tasks (the
//! selftest's job runs in one).

use std::sync::Arc;

use fencepost::store::PrefixStore;
use fencepost::store::s3::{S3Config, S3Store};
use fencepost::{Clock, Error, Fencepost, LeaseOptions, Options, SystemClock, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

type Failure = Box<dyn std::error::Error>;

fn env(name: &str) -> Result<String, Failure> {
    std::env::var(format!("FENCEPOST_S3_{name}")).map_err(|_| format!("FENCEPOST_S3_{name} is not set").into())
}

fn connect(extra_prefix: &str) -> Result<Fencepost, Failure> {
    let prefix = format!("{}/{extra_prefix}", env("PREFIX").unwrap_or_default());
    let region = env("REGION").unwrap_or_else(|_| "us-east-1".into());
    let config =
        S3Config::builder(&env("ENDPOINT")?, &env("BUCKET")?, &region, &env("ACCESS_KEY")?, &env("SECRET_KEY")?)
            .timeout(10.0)
            .build()?;
    // Natively `S3Store::new` sends over reqwest (feature `reqwest`), dated by the system clock.
    let store = S3Store::new(config)?;
    // Every key of this service under `prefix`: several users can share the bucket.
    let store = PrefixStore::new(Arc::new(store), &prefix)?;
    Ok(Fencepost::new(store, Options::default())?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["ticks"] => {
            for tick in ticks(&connect("")?).await? {
                println!("{tick}");
            }
        }
        ["claim", cron, tick] => {
            let claim = connect("")?.claim(&format!("cron/{cron}/{tick}"), me()).await?;
            let verdict = if claim.won { "won: run the tick's work here" } else { "lost: already run by" };
            println!("{verdict} {}", claim.value);
        }
        ["status", job] => println!("{}", status(&connect("")?, job).await?.unwrap_or(json!("no such job"))),
        ["cancel", job] => match cancel(&connect("")?, job).await? {
            Some(state) => println!("cancel requested: {state}"),
            None => println!("no job {job}"),
        },
        ["selftest"] => selftest().await?,
        _ => return Err("usage: service ticks | claim <cron> <tick> | status <job> | cancel <job> | selftest".into()),
    }
    Ok(())
}

/// What this service writes as a claim's value (the Worker writes `{invocation, claimedAt}`).
fn me() -> Value {
    let now = SystemClock.now().map(Timestamp::to_rfc3339).unwrap_or_default();
    json!({"invocation": format!("service-{}", std::process::id()), "claimedAt": now})
}

/// Every claimed tick with its winner, as the Worker's `GET /ticks` shows them.
async fn ticks(db: &Fencepost) -> fencepost::Result<Vec<Value>> {
    let mut out = Vec::new();
    for key in db.objects().list("cron/").await? {
        let winner = db.doc::<Value>(&key)?.get().await?.map(|d| d.value);
        out.push(json!({"key": key, "winner": winner}));
    }
    Ok(out)
}

/// A job's lease document (`{epoch, holder, deadline_at, state}`), the holder left out: it is a
/// credential.
async fn status(db: &Fencepost, job: &str) -> fencepost::Result<Option<Value>> {
    let Some(doc) = db.doc::<Value>(&format!("jobs/{job}"))?.get().await? else { return Ok(None) };
    let v = doc.value;
    let deadline = v["deadline_at"].as_str().and_then(Timestamp::parse_rfc3339);
    let held = !v["holder"].is_null() && deadline > Some(SystemClock.now()?);
    Ok(Some(json!({"epoch": v["epoch"], "held": held, "deadlineAt": v["deadline_at"], "state": v["state"]})))
}

/// Ask the job to stop: a cooperative write on its lease (the holder is not fenced; it sees
/// `cancel` on its next renewal or checkpoint). A finished job is left alone. The state is handled
/// as JSON: the Worker's jobs carry fields of their own (`runs`), kept as they are.
async fn cancel(db: &Fencepost, job: &str) -> fencepost::Result<Option<Value>> {
    db.cooperative_write(&format!("jobs/{job}"), |mut state: Value| {
        if state["status"] != json!("running") {
            return Err(Error::invalid(format!("job is {}, not running", state["status"])));
        }
        state["cancel"] = json!(true);
        Ok(state)
    })
    .await
}

/// The selftest job's state, as the Worker's jobs have it (`cancel` is set from outside).
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Job {
    status: String,
    step: u32,
    total: u32,
    #[serde(default)]
    cancel: bool,
}

/// Both sides on one bucket under a fresh prefix: a "Worker" and this service race for cron
/// ticks, then the service cancels the Worker's job while it runs. Prints `N passed, M failed`.
async fn selftest() -> Result<(), Failure> {
    let space = format!("service-selftest-{}-{}", std::process::id(), SystemClock.now()?.as_micros());
    let (worker, service) = (connect(&space)?, connect(&space)?);
    let mut results = Vec::new();
    let mut check = |ok: bool, what: &str| {
        println!("{} {what}", if ok { "ok  " } else { "FAIL" });
        results.push(ok);
    };

    // 1. Racing for the same ticks: one winner each, both learn its value.
    for tick in ["2026-05-01T09:00:00.000Z", "2026-05-01T09:05:00.000Z"] {
        let key = format!("cron/*/5 * * * */{tick}");
        let (w, s) = tokio::join!(worker.claim(&key, json!({"invocation": "worker"})), service.claim(&key, me()));
        let (w, s) = (w?, s?);
        check(w.won != s.won && w.value == s.value, &format!("{tick}: exactly one winner, {}", w.value));
    }
    check(ticks(&service).await?.len() == 2, "the service sees both ticks");

    // 2. The Worker's job: 6 steps under with_lease (kept alive), renewing before each step and
    //    checkpointing after it, stopping when it sees `cancel`. The service cancels it once a
    //    step is checkpointed.
    let job = "rollup-selftest";
    let job_key = format!("jobs/{job}");
    // In a task of its own, as a service would run it (the handle and the future are `Send`).
    let run_job = tokio::spawn(async move {
        let options = LeaseOptions::new(10.0).state_type::<Job>();
        worker
            .with_lease(&job_key, options, async |lease| -> fencepost::Result<&'static str> {
                // A fresh job (no state yet): seed it, under the lease's fence.
                if lease.state_value().is_null() {
                    lease.write(&Job { status: "running".into(), step: 0, total: 6, cancel: false }).await?;
                }
                loop {
                    lease.renew().await?;
                    let state = lease.state()?;
                    if state.cancel {
                        lease.release_with(&Job { status: "cancelled".into(), ..state }).await?;
                        return Ok("cancelled");
                    }
                    if state.step == state.total {
                        return Ok("done");
                    }
                    SystemClock.sleep(0.2).await; // the step's work
                    let step = state.step + 1;
                    lease.update_state(|s| Ok(Job { step, ..s })).await?;
                }
            })
            .await
    });
    let cancel_it = async {
        for _ in 0..100 {
            if let Some(st) = status(&service, job).await? {
                if st["state"]["step"].as_i64().unwrap_or(0) >= 1 {
                    return cancel(&service, job).await;
                }
            }
            SystemClock.sleep(0.05).await;
        }
        Ok(None)
    };
    let (outcome, cancelled) = tokio::join!(run_job, cancel_it);
    let outcome = outcome?;
    check(cancelled?.is_some_and(|s| s["cancel"] == json!(true)), "the service's cooperative write landed");
    check(matches!(outcome, Ok(Some("cancelled"))), &format!("the Worker's job honoured the cancel ({outcome:?})"));
    let st = status(&service, job).await?.unwrap_or_default();
    let step = st["state"]["step"].as_i64().unwrap_or(0);
    check(st["held"] == json!(false) && st["state"]["status"] == json!("cancelled"), "released with status cancelled");
    check((1..6).contains(&step), &format!("it stopped early, at step {step} of 6"));
    check(cancel(&service, job).await.is_err(), "cancelling a finished job is refused");

    // Leave the bucket as found.
    for key in service.objects().list("").await? {
        service.objects().delete(&key).await?;
    }
    let failed = results.iter().filter(|ok| !**ok).count();
    println!("{} passed, {failed} failed", results.len() - failed);
    if failed > 0 { Err("selftest failed".into()) } else { Ok(()) }
}
