//! Decimal text to `f64`: the host's parser in wasm, std's natively.

#[cfg(target_arch = "wasm32")]
/// The host's correctly rounded decimal parser: std's would add its tables (≈ 9 KB gzipped)
/// to a module whose every host already has one.
pub(crate) fn parse_f64(decimal: &str) -> f64 {
    js_sys::parse_float(decimal)
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn parse_f64(decimal: &str) -> f64 {
    decimal.parse().unwrap_or(f64::NAN)
}
