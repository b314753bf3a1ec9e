//! S3 store (placeholder; being written).
