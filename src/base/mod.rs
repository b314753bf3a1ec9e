//! The bottom layer: what every other module may use and that uses nothing of the crate's own —
//! errors, numbers as text, substring search, sorting, futures and the cancel seam.

pub mod cancel;
pub mod error;
pub mod future;
pub(crate) mod number;
pub(crate) mod sort;
pub(crate) mod text;
