//! Deliberately broken variants of the protocol, one switch each, so the deterministic simulation
//! can show that its checks catch them (`tests/sim`). Only with the cargo feature `mutations`,
//! which nothing but the simulation turns on: without it every switch is a constant `false`, and
//! the broken paths compile away.

/// One broken variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// A write whose response was lost is retried blindly instead of being read back.
    SkipReadBack,
    /// Compare-and-swap writes (guarded lease writes, doc updates, steals) go without `If-Match`.
    DropIfMatch,
    /// Creates (claims, first acquisitions, new docs) go without `If-None-Match: *`.
    DropIfNoneMatch,
    /// Taking over an expired lease keeps its epoch instead of bumping it.
    NoEpochBumpOnSteal,
    /// A doc handle's update from its remembered version trusts that version without a guard.
    TrustRememberedVersion,
    /// A holder whose guarded write finds another epoch takes the newer version as its own (as
    /// if a cooperative write had landed) and writes on.
    AbsorbForeignEpoch,
    /// A lease counts as expired 5 s before its deadline (fencing still rejects the old holder's
    /// writes: only a check of time catches it).
    StealEarly,
    /// `once` runs the function again over a `done` record.
    OnceIgnoresDone,
    /// A semaphore takes one slot more than its limit.
    SemaphoreExtraSlot,
    /// A watch keeps the version it reported before the latest, so it reports a change again.
    WatchForgetsVersion,
}

#[cfg(feature = "mutations")]
impl Mutation {
    pub const ALL: [Mutation; 10] = [
        Mutation::SkipReadBack,
        Mutation::DropIfMatch,
        Mutation::DropIfNoneMatch,
        Mutation::NoEpochBumpOnSteal,
        Mutation::TrustRememberedVersion,
        Mutation::AbsorbForeignEpoch,
        Mutation::StealEarly,
        Mutation::OnceIgnoresDone,
        Mutation::SemaphoreExtraSlot,
        Mutation::WatchForgetsVersion,
    ];
}

#[cfg(feature = "mutations")]
thread_local! {
    static ACTIVE: std::cell::Cell<Option<Mutation>> = const { std::cell::Cell::new(None) };
}

/// Break the protocol on this thread as `mutation` says (`None`: the real protocol again).
#[cfg(feature = "mutations")]
pub fn set(mutation: Option<Mutation>) {
    ACTIVE.set(mutation);
}

/// Whether `mutation` is switched on (never, without the `mutations` feature).
#[inline(always)]
pub(crate) fn on(mutation: Mutation) -> bool {
    #[cfg(feature = "mutations")]
    return ACTIVE.get() == Some(mutation);
    #[cfg(not(feature = "mutations"))]
    {
        let _ = mutation;
        false
    }
}
