// A small seeded pseudo-random generator for the benchmarks: sfc32 (Chris Doty-Humphrey's Small
// Fast Counting generator, 128-bit state, passes PractRand) seeded through splitmix32.
//
// Every fill, every random start and every query list in bench/ comes from one of these with a
// fixed seed, so two runs (and Node vs Deno) build the same ranges and ask the same questions.
// It is not the allocator's random source (adapters/random.ts): the bench only needs speed and
// repeatability.

export class Seeded {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const mix = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform u32. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
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
