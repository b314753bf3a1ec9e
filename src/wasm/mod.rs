//! The JS binding: a thin layer over the core. `convert` holds every JS↔Rust conversion,
//! `errors` maps core errors onto the package's JS error classes, `stores` builds store handles,
//! `signal` links AbortSignals to core cancels, `api` exposes the classes.
//! No panic may cross into JS: nothing here unwraps JS input.

mod api;
mod convert;
mod errors;
mod signal;
mod stores;

/// The package's allocator (see Cargo.toml): Talc, which grows the wasm memory as dlmalloc does.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
