//! fencepost's JS binding, from which the npm package's wasm is built: a thin layer over the core
//! (the `fencepost` crate, which knows nothing of JS), one exported function (`api::call`). `convert`
//! holds every JS↔Rust conversion (named arguments and replies as JSON text), `errors` maps core
//! errors onto the package's JS error classes, `stores` builds stores from their JS recipes,
//! `tables` keeps what lives between calls (bounded, or freed at a known moment), `signal` links
//! AbortSignals to core cancels. No panic may cross into JS: nothing here unwraps JS input.

#![cfg(target_arch = "wasm32")]

// The house rule (checked by the lint stage, scripts/lint-layers.mjs): each module imports only
// from the layers below it; the core (`fencepost`) is below them all. From the bottom:
//
//   errors, signal      failure records, AbortSignals
//   convert     JS values ↔ the core's (named arguments, replies)
//   tables      what lives between calls: built Fenceposts, leases under keep-alive
//   stores      stores and clocks from their JS recipes, the stateful ones held
//   api         the one exported call

mod api;
mod convert;
mod errors;
mod signal;
mod stores;
mod tables;

/// The package's allocator (see Cargo.toml): Talc, on a source that grows the wasm memory by an
/// eighth of its size at least. Talc's own `WasmGrowAndExtend` grows by just enough for the
/// allocation at hand, so while many handles wait for the garbage collector to finalize them the
/// heap is full again every few calls, and each time Talc first searches a whole free list in
/// vain: a lease cycle on the memory store took twice as long as with dlmalloc.
#[global_allocator]
static ALLOCATOR: talc::cell::TalcSyncCell<Geometric, talc::wasm::WasmBinning> =
    talc::cell::TalcSyncCell::new_wasm(Geometric { end: None });

/// Wasm pages are 64 KiB.
const PAGE: usize = 64 * 1024;

#[derive(Debug)]
struct Geometric {
    /// The end of the heap, once there is one (later memory is contiguous with it).
    end: Option<core::ptr::NonNull<u8>>,
}

// SAFETY: acquires memory only with `memory.grow` (never through a Rust allocator) and hands Talc
// only memory it has just grown, extending the heap when the new pages follow it.
unsafe impl talc::source::Source for Geometric {
    fn acquire<B: talc::base::binning::Binning>(
        talc: &mut talc::base::Talc<Self, B>,
        layout: core::alloc::Layout,
    ) -> Result<(), ()> {
        use core::arch::wasm32::{memory_grow, memory_size};
        // Enough for the allocation with Talc's chunk overhead and alignment, and its bookkeeping
        // on the first claim.
        let needed = layout.size().saturating_add(layout.align() + 1024).div_ceil(PAGE);
        let wanted = needed.max(memory_size::<0>() / 8);
        let (base_page, pages) = match memory_grow::<0>(wanted) {
            usize::MAX if wanted > needed => match memory_grow::<0>(needed) {
                usize::MAX => return Err(()),
                base => (base, needed),
            },
            usize::MAX => return Err(()),
            base => (base, wanted),
        };
        let base = (base_page * PAGE) as *mut u8;
        let size = pages * PAGE;
        // SAFETY: [base, base + size) was just grown, belongs to no one, and lies within memory.
        unsafe {
            if let Some(end) = talc.source.end.take() {
                if end.as_ptr() == base {
                    // Saturating, as Talc's own sources do: the last page ends at 4 GiB.
                    let new_end = (base as usize).saturating_add(size) as *mut u8;
                    talc.source.end = Some(talc.extend(end, new_end));
                    return Ok(());
                }
            }
            talc.source.end = talc.claim(base, size);
        }
        Ok(())
    }
}
