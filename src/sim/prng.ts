/**
 * Seeded pseudo-random numbers, so a fault schedule (`http500=0.2`) is reproducible from
 * `seed`. mulberry32: tiny, fast, good enough for coin flips. Each instance and the verifier
 * draw from their own stream (derived from the seed and the target), so the decisions on one
 * instance do not depend on how requests to the others happened to interleave.
 */
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stream for one target: the seed mixed with the target number (splitmix-style). */
export function streamFor(seed: number, target: number): Random {
  let z = (seed ^ Math.imul(target + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return mulberry32((z ^ (z >>> 16)) >>> 0);
}
