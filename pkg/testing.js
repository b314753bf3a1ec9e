// fencepost/testing: test your own coordination code against what is hard to provoke — a winning
// write whose response is lost, a competing write slipping in, throttling, slow stores, a lease
// expiring mid-job — deterministically. Built on the same fault store and manual clock the library's
// own suites use (in the Rust core), which also judges every fault and a clock's start.
//
//   const store = faultStore(memoryStore());
//   const clock = manualClock();
//   const db = new Fencepost(store, { clock });
//   store.inject("lostResponse", { op: "put", key: "cron/" });
//   await clock.advance(31);   // expires 30-s leases, runs keep-alive and backoff, instantly

import { initWasm } from "./runtime.js";
// The toolkit's stores and clocks are the library's own: importing its module here (which the
// runtime entry before this one has loaded already) lets the bundle keep one chunk that every
// entry shares (scripts/bundle-pkg.mjs).
import "./index.js";

export { FaultStore, faultStore, ManualClock, manualClock } from "./faults.js";
export { storeConformance } from "./conformance.js";
export { initWasm };
