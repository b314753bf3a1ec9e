// The error classes of fencepost. Every error the library throws is a FencepostError with a stable
// `code`; errors thrown by your own callbacks (stateFn, update, cooperativeWrite…) reach you
// unchanged instead.

export class FencepostError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
  get code() {
    return "FENCEPOST_ERROR";
  }
}

/** The lease handle no longer names the current ownership period: stop and discard the work. */
export class LeaseLost extends FencepostError {
  get code() { return "LEASE_LOST"; }
}

/** A compare-and-swap loop ran out of attempts. */
export class ConflictError extends FencepostError {
  get code() { return "CONFLICT"; }
}

/**
 * The store refused the request or could not be reached. `code` is the store's error code when it
 * gave one (e.g. "SignatureDoesNotMatch", "AccessDenied"), otherwise "STORAGE_ERROR"; `status` is
 * the HTTP status when there was a response.
 */
export class StorageError extends FencepostError {
  get code() { return this.s3Code ?? "STORAGE_ERROR"; }
}

/** A write's response was lost and reading back could not prove whether it landed. */
export class AmbiguousWriteError extends StorageError {
  get code() { return "AMBIGUOUS_WRITE"; }
}

/** Bad input: rejected before anything was written. */
export class InvalidArgument extends FencepostError {
  get code() { return "INVALID_ARGUMENT"; }
}

/** `objects.waitFor` timed out. */
export class TimeoutError extends FencepostError {
  get code() { return "TIMEOUT"; }
}

/** `doc.update` found no document and was given no `create` value. */
export class NotFoundError extends FencepostError {
  get code() { return "NOT_FOUND"; }
}

/** A stored object is not what fencepost expects (not JSON, not a lease document). Nothing was written. */
export class CorruptObjectError extends FencepostError {
  get code() { return "CORRUPT"; }
}
