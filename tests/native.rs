//! The conformance suite, natively, on the memory store.

mod conformance;

use std::sync::Arc;

use conformance::Ctx;
use fencepost::store::MemoryStore;

fn run<F: std::future::Future<Output = ()>>(case: fn(Ctx) -> F) {
    futures::executor::block_on(case(Ctx::new(Arc::new(MemoryStore::new()))));
}

macro_rules! native_cases {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run(conformance::$name) } )*
    };
}

for_each_case!(native_cases);
