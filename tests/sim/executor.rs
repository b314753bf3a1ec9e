//! A seeded single-threaded executor over simulated time: of the tasks that are ready, the seed
//! picks which runs next; when none is ready, time jumps to the next timer on the manual clock.
//! The same seed gives the same interleaving, so a history repeats exactly.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Wake, Waker};

use fencepost::Timestamp;
use fencepost::testing::ManualClock;

use crate::world::Rng;

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Set when the task's waker fires.
struct Ready(AtomicBool);

impl Wake for Ready {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

pub struct Executor {
    tasks: Vec<Option<(Task, Arc<Ready>)>>,
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every task finished.
    Done,
    /// Tasks are still waiting, with no timer due before the limit: something waits forever.
    Stuck { waiting: usize },
}

impl Executor {
    pub fn new() -> Self {
        Executor { tasks: Vec::new() }
    }

    pub fn spawn(&mut self, task: impl Future<Output = ()> + 'static) {
        self.tasks.push(Some((Box::pin(task), Arc::new(Ready(AtomicBool::new(true))))));
    }

    /// Run until every task is done, or nothing can move before `limit` on `clock`.
    pub fn run(&mut self, clock: &ManualClock, limit: Timestamp, rng: &mut Rng) -> Ended {
        let mut ready = Vec::new();
        loop {
            ready.clear();
            ready.extend(
                self.tasks
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.as_ref().is_some_and(|(_, r)| r.0.load(Ordering::Relaxed)))
                    .map(|(i, _)| i),
            );
            if let Some(&i) = ready.get(rng.below(ready.len().max(1) as u64) as usize) {
                let (task, flag) = self.tasks[i].as_mut().expect("ready tasks exist");
                flag.0.store(false, Ordering::Relaxed);
                let waker = Waker::from(flag.clone());
                if task.as_mut().poll(&mut Context::from_waker(&waker)).is_ready() {
                    self.tasks[i] = None;
                }
                continue;
            }
            let waiting = self.tasks.iter().filter(|t| t.is_some()).count();
            if waiting == 0 {
                return Ended::Done;
            }
            match clock.next_due() {
                Some(due) if due <= limit => {
                    clock.step_until(due);
                }
                _ => return Ended::Stuck { waiting },
            }
        }
    }
}
