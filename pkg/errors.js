// The error classes of fencepost. Every error the library throws is a FencepostError with a stable
// `code` (an own, enumerable property, so it survives JSON.stringify, structuredClone and spreads);
// errors thrown by your own callbacks (stateFn, update, cooperativeWrite…) reach you unchanged.

export class FencepostError extends Error {
  static code = "FENCEPOST_ERROR";

  /** @param {string} message @param {object} [details] extra fields: key, reason, status… */
  constructor(message, details) {
    super(message);
    Object.defineProperty(this, "name", { value: new.target.name, configurable: true, writable: true });
    this.code = new.target.code;
    if (details) Object.assign(this, details);
  }
}

/** The lease handle no longer names the current ownership period: stop and discard the work. */
export class LeaseLost extends FencepostError {
  static code = "LEASE_LOST";
}

/** A compare-and-swap loop ran out of attempts. */
export class ConflictError extends FencepostError {
  static code = "CONFLICT";
}

/**
 * The store refused the request or could not be reached. `code` is the store's error code when it
 * gave one (e.g. "SignatureDoesNotMatch", "AccessDenied"), otherwise "STORAGE_ERROR"; `status` is
 * the HTTP status when there was a response.
 */
export class StorageError extends FencepostError {
  static code = "STORAGE_ERROR";
}

/** A write's response was lost and reading back could not prove whether it landed. */
export class AmbiguousWriteError extends StorageError {
  static code = "AMBIGUOUS_WRITE";
}

/** Bad input: rejected before anything was written. */
export class InvalidArgument extends FencepostError {
  static code = "INVALID_ARGUMENT";
}

/** `objects.waitFor` timed out. */
export class TimeoutError extends FencepostError {
  static code = "TIMEOUT";
}

/** `doc.update` found no document and was given no `create` value. */
export class NotFoundError extends FencepostError {
  static code = "NOT_FOUND";
}

/** A stored object is not what fencepost expects (not JSON, not a lease document). Nothing was written. */
export class CorruptObjectError extends FencepostError {
  static code = "CORRUPT";
}
