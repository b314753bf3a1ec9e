// Seeded pseudo-random streams (mulberry32, seeded by a string hash), so that a seed replays the
// same workload and the same fault schedule: the playground's simulated workers, the chaos suite's
// histories and the fault proxy's choices. Each user of randomness draws from its own stream,
// named by (seed, name), so one worker's choices do not depend on how often another rolled the dice.
//
//   const rng = prng(seed, "w1/job");
//   rng()                 a float in [0, 1) (also rng.next())
//   rng.int(n)            an integer in [0, n)
//   rng.range(lo, hi)     a float in [lo, hi)
//   rng.chance(p)         true with probability p
//   rng.pick(list)        one element of `list`
//   rng.weighted({a: 3, b: 1})   a key, chosen by weight
//
// Plain ES module, no Node or DOM: the playground page imports it as it is.

/** 32-bit FNV-1a of a string. */
export function hash32(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The stream for `seed` and `name`: a function returning uniform floats in [0, 1), with helpers. */
export function prng(seed, name = "") {
  let a = (hash32(`${seed}/${name}`) ^ 0x9e3779b9) >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Object.assign(next, {
    next,
    int: (n) => Math.floor(next() * n),
    range: (lo, hi) => lo + next() * (hi - lo),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    weighted(weights) {
      let total = 0;
      for (const w of Object.values(weights)) total += w;
      let x = next() * total;
      for (const [k, w] of Object.entries(weights)) {
        if ((x -= w) < 0) return k;
      }
      return Object.keys(weights).at(-1);
    },
  });
}
