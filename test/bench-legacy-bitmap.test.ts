// The legacy bitmap strategy used as a comparison point by the benchmarks (bench/legacy-bitmap.ts):
// sizes, offsets and scan order must match upstream's bitmap.go so its timings mean what they claim.
import { describe, expect, it } from 'vitest';
import {
  ALLOCATED_OK,
  ALREADY_ALLOCATED,
  NOT_IN_RANGE,
  LegacyBitmapRange,
  calculateRangeOffset,
  legacyMax,
  type IntSource,
} from '../bench/legacy-bitmap.ts';
import { Seeded } from '../bench/seeded.ts';

/** A random source that replays given values (each must be < n) and records the n asked for. */
function scripted(values: number[]): IntSource & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    intn(n: number) {
      asked.push(n);
      const v = values.shift();
      if (v === undefined || v >= n) throw new Error(`scripted: no value below ${n}`);
      return v;
    },
  };
}

describe('legacy bitmap geometry (upstream bitmap.go, calculateRangeOffset)', () => {
  it.each([
    ['IPv4 /24', 'IPv4', 24, 254, 16],
    ['IPv4 /28', 'IPv4', 28, 14, 0],
    ['IPv4 /27', 'IPv4', 27, 30, 16],
    ['IPv4 /22', 'IPv4', 22, 1022, 64],
    ['IPv4 /16', 'IPv4', 16, 65534, 256],
    ['IPv4 /12', 'IPv4', 12, 1048574, 256],
    ['IPv4 /31', 'IPv4', 31, 0, 0],
    ['IPv4 /32', 'IPv4', 32, 0, 0],
    ['IPv6 /112', 'IPv6', 112, 65535, 256],
    ['IPv6 /120', 'IPv6', 120, 255, 16],
    ['IPv6 /108 (capped)', 'IPv6', 108, 65535, 256],
    ['IPv6 /64 (capped)', 'IPv6', 64, 65535, 256],
    ['IPv6 /127', 'IPv6', 127, 1, 0],
    ['IPv6 /128', 'IPv6', 128, 0, 0],
  ] as const)('%s: max and rangeOffset', (_name, family, bits, max, offset) => {
    expect(legacyMax(family, bits)).toBe(max);
    expect(calculateRangeOffset((family === 'IPv4' ? 32 : 128) - bits)).toBe(offset);
    const r = new LegacyBitmapRange(family, bits, new Seeded(1));
    expect(r.max).toBe(max);
    expect(r.rangeOffset).toBe(offset);
    expect(r.free()).toBe(max);
  });
});

describe('randomScanStrategyWithOffset', () => {
  it('scans the upper band upward from offset + start, wrapping inside the band', () => {
    // /24: max 254, offset 16, upper band [16, 253] (sub = 238)
    const rng = scripted([237, 237, 0]);
    const r = new LegacyBitmapRange('IPv4', 24, rng);
    expect(r.allocateNext()).toBe(16 + 237); // start = 237 → at = 253
    expect(rng.asked).toEqual([238]);
    // 253 taken now: the same start wraps to the band's first offset, 16 (not 0)
    expect(r.allocateNext()).toBe(16);
    expect(r.allocateNext()).toBe(17); // start 0 → 16 taken → 17
  });

  it('uses the lower band only when the upper band is full, scanning from a random start with wraparound', () => {
    const r = new LegacyBitmapRange('IPv4', 24, new Seeded(7));
    for (let i = 16; i < 254; i++) expect(r.allocate(i)).toBe(ALLOCATED_OK);
    const rng = scripted([5, 15, 15, 3]);
    const s = new LegacyBitmapRange('IPv4', 24, rng);
    for (let i = 16; i < 254; i++) s.allocate(i);
    // upper scan (start 5) finds nothing; lower start 15 → offset 15
    expect(s.allocateNext()).toBe(15);
    expect(rng.asked).toEqual([238, 16]);
    // next: upper start 15 (full), lower start 3 → 3
    expect(s.allocateNext()).toBe(3);
  });

  it('allocates every address exactly once, then answers full (−1) from the count without scanning', () => {
    const r = new LegacyBitmapRange('IPv4', 24, new Seeded(42));
    const seen = new Set<number>();
    for (let i = 0; i < 254; i++) {
      const o = r.allocateNext();
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(254);
      expect(seen.has(o)).toBe(false);
      seen.add(o);
      // the upper band fills before anything in the lower band is taken
      if (i < 238) expect(o).toBeGreaterThanOrEqual(16);
    }
    expect(r.used()).toBe(254);
    const rng = scripted([]);
    const full = new LegacyBitmapRange('IPv4', 24, rng);
    for (let i = 0; i < 254; i++) full.allocate(i);
    expect(full.allocateNext()).toBe(-1);
    expect(rng.asked).toEqual([]); // count ≥ max: no draw, no scan
  });

  it('has no lower band when rangeOffset is 0 (/28)', () => {
    const r = new LegacyBitmapRange('IPv4', 28, scripted([13, 13]));
    expect(r.allocateNext()).toBe(13);
    expect(r.allocateNext()).toBe(0); // wraps over the whole range
  });
});

describe('Allocate / Release / Has on offsets', () => {
  it('mirrors AllocationBitmap: out of range, already allocated, release of free is a no-op', () => {
    const r = new LegacyBitmapRange('IPv6', 112, new Seeded(3));
    expect(r.allocate(-1)).toBe(NOT_IN_RANGE);
    expect(r.allocate(65535)).toBe(NOT_IN_RANGE);
    expect(r.allocate(65534)).toBe(ALLOCATED_OK);
    expect(r.allocate(65534)).toBe(ALREADY_ALLOCATED);
    expect(r.has(65534)).toBe(true);
    expect(r.used()).toBe(1);
    r.release(100);
    r.release(70000);
    expect(r.used()).toBe(1);
    r.release(65534);
    expect(r.has(65534)).toBe(false);
    expect(r.used()).toBe(0);
    expect(r.bytes()).toBe(Math.ceil(65535 / 32) * 4);
  });
});
