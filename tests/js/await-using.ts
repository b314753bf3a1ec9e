// `await using` releases a lease at the end of its scope: Deno runs this file as is; Node runs it
// after TypeScript's downlevel (tsc, target es2022), as a Node 20 user would.
import type * as Fencepost from "fencepost";

export async function awaitUsingReleases(lib: typeof Fencepost): Promise<void> {
  const db = new lib.Fencepost(lib.memoryStore());
  let signal: AbortSignal;
  {
    await using lease = await db.lease("jobs/scoped", { ttl: 30 });
    if (!lease) throw new Error("the lease should have been acquired");
    signal = lease.signal;
    const again = await db.lease("jobs/scoped", { ttl: 30 });
    if (again !== null) throw new Error("held inside the scope");
  }
  if (!signal.aborted || !(signal.reason instanceof lib.LeaseLost)) throw new Error("signal aborted with LeaseLost");
  const next = await db.lease("jobs/scoped", { ttl: 30 });
  if (!next || next.epoch !== 2) throw new Error(`released at the end of the scope (got ${next && next.epoch})`);
  // Disposing a lease that is already over does nothing (and does not throw).
  await next.release();
  await next[Symbol.asyncDispose]();
}
