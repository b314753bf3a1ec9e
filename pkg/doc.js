// doc: a JSON document updated by compare-and-swap, optionally typed by a Standard Schema (zod,
// valibot, arktype…): values are validated on read and before every write.

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, func, options, string } from "./options.js";
import { jsonCallback, toJson } from "./json.js";
import { fixedFields, handleClasses, isReady, run, runSync } from "./binding.js";
import { checked } from "./events.js";

const UPDATE_OPTIONS = /** @type {const} */ ({ create: "any", maxAttempts: "number", fresh: "boolean", signal: "signal" });

/**
 * `db.doc(key, {schema})`: the handle (plain data; the version it last saw is remembered by the
 * `Fencepost`, for every handle on the key).
 * @param {import("./binding.js").Recipe} db @param {string} key @param {any} opts
 */
export function openDoc(db, key, opts) {
  string(key, "key");
  // "any": a Standard Schema may be a function with the `~standard` property (arktype's types are).
  const { schema } = options(opts, { schema: "any" }, "doc options");
  if (schema !== undefined && schema !== null && typeof schema?.["~standard"]?.validate !== "function") {
    throw new InvalidArgument("doc options.schema must implement Standard Schema (zod, valibot, arktype…)");
  }
  return new Doc(db, key, schema ?? undefined);
}

/** A JSON document updated by compare-and-swap. */
export class Doc {
  #db;
  #schema;

  /** @internal */
  constructor(/** @type {import("./binding.js").Recipe} */ db, /** @type {string} */ key, /** @type {any} */ schema) {
    if (key === undefined) throw new InvalidArgument("a Doc is made by db.doc(key)");
    this.#db = db;
    /** @readonly @type {string} */
    this.key;
    fixedFields(this, { key });
    this.#schema = schema;
  }

  /** `{value, etag}` or null; with a schema, `value` is the schema's output. */
  async get(/** @type {any} */ opts) {
    const { signal } = checked(this.#db, "doc.get", this.key, () => options(opts, SIGNAL_ONLY, "get options"));
    const got = (await run("doc.get", this.#db, { args: { key: this.key }, signal })).json;
    if (!got) return null;
    return { value: this.#schema ? await validate(this.#schema, got.value, this.key) : got.value, etag: got.etag };
  }

  /**
   * Read, apply `fn`, compare-and-swap, retry on conflict; resolves to the value written. From the
   * version this `Fencepost` last read or wrote of the key, one guarded PUT first (1 request when
   * nobody else wrote); `{fresh: true}` reads first.
   */
  async update(/** @type {Function} */ fn, /** @type {any} */ opts) {
    const schema = this.#schema, key = this.key;
    const c = checked(this.#db, "doc.update", key, () => {
      func(fn, "update's first argument");
      const o = options(opts, UPDATE_OPTIONS, "update options");
      // With a schema, `fn` sees a valid value (the schema's output) and its result is validated
      // (and transformed) before it is written.
      const transition = schema
        ? async (/** @type {unknown} */ v) => validate(schema, await fn(await validate(schema, v, key)), key)
        : fn;
      const hasCreate = opts != null && Object.hasOwn(opts, "create") && opts.create !== undefined;
      const create = hasCreate ? toJson(o.create, "update options.create") : undefined;
      const args = { key, maxAttempts: o.maxAttempts ?? undefined, fresh: o.fresh ?? undefined };
      return { args, raw: { create }, callbacks: { fn: jsonCallback(transition, "update's result") }, signal: o.signal };
    });
    return (await run("doc.update", this.#db, c)).json;
  }

  /**
   * Forget the version the `Fencepost` remembers of the key (for every handle on it): the next
   * `update` reads first, as `{fresh: true}` does. No request; before the core is loaded nothing is
   * remembered, so there is nothing to forget.
   */
  forget() {
    if (isReady()) runSync("doc.forget", this.#db, { args: { key: this.key } });
  }

  /** Delete the document (idempotent). */
  async delete(/** @type {any} */ opts) {
    const { signal } = checked(this.#db, "doc.delete", this.key, () => options(opts, SIGNAL_ONLY, "delete options"));
    await run("doc.delete", this.#db, { args: { key: this.key }, signal });
  }
}
handleClasses({ Doc });

/**
 * Standard Schema validation (sync or async): the schema's output, or an InvalidArgument carrying
 * the issues.
 */
async function validate(/** @type {any} */ schema, /** @type {unknown} */ value, /** @type {string} */ key) {
  const result = await schema["~standard"].validate(value);
  // The interface's answer: `{value}` or `{issues: [{message}, …]}`; anything else is a broken
  // schema, said so rather than read as a value or failing inside this function.
  const wellFormed = typeof result === "object" && result !== null &&
    (result.issues == null ? "value" in result : Array.isArray(result.issues));
  if (!wellFormed) {
    throw new InvalidArgument("the schema's validate answered something that is not a Standard Schema result ({value} or {issues: [...]})", { key });
  }
  if (!result.issues) return result.value;
  const messages = result.issues.map((/** @type {any} */ i) => i?.message ?? String(i)).join("; ");
  throw new InvalidArgument(`value does not match the schema: ${messages}`, { key, issues: result.issues });
}
