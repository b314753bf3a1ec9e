// The error classes of fencepost: the one list of classes and codes. The Rust core reports a failure
// as a plain record carrying one of these codes; `fromFailure` turns it into the class here, in the
// JS frame that awaited the call, so the error's stack shows the caller's own code. The types
// (`errors.d.ts`) are generated from this file by tsc, so they cannot drift from it.
//
// Every error the library throws is a FencepostError with a stable `code` (an own, enumerable
// property: it survives JSON.stringify and spreads); errors thrown by your own
// callbacks (stateFn, update, cooperativeWrite…) reach you unchanged.

/**
 * @typedef {"FENCEPOST_ERROR" | "LEASE_LOST" | "CONFLICT" | "STORAGE_ERROR" | "AMBIGUOUS_WRITE" |
 *   "INVALID_ARGUMENT" | "TIMEOUT" | "NOT_FOUND" | "CORRUPT"} FencepostErrorCode
 */

/**
 * The base class: `err instanceof FencepostError` catches every failure of the library. Each
 * subclass narrows `code` to its own (so `err instanceof LeaseLost` gives `code: "LEASE_LOST"`).
 */
export class FencepostError extends Error {
  /** @type {FencepostErrorCode} */
  static code = "FENCEPOST_ERROR";

  /**
   * @param {string} message
   * @param {{key?: string, cause?: unknown}} [details]
   */
  constructor(message, details) {
    super(message, details && "cause" in details ? { cause: details.cause } : undefined);
    Object.defineProperty(this, "name", { value: new.target.name, configurable: true, writable: true });
    /** Stable and machine-readable: one code per class. @readonly @type {FencepostErrorCode} */
    this.code;
    Object.assign(this, { code: /** @type {typeof FencepostError} */ (new.target).code });
    /** The key the failed operation was about, when there was one. @type {string | undefined} */
    this.key;
    if (details?.key !== undefined) this.key = details.key;
  }
}

/**
 * Why a lease's period ended: `"released"` (through one of its handles: this one, or another on the
 * same period such as an `attachLease` handle), `"expired"` (the deadline passed before a renewal
 * landed; `cause`: the last storage error), `"stolen"` (another epoch or holder is recorded — taken
 * over, broken — or the handle gave up under a stream of cooperative writes), `"deleted"` (the lease
 * document is gone).
 * @typedef {"released" | "expired" | "stolen" | "deleted"} LostReason
 */

/**
 * The lease handle no longer names the current ownership period: stop and discard the work.
 * `reason` says why (see `LostReason`), `message` in words.
 */
export class LeaseLost extends FencepostError {
  /** @type {"LEASE_LOST"} */
  static code = "LEASE_LOST";

  /** @param {string} message @param {{key?: string, reason?: LostReason, cause?: unknown}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"LEASE_LOST"} */
    this.code;
    /** Why the period ended (one made by hand without a reason says "stolen": not ours any more). @type {LostReason} */
    this.reason = details?.reason ?? "stolen";
  }
}

/**
 * A compare-and-swap loop ran out of attempts.
 */
export class ConflictError extends FencepostError {
  /** @type {"CONFLICT"} */
  static code = "CONFLICT";

  /** @param {string} message @param {{key?: string, attempts?: number}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"CONFLICT"} */
    this.code;
    /** @type {number | undefined} */
    this.attempts;
    if (details?.attempts !== undefined) this.attempts = details.attempts;
  }
}

/**
 * The store refused the request or could not be reached (after bounded retries). `code` is always
 * "STORAGE_ERROR" (or "AMBIGUOUS_WRITE" for the subclass); the store's own error code, when it gave
 * one, is `s3Code` (e.g. "SignatureDoesNotMatch", "AccessDenied"), and `status` the HTTP status.
 */
export class StorageError extends FencepostError {
  /** @type {"STORAGE_ERROR" | "AMBIGUOUS_WRITE"} */
  static code = "STORAGE_ERROR";

  /** @param {string} message @param {{key?: string, s3Code?: string, status?: number, cause?: unknown}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"STORAGE_ERROR" | "AMBIGUOUS_WRITE"} */
    this.code;
    /** The store's own error code, when it gave one. @type {string | undefined} */
    this.s3Code;
    if (details?.s3Code !== undefined) this.s3Code = details.s3Code;
    /** The HTTP status, when there was a response. @type {number | undefined} */
    this.status;
    if (details?.status !== undefined) this.status = details.status;
  }
}

/**
 * A write's response was lost (or the call was aborted while it was in flight) and reading back could
 * not prove whether it landed. `cause` is the abort reason when an abort caused it.
 */
export class AmbiguousWriteError extends StorageError {
  /** @type {"AMBIGUOUS_WRITE"} */
  static code = "AMBIGUOUS_WRITE";

  /** @param {string} message @param {{key?: string, cause?: unknown}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"AMBIGUOUS_WRITE"} */
    this.code;
  }
}

/**
 * Bad input (a key, a ttl, a value that is not JSON, an unknown option): rejected before anything
 * was written. `issues` holds a Standard Schema's issues when a schema refused the value.
 */
export class InvalidArgument extends FencepostError {
  /** @type {"INVALID_ARGUMENT"} */
  static code = "INVALID_ARGUMENT";

  /** @param {string} message @param {{key?: string, issues?: ReadonlyArray<{readonly message: string}>}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"INVALID_ARGUMENT"} */
    this.code;
    /** @type {ReadonlyArray<{readonly message: string}> | undefined} */
    this.issues;
    if (details?.issues !== undefined) this.issues = details.issues;
  }
}

/**
 * `objects.waitFor` timed out.
 */
export class TimeoutError extends FencepostError {
  /** @type {"TIMEOUT"} */
  static code = "TIMEOUT";

  /** @param {string} message @param {{key?: string, timeout?: number}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"TIMEOUT"} */
    this.code;
    /** Seconds waited. @type {number | undefined} */
    this.timeout;
    if (details?.timeout !== undefined) this.timeout = details.timeout;
  }
}

/**
 * `doc.update` found no document and was given no `create` value.
 */
export class NotFoundError extends FencepostError {
  /** @type {"NOT_FOUND"} */
  static code = "NOT_FOUND";

  /** @param {string} message @param {{key?: string, cause?: unknown}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"NOT_FOUND"} */
    this.code;
  }
}

/**
 * A stored object is not what fencepost expects (not JSON, not a lease document). Nothing was written.
 */
export class CorruptObjectError extends FencepostError {
  /** @type {"CORRUPT"} */
  static code = "CORRUPT";

  /** @param {string} message @param {{key?: string, cause?: unknown}} [details] */
  constructor(message, details) {
    super(message, details);
    /** @readonly @type {"CORRUPT"} */
    this.code;
  }
}

/**
 * Pin each class's name to the one given (the keys: property names survive bundling and
 * minifying): bundlers rename classes that collide (esbuild made `Lease2` of one, next to the wasm
 * glue's own `Lease`) and minifiers mangle them, while `err.name`, inspection and logs read them.
 * @internal
 * @param {Record<string, Function>} classes
 */
export function pinNames(classes) {
  for (const [name, C] of Object.entries(classes)) Object.defineProperty(C, "name", { value: name });
}

const ERRORS = {
  FencepostError, LeaseLost, ConflictError, StorageError, AmbiguousWriteError, InvalidArgument, TimeoutError,
  NotFoundError, CorruptObjectError,
};
pinNames(ERRORS);

const byCode = new Map(Object.values(ERRORS).map((C) => [C.code, C]));

/** The property that marks a failure record of the core (see `binding/src/errors.rs`). */
const MARK = "__fencepost";

/**
 * A failure record of the JS layer's own, for the core: a callback's result refused as JSON
 * crosses as this, so the core ends the call with an `InvalidArgument` of its own (the call's
 * event says so) and the caller's chain builds the error (its stack shows the caller's frame).
 * @internal
 * @param {string} message
 */
export function invalidRecord(message) {
  return { [MARK]: InvalidArgument.code, message };
}

/**
 * A rejection of the core as the caller should see it: a failure record becomes its error class
 * (constructed here, so the stack runs through the caller); anything else (a callback's own error,
 * an abort reason) is handed back unchanged. `key`: the call's, for a refusal that has none.
 * @internal
 * @param {any} e @param {unknown} [key]
 * @returns {unknown}
 */
export function fromFailure(e, key = undefined) {
  if (e === null || typeof e !== "object" || !(MARK in e)) return e;
  const { [MARK]: code, message, ...details } = e;
  // The core refuses arguments without knowing which call's key they came with: the call's own.
  if (code === InvalidArgument.code && details.key === undefined && typeof key === "string") details.key = key;
  // An abort the core raised on its own (no JS reason to hand back): the platform's AbortError.
  if (code === "ABORTED") return new DOMException(message, "AbortError");
  const C = byCode.get(code) ?? FencepostError;
  // A cause the core reports (an abort's reason, the failure that made a write ambiguous) is
  // handed back as the caller knows it: a JS value unchanged, a core failure as its class.
  if ("cause" in details) details.cause = fromFailure(details.cause);
  const err = new C(message, details);
  // Drop this helper's own frame: the stack starts at the API method and runs into the caller.
  const capture = /** @type {any} */ (Error).captureStackTrace;
  if (typeof capture === "function") capture(err, fromFailure);
  return err;
}
