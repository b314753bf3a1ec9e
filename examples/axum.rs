//! An HTTP service coordinating through a bucket, written as Rust services are: axum on a
//! multi-threaded tokio runtime, one `Fencepost` shared by every handler (it is
//! `Send + Sync + Clone`, its futures `Send`), typed values throughout.
//!
//! ```text
//! POST /ticks/{tick}      {"worker": "w1"}  claim a cron tick: {"won": true, "winner": "w1"}
//! POST /jobs/{job}/run                       run the job under a lease kept alive meanwhile:
//!                                            200 {"epoch", "steps", "started", "finished"}, or 409 while held
//! POST /counters/{name}                      add one to a typed counter document: {"count": n}
//! GET  /counters/{name}                      {"count": n} (0 when absent)
//! ```
//!
//! Run it against S3 (or R2, SeaweedFS…) with the usual AWS variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`) and `FENCEPOST_S3_BUCKET`, or in memory
//! without them:
//!
//! ```sh
//! cargo run --example axum --features reqwest            # listens on 127.0.0.1:3000
//! cargo test --example axum --features reqwest           # its tests (against SeaweedFS when
//!                                                        # FENCEPOST_SEAWEED_* is set)
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use fencepost::store::MemoryStore;
use fencepost::store::s3::{S3Config, S3Store};
use fencepost::{Doc, Error, Fencepost, LeaseOptions, Options, UpdateOptions};
use serde::{Deserialize, Serialize};

/// What the handlers share: the coordination client, and how long a job's steps take.
#[derive(Clone)]
struct App {
    db: Fencepost,
    step: Duration,
}

#[derive(Deserialize)]
struct TickRequest {
    worker: String,
}

/// The claimed value: who runs the tick.
#[derive(Serialize, Deserialize)]
struct Tick {
    worker: String,
}

#[derive(Serialize)]
struct TickOutcome {
    won: bool,
    winner: String,
}

/// A job's state, kept in its lease document: checkpointed under the epoch's fence.
#[derive(Serialize, Deserialize, Default, Clone)]
struct JobState {
    steps: u32,
}

#[derive(Serialize, Deserialize)]
struct JobRun {
    epoch: u64,
    /// The job's total steps after this run (every run adds `STEPS`).
    steps: u32,
    /// Wall-clock bounds of the run, microseconds since the epoch.
    started: u64,
    finished: u64,
}

/// A counter document.
#[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
struct Count {
    count: u64,
}

/// Steps per job run.
const STEPS: u32 = 3;

fn router(app: App) -> Router {
    Router::new()
        .route("/ticks/{tick}", post(claim_tick))
        .route("/jobs/{job}/run", post(run_job))
        .route("/counters/{name}", post(add_one).get(read_count))
        .with_state(app)
}

async fn claim_tick(
    State(app): State<App>,
    Path(tick): Path<String>,
    Json(request): Json<TickRequest>,
) -> Result<Json<TickOutcome>, AppError> {
    let claim = app.db.claim(&format!("ticks/{tick}"), Tick { worker: request.worker }).await?;
    Ok(Json(TickOutcome { won: claim.won, winner: claim.value.worker }))
}

async fn run_job(State(app): State<App>, Path(job): Path<String>) -> Result<Response, AppError> {
    // Kept alive every ttl/3 while the steps run; released at the end. A run that lost its lease
    // midway fails with LeaseLost (its later checkpoints were fenced), never half-reported.
    let options = LeaseOptions::new(10.0).initial_state(JobState::default());
    let ran = app
        .db
        .with_lease(&format!("jobs/{job}"), options, async |lease| {
            let started = micros_now();
            let mut state = lease.state()?;
            for _ in 0..STEPS {
                tokio::time::sleep(app.step).await;
                state = lease.update_state(|s| Ok(JobState { steps: s.steps + 1 })).await?;
            }
            let finished = micros_now();
            Ok::<_, Error>(JobRun { epoch: lease.epoch(), steps: state.steps, started, finished })
        })
        .await?;
    Ok(match ran {
        Some(run) => Json(run).into_response(),
        None => (StatusCode::CONFLICT, "the job is running elsewhere").into_response(),
    })
}

async fn add_one(State(app): State<App>, Path(name): Path<String>) -> Result<Json<Count>, AppError> {
    let counter: Doc<Count> = app.db.doc(&format!("counters/{name}"))?;
    // A hot key: room for many lost races (each costs a read and a refused write). Past about one
    // write per second per key, a sharded counter (`db.counter`) is the better tool.
    let options = UpdateOptions { create: Some(Count::default()), max_attempts: 100, ..UpdateOptions::default() };
    Ok(Json(counter.update_with(options, |c| Ok(Count { count: c.count + 1 })).await?))
}

async fn read_count(State(app): State<App>, Path(name): Path<String>) -> Result<Json<Count>, AppError> {
    let counter: Doc<Count> = app.db.doc(&format!("counters/{name}"))?;
    Ok(Json(counter.get().await?.map(|d| d.value).unwrap_or_default()))
}

/// fencepost's errors as HTTP answers: the caller's mistakes 400, contention 409, the rest 503.
struct AppError(Error);

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        AppError(e)
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = match &self.0 {
            Error::InvalidArgument(_) => StatusCode::BAD_REQUEST,
            Error::Conflict { .. } | Error::LeaseLost { .. } => StatusCode::CONFLICT,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        (status, format!("{}: {}", self.0.code(), self.0)).into_response()
    }
}

fn micros_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// The store: S3 from the standard AWS variables when they are set (`FENCEPOST_S3_BUCKET` names
/// the bucket), else memory.
fn store_from_env() -> Result<Fencepost, Error> {
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        eprintln!("AWS_ACCESS_KEY_ID is not set: coordinating in memory (one process only)");
        return Fencepost::new(MemoryStore::new(), Options::default());
    }
    Fencepost::new(S3Store::new(S3Config::from_env()?)?, Options::default())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let app = App { db: store_from_env()?, step: Duration::from_millis(500) };
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{addr}");
    axum::serve(listener, router(app)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Several instances of the service (as separate processes would be, each with its own
    //! `Fencepost`) on one bucket, hit by concurrent HTTP clients. Against SeaweedFS when
    //! FENCEPOST_SEAWEED_* is set (the test command sets it), else on one shared memory store.

    use super::*;
    use fencepost::store::PrefixStore;
    use fencepost::store::s3::Addressing;
    use std::sync::Arc;

    const INSTANCES: usize = 3;
    const CLIENTS: usize = 16;

    /// A fresh key space on the test bucket: SeaweedFS when configured, else memory.
    fn bucket() -> Arc<dyn fencepost::store::ObjectStore> {
        let var = |name: &str| std::env::var(format!("FENCEPOST_SEAWEED_{name}")).ok();
        let prefix = format!("axum-{:x}/", micros_now());
        match (var("ENDPOINT"), var("BUCKET"), var("REGION"), var("ACCESS_KEY"), var("SECRET_KEY")) {
            (Some(endpoint), Some(bucket), Some(region), Some(key), Some(secret)) => {
                println!("against SeaweedFS at {endpoint}");
                let config = S3Config::builder(&endpoint, &bucket, &region, &key, &secret)
                    .addressing(Addressing::Path)
                    .build()
                    .unwrap();
                let store = S3Store::new(config).unwrap();
                Arc::new(PrefixStore::new(Arc::new(store), &prefix).unwrap())
            }
            _ => {
                println!("FENCEPOST_SEAWEED_* is not set: on the memory store");
                Arc::new(MemoryStore::new())
            }
        }
    }

    /// `INSTANCES` services on `store`, each on its own port; their base URLs.
    async fn serve(store: Arc<dyn fencepost::store::ObjectStore>, step: Duration) -> Vec<String> {
        let mut urls = Vec::new();
        for _ in 0..INSTANCES {
            let db = Fencepost::from_shared(store.clone(), Options::default()).unwrap();
            let app = App { db, step };
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            urls.push(format!("http://{}", listener.local_addr().unwrap()));
            tokio::spawn(async move { axum::serve(listener, router(app)).await.unwrap() });
        }
        urls
    }

    /// `CLIENTS` concurrent requests, client `i` to instance `i % INSTANCES`: (status, body) each.
    async fn race(
        urls: &[String],
        path: impl Fn(usize) -> String,
        body: impl Fn(usize) -> Option<String>,
    ) -> Vec<(u16, String)> {
        let http = reqwest::Client::new();
        let requests = (0..CLIENTS).map(|i| {
            let request = http.post(format!("{}{}", urls[i % urls.len()], path(i)));
            let request = match body(i) {
                Some(json) => request.header("content-type", "application/json").body(json),
                None => request,
            };
            tokio::spawn(async move {
                let response = request.send().await.expect("the service answers");
                (response.status().as_u16(), response.text().await.unwrap())
            })
        });
        let mut answers = Vec::new();
        for handle in requests.collect::<Vec<_>>() {
            answers.push(handle.await.unwrap());
        }
        answers
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sixteen_clients_race_one_claim_and_one_wins() {
        let urls = serve(bucket(), Duration::ZERO).await;
        let answers =
            race(&urls, |_| "/ticks/2026-12-02T09:00".into(), |i| Some(format!(r#"{{"worker": "w{i}"}}"#))).await;
        let outcomes: Vec<serde_json::Value> = answers
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, 200, "{body}");
                serde_json::from_str(body).unwrap()
            })
            .collect();
        let winners: Vec<_> = outcomes.iter().filter(|o| o["won"] == true).collect();
        assert_eq!(winners.len(), 1, "exactly one winner: {outcomes:?}");
        let winner = &winners[0]["winner"];
        assert!(outcomes.iter().all(|o| &o["winner"] == winner), "every loser learns the winner: {outcomes:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_job_lease_is_exclusive_and_its_steps_are_exact() {
        let urls = serve(bucket(), Duration::from_millis(40)).await;
        let mut runs: Vec<JobRun> = Vec::new();
        // Rounds of 16 concurrent attempts until a few runs went through: each round, one of
        // the racers holds the job and the others are refused (409) while it runs.
        for _ in 0..4 {
            for (status, body) in race(&urls, |_| "/jobs/rollup/run".into(), |_| None).await {
                match status {
                    200 => runs.push(serde_json::from_str(&body).unwrap()),
                    409 => assert!(body.contains("running elsewhere"), "{body}"),
                    other => panic!("unexpected {other}: {body}"),
                }
            }
        }
        assert!(!runs.is_empty(), "some run went through");
        runs.sort_by_key(|r| r.epoch);
        for pair in runs.windows(2) {
            assert!(pair[0].epoch < pair[1].epoch, "one epoch per run");
            assert!(pair[0].finished <= pair[1].started, "no two runs overlapped in time");
        }
        // Every run's checkpoints were stored once each, in order: the last run saw them all.
        assert_eq!(runs.last().unwrap().steps, STEPS * runs.len() as u32, "{} runs", runs.len());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_typed_counter_ends_exact() {
        let urls = serve(bucket(), Duration::ZERO).await;
        const ROUNDS: usize = 3;
        for _ in 0..ROUNDS {
            for (status, body) in race(&urls, |_| "/counters/visits".into(), |_| None).await {
                assert_eq!(status, 200, "{body}");
            }
        }
        let count: Count = serde_json::from_str(
            &reqwest::get(format!("{}/counters/visits", urls[0])).await.unwrap().text().await.unwrap(),
        )
        .unwrap();
        assert_eq!(count, Count { count: (CLIENTS * ROUNDS) as u64 }, "every acknowledged increment counted once");
    }
}
