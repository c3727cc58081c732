// A small seeded pseudo-random generator for the benchmarks: sfc32 (Chris Doty-Humphrey's Small
// Fast Counting generator, 128-bit state, passes PractRand) seeded through splitmix32.
//
// Every fill, every random start and every query list in bench/ comes from one of these with a
// fixed seed, so two runs (and Node vs Deno) build the same ranges and ask the same questions.
// It is not the allocator's random source (adapters/random.ts): the bench only needs speed and
// repeatability.

export class Seeded {
  // The state lives in an Int32Array, as adapters/random.ts keeps its generator's: u32 values
  // ≥ 2^31 in plain number fields are heap numbers, and every draw then cost 20–25 ns instead of
  // 3–6, most of what the `core` column's /16 rows measured besides the index. Same outputs.
  private readonly s = new Int32Array(4);

  constructor(seed: number) {
    let x = seed >>> 0;
    const mix = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    for (let i = 0; i < 4; i++) this.s[i] = mix();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform u32. */
  u32(): number {
    const s = this.s;
    const a = s[0]!;
    const b = s[1]!;
    const c = s[2]!;
    const d = s[3]!;
    const t = (((a + b) | 0) + d) | 0;
    s[3] = (d + 1) | 0;
    s[0] = b ^ (b >>> 9);
    s[1] = (c + (c << 3)) | 0;
    s[2] = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  /** A uniform integer in [0, n), 1 ≤ n ≤ 2^32 (multiply-shift; bias below 2^-20 for n ≤ 2^12·2^20). */
  intn(n: number): number {
    return Math.floor((this.u32() * n) / 4294967296);
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }
}
