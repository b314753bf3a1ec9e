// The hand-written declarations users see (index.d.ts, testing.d.ts) held to the implementation, as
// tsc reads it from the JSDoc (the declarations pkg/tsconfig.json writes to .run/pkg-types), at build
// time: the same exports and the same public members, both ways, and everything the implementation
// returns usable as declared. Not shipped. A failure names the export or member that drifted.
import type * as Declared from "./index.js";
import type * as DeclaredTesting from "./testing.js";
import type * as Implemented from "../.run/pkg-types/index.js";
import type * as ImplementedTesting from "../.run/pkg-types/testing.js";

/** The string keys only one of `A` and `B` has (symbol keys are package-private). */
type Drift<A, B> = Exclude<Extract<keyof A, string>, keyof B> | Exclude<Extract<keyof B, string>, keyof A>;
/** Compiles only when `D` is `never`; otherwise the error shows the names in `D`. */
function same<D extends never>(): void {}

// The same exports from `fencepost` and `fencepost/testing`.
same<Drift<typeof Declared, typeof Implemented>>();
same<Drift<typeof DeclaredTesting, typeof ImplementedTesting>>();

/** The exports that are functions (not classes). */
type Functions<M> = { [K in keyof M as M[K] extends (...args: any[]) => any ? K : never]: M[K] };

// Functions, and the one class users construct: what is implemented can stand where it is declared.
export const functions: Functions<typeof Declared> = null as unknown as Functions<typeof Implemented>;
export const testingFunctions: Functions<typeof DeclaredTesting> = null as unknown as Functions<typeof ImplementedTesting>;
export const constructors: [typeof Declared.Fencepost] = null as unknown as [typeof Implemented.Fencepost];

// Classes: the same public members, and an instance usable as declared.
same<Drift<Declared.Fencepost, Implemented.Fencepost>>();
same<Drift<Declared.Store, Implemented.Store>>();
same<Drift<Declared.Lease, Implemented.Lease>>();
same<Drift<Declared.Doc, Implemented.Doc>>();
same<Drift<Declared.Objects, Implemented.Objects>>();
same<Drift<Declared.Semaphore, Implemented.Semaphore>>();
same<Drift<DeclaredTesting.FaultStore, ImplementedTesting.FaultStore>>();
same<Drift<DeclaredTesting.ManualClock, ImplementedTesting.ManualClock>>();
export const instances: [Declared.Fencepost, Declared.Store, Declared.Objects, DeclaredTesting.FaultStore,
  DeclaredTesting.ManualClock] = null as unknown as [Implemented.Fencepost, Implemented.Store, Implemented.Objects,
  ImplementedTesting.FaultStore, ImplementedTesting.ManualClock];
// (A concrete state type: checking against every JSON value would not terminate.)
type State = { step: number; tags: string[] };
export const lease: Declared.Lease<State> = null as unknown as Implemented.Lease;
export const doc: Declared.Doc<State> = null as unknown as Implemented.Doc;
// The error classes are declared from errors.js itself (errors.d.ts), so they cannot drift.
