// A small seeded PRNG (splitmix64-seeded sfc32): one independent stream per (seed, name), so the
// proxy's fault sequence and each worker's choices are reproducible from the seed alone.

function hash32(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A PRNG stream for `seed` (number) and `name` (string). */
export function prng(seed, name = "") {
  let a = hash32(`a/${seed}/${name}`), b = hash32(`b/${seed}/${name}`), c = hash32(`c/${seed}/${name}`), d = 1;
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    /** [0, 1) */
    next,
    /** integer in [0, n) */
    int: (n) => Math.floor(next() * n),
    /** float in [lo, hi) */
    range: (lo, hi) => lo + next() * (hi - lo),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    /** a key of `weights` ({name: weight}), chosen by weight */
    weighted(weights) {
      let total = 0;
      for (const w of Object.values(weights)) total += w;
      let x = next() * total;
      for (const [k, w] of Object.entries(weights)) {
        if ((x -= w) < 0) return k;
      }
      return Object.keys(weights).at(-1);
    },
  };
}
