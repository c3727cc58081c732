// The shared address space (adapters/space.ts over core-as/space.ts): take / takeAfter / set /
// clear / has by address words, checked against a plain model of the bands and the wraparound
// search, on IPv4 and IPv6 ranges, including the top of the IPv6 space where a start may leave
// the family (upstream's iterator then yields nothing in the upper band).
import { describe, expect, it } from 'vitest';
import { AddressSpace, BAND_LOWER, BAND_UPPER } from '../adapters/space.ts';
import { Prefix } from '../adapters/geometry.ts';
import { parseAddr } from '../adapters/address.ts';
import { seededRandom, type RandomSource } from '../adapters/random.ts';

const big = (w: ArrayLike<number>) => (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!);
const wordsOf = (text: string) => parseAddr(text).words;

/** A source that replays fixed u32 values (then zeros). */
function fixed(values: number[]): RandomSource {
  let i = 0;
  return { nextU32: () => values[i++] ?? 0 };
}

/** The model's wraparound search: the first free offset of [lo, hi] from start. */
function modelTake(taken: Set<bigint>, start: bigint, lo: bigint, hi: bigint): bigint | null {
  if (lo > hi) return null;
  if (start < lo || start > hi) start = lo;
  for (let o = start; ; ) {
    if (!taken.has(o)) return o;
    o = o === hi ? lo : o + 1n;
    if (o === start) return null;
  }
}

describe('AddressSpace', () => {
  // fd00::/96 has a sparse index (2^32 addresses): its offsets and starts are drawn from the
  // first 64, so that a start is often taken and the take goes on searching
  it.each(['10.1.2.0/28', '10.1.0.0/23', 'fd00::/124', '2001:db8::/120', 'fd00::/96'])(
    '%s: random take / takeAfter / set / clear / has agree with a model of the bands',
    (cidr) => {
      const p = Prefix.parse(cidr);
      const space = new AddressSpace(p);
      const first = big(p.first);
      const n = p.size;
      const ro = BigInt(p.rangeOffset);
      const window = n > 1n << 24n ? 64n : n + 2n; // offsets drawn from [0, window)
      const taken = new Set<bigint>();
      const rng = seededRandom(7);
      const w = new Uint32Array(4);
      const at = (o: bigint) => {
        const v = first + o;
        w[0] = Number((v >> 96n) & 0xffffffffn);
        w[1] = Number((v >> 64n) & 0xffffffffn);
        w[2] = Number((v >> 32n) & 0xffffffffn);
        w[3] = Number(v & 0xffffffffn);
        return w;
      };
      for (let step = 0; step < 3000; step++) {
        const o = BigInt(rng.nextU32() % Number(window)); // a few past the end of a small range
        switch (rng.nextU32() % 5) {
          case 0: {
            expect(space.set(at(o)), `set ${o}`).toBe(o < n && !taken.has(o));
            if (o < n) taken.add(o);
            break;
          }
          case 1: {
            expect(space.clear(at(o)), `clear ${o}`).toBe(taken.delete(o));
            break;
          }
          case 2: {
            expect(space.has(at(o)), `has ${o}`).toBe(taken.has(o));
            break;
          }
          default: {
            // a take in a band from a fixed start, then one more after it (a collision)
            const band = rng.nextU32() % 2 === 0 ? BAND_UPPER : BAND_LOWER;
            const [lo, hi] = band === BAND_UPPER ? [ro, n - 1n] : [0n, ro - 1n];
            const span = hi - lo + 1n < window ? hi - lo + 1n : window;
            const d = ro === 0n && band === BAND_LOWER ? 0n : BigInt(rng.nextU32() % Number(span));
            const want = band === BAND_LOWER && ro === 0n ? null : modelTake(taken, lo + d, lo, hi);
            const src = fixed([Number(d)]);
            const got = band === BAND_UPPER ? space.takeUpper(src) : space.takeLower(src);
            // takeUpper draws rand.Int63n(rangeSize): d < 2^k is drawn as is by the masked draw
            // only when it is below the bound, which it is here
            expect(got ? big(space.address) - first : null, `take band ${band} from ${d}`).toBe(want);
            if (want === null) break;
            taken.add(want);
            const next = modelTake(taken, want === hi ? lo : want + 1n, lo, hi);
            const gotNext = space.takeAfter(band, at(want));
            expect(gotNext ? big(space.address) - first : null, `takeAfter ${want}`).toBe(next);
            if (next !== null) taken.add(next);
          }
        }
      }
      expect(space.count()).toBe(taken.size);
      expect(space.index.validate()).toBe(0);
      space.destroy();
      space.destroy(); // idempotent
    },
  );

  it('text and offsets: addressText, textAt, offsetOf', () => {
    const p = Prefix.parse('2001:db8::/112');
    const space = new AddressSpace(p);
    expect(space.takeUpper(fixed([0]))).toBe(true);
    expect(space.addressText()).toBe(`2001:db8::${(p.rangeOffset + 1).toString(16)}`);
    expect(space.textAt(0, 0)).toBe('2001:db8::1');
    expect(() => space.textAt(0, 65535)).toThrow(/outside/);
    const out = new Uint32Array(2);
    expect(space.offsetOf(wordsOf('2001:db8::ffff'), out)).toBe(true);
    expect([...out]).toEqual([0, 65534]);
    expect(space.offsetOf(wordsOf('2001:db8::'), out)).toBe(false); // the network address
    expect(space.offsetOf(wordsOf('2001:db8::1:0'), out)).toBe(false); // past last
    space.destroy();
  });

  it('the last IPv6 /64: a drawn start whose address leaves the family yields nothing in the upper band (upstream iterator)', () => {
    const p = Prefix.parse('ffff:ffff:ffff:ffff::/64');
    const space = new AddressSpace(p);
    // rand.Uint64 = 2^64 − 1 (the guard subtracts rangeOffset): first + rangeOffset + d > 2^128 − 1
    expect(space.takeUpper(fixed([0xffffffff, 0xffffffff]))).toBe(false);
    expect(space.count()).toBe(0);
    // a small draw stays inside: the first address of the upper band
    expect(space.takeUpper(fixed([0, 0]))).toBe(true);
    expect(space.addressText()).toBe(`ffff:ffff:ffff:ffff::${(p.rangeOffset + 1).toString(16)}`);
    space.destroy();
  });

  it('setMany loads addresses in one call; an address outside is refused', () => {
    const p = Prefix.parse('10.9.0.0/24');
    const space = new AddressSpace(p);
    const words = new Uint32Array([0, 0, 0, 0x0a090001, 0, 0, 0, 0x0a0900fe, 0, 0, 0, 0x0a090001]);
    expect(space.setMany(words, 3)).toBe(2);
    expect(space.has(wordsOf('10.9.0.254'))).toBe(true);
    expect(() => space.setMany(new Uint32Array([0, 0, 0, 0x0a0a0001]), 1)).toThrow(/outside/);
    expect(space.count()).toBe(2);
    space.destroy();
  });
});
