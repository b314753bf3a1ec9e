//! Futures: [`BoxFuture`] (`Send` natively), the one combinator fencepost needs ([`race`]: run two futures,
//! keep the first to finish, drop the other) and `yield_now`, which lets other tasks of a
//! single-threaded executor run.
//! Hand-written (a dozen lines) rather than a dependency, since the crate is compiled to wasm and
//! every dependency counts.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

pub use crate::base::sync::BoxFuture;

/// Which of two raced futures finished first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Poll `a` and `b` together; the first to finish wins and the other is dropped (for a request:
/// abandoned). Biased towards `a`: when both are ready in the same poll, `a` wins, so an answer
/// that is already there beats a timer or a cancel that fired at the same moment.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        if let Poll::Ready(out) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(out));
        }
        Poll::Pending
    })
    .await
}

/// Run `futures` together on this task; their outputs in order once all have finished. (A dozen
/// lines rather than a dependency, as for `race`.)
pub async fn join_all<'a, T>(futures: Vec<BoxFuture<'a, T>>) -> Vec<T> {
    let mut pending: Vec<Option<BoxFuture<'a, T>>> = futures.into_iter().map(Some).collect();
    let mut done: Vec<Option<T>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(move |cx| {
        for (slot, out) in pending.iter_mut().zip(done.iter_mut()) {
            if let Some(f) = slot {
                if let Poll::Ready(v) = f.as_mut().poll(cx) {
                    *out = Some(v);
                    *slot = None;
                }
            }
        }
        if pending.iter().all(Option::is_none) {
            Poll::Ready(done.iter_mut().filter_map(Option::take).collect())
        } else {
            Poll::Pending
        }
    })
    .await
}

/// A future that is pending once, letting other tasks on a single-threaded executor run.
pub(crate) fn yield_now() -> impl std::future::Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn first_to_finish_wins_and_ties_go_left() {
        assert_eq!(block_on(race(async { 1 }, std::future::pending::<()>())), Either::Left(1));
        assert_eq!(block_on(race(std::future::pending::<()>(), async { 2 })), Either::Right(2));
        assert_eq!(block_on(race(async { 1 }, async { 2 })), Either::Left(1));
        let later = async {
            yield_now().await;
            1
        };
        assert_eq!(block_on(race(later, async { 2 })), Either::Right(2));
    }
}
