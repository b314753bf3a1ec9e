// A small seeded PRNG (mulberry32) and a string hash, so a seed replays the same workload and the
// same fault schedule. Each worker task draws from its own stream (seed × worker × task), so one
// worker's choices do not depend on how often another one rolled the dice.

/** 32-bit FNV-1a of a string. */
export function hash32(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A function returning uniform floats in [0, 1), determined by `seed` and `stream`. */
export function prng(seed, stream = "") {
  let a = (hash32(`${seed}/${stream}`) ^ 0x9e3779b9) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
