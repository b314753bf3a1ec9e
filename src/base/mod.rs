//! The bottom layer: what every other module may use and that uses nothing of the crate's own —
//! errors, numbers as text, substring search, sorting, futures, the cancel seam, sharing across
//! threads (`sync`), and the
//! switches of the deliberately broken variants the simulation must catch.

pub mod cancel;
pub mod error;
pub mod future;
pub mod mutation;
pub(crate) mod number;
pub(crate) mod sort;
pub mod sync;
pub(crate) mod text;
