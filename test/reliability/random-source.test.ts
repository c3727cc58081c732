// Random sources handed to the allocators: a broken one (the same word forever, or words that
// the draw must always reject) ends in InvalidArgumentError naming the source, never a hang; a
// working one makes exactly the draws it made before the draws were bounded.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { InvalidArgumentError } from '../../adapters/errors.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { MetaAllocator, RANGE_POLICIES } from '../../adapters/meta-allocator.ts';
import {
  drawBelow,
  MAX_DRAW_TRIES,
  type RandomSource,
  seededRandom,
  uniformBelow,
  type U64Out,
  Xoshiro128,
} from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs } from '../../adapters/service-cidrs.ts';

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };

/** Returns `word` forever and counts its calls. */
class StuckSource implements RandomSource {
  calls = 0;
  constructor(private readonly word: number) {}
  nextU32(): number {
    this.calls++;
    return this.word;
  }
}

describe('a random source whose values are not u32', () => {
  const VALUES: [string, unknown][] = [
    ['NaN', Number.NaN],
    ['0.5', 0.5],
    ['undefined', undefined],
    ['-5', -5],
    ['2^32', 2 ** 32],
    ['5n', 5n],
    ["'7'", '7'],
  ];
  const MAKERS: [string, (random: RandomSource) => { allocateNext(): unknown; used(): number; destroy(): void }][] = [
    ['Range /28', (random) => new Range('10.0.0.0/28', { random })],
    ['Range /64', (random) => new Range('2001:db8::/64', { random })],
    ['Allocator /28', (random) => new Allocator('10.0.0.0/28', { store: new MemoryStore(), random })],
    ['Allocator /64', (random) => new Allocator('2001:db8::/64', { store: new MemoryStore(), random })],
    ['ReferenceAllocator /64', (random) => new ReferenceAllocator('2001:db8::/64', { store: new MemoryStore(), random })],
    ...RANGE_POLICIES.map((policy): (typeof MAKERS)[number] => [
      `MetaAllocator (${policy}) over two ranges`,
      (random) => {
        const cidrs = new InMemoryServiceCIDRs();
        cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
        cidrs.addServiceCIDR('b', ['10.1.0.0/28']);
        return new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random, policy });
      },
    ]),
  ];
  for (const [maker, make] of MAKERS) {
    it.each(VALUES)(`${maker}: nextU32() = %s → InvalidArgumentError naming the value, nothing reserved`, async (_name, value) => {
      const a = make({ nextU32: () => value as number });
      const e = await (async () => {
        try {
          await a.allocateNext();
        } catch (error) {
          return error;
        }
      })();
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as Error).message).toMatch(/^the random source: nextU32\(\) must return an integer in \[0, 2\^32\), got /);
      expect(a.used()).toBe(0);
      a.destroy();
    });
  }
});

describe('a broken random source', () => {
  it.each([
    ['Range /28, dense fast path', () => new Range('10.0.0.0/28', { random: new StuckSource(0xffffffff) })],
    ['Range /64, sparse path', () => new Range('2001:db8::/64', { random: new StuckSource(0xffffffff) })],
    ['Range /28 forced sparse', () => new Range('10.0.0.0/28', { random: new StuckSource(0xffffffff), indexKind: 'sparse' })],
  ])('%s: allocateNext → InvalidArgumentError naming the source, nothing reserved', (_name, make) => {
    const r = make();
    expect(() => r.allocateNext()).toThrow(InvalidArgumentError);
    expect(() => r.allocateNext()).toThrow(/random source StuckSource .* is broken/);
    expect(() => r.allocateMany(2)).toThrow(InvalidArgumentError);
    expect(r.used()).toBe(0);
    r.validate();
    r.destroy();
  });
  it.each([
    ['Allocator', (random: RandomSource) => new Allocator('10.0.0.0/28', { store: new MemoryStore(), random })],
    ['ReferenceAllocator', (random: RandomSource) => new ReferenceAllocator('10.0.0.0/28', { store: new MemoryStore(), random })],
  ])('%s.allocateNext → InvalidArgumentError, no record created', async (_name, make) => {
    const a = make(new StuckSource(0xffffffff));
    await expect(a.allocateNext(OWNER)).rejects.toThrow(InvalidArgumentError);
    expect(a.used()).toBe(0);
    a.destroy();
  });
  it('a MetaAllocator whose ranges need a draw fails the same way', async () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/28']);
    const m = new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random: new StuckSource(0xffffffff) });
    await expect(m.allocateNext(OWNER)).rejects.toThrow(InvalidArgumentError);
    expect(m.used()).toBe(0);
    m.destroy();
  });
  it('drawBelow gives up after exactly MAX_DRAW_TRIES rejections, on both paths', () => {
    const out: U64Out = { hi: 0, lo: 0 };
    const small = new StuckSource(0xffffffff);
    expect(() => drawBelow(small, 0, 13, out)).toThrow(InvalidArgumentError);
    expect(small.calls).toBe(MAX_DRAW_TRIES);
    const wide = new StuckSource(0xffffffff);
    expect(() => drawBelow(wide, 5, 3, out)).toThrow('outside [0, 21474836483)');
    expect(wide.calls).toBe(2 * MAX_DRAW_TRIES);
  });
  it('a source stuck on an acceptable word is not broken (it is merely not random)', () => {
    const r = new Range('10.0.0.0/28', { random: new StuckSource(0) });
    expect(r.allocateMany(14)).toHaveLength(14);
    r.destroy();
  });
});

describe('a working source draws exactly as before', () => {
  // The unbounded loop, kept here as the oracle of the draws.
  function unboundedBelow(rng: RandomSource, n: number): number {
    const m = n - 1;
    if (m === 0) return 0;
    const mask = 0xffffffff >>> Math.clz32(m);
    let x: number;
    do x = (rng.nextU32() & mask) >>> 0;
    while (x > m);
    return x;
  }
  it('uniformBelow matches the unbounded loop for 100,000 draws over many n', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const got: number[] = [];
    const want: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const n = 1 + (i % 1000) * 4099 + (i % 7);
      got.push(uniformBelow(a, n));
      want.push(unboundedBelow(b, n));
    }
    expect(got).toEqual(want);
  });
});

describe('seeds and state words', () => {
  it.each([Number.NaN, Infinity, '1', null, 1n])('seededRandom(%s) → InvalidArgumentError', (seed) => {
    expect(() => seededRandom(seed as never)).toThrow(InvalidArgumentError);
  });
  it('new Xoshiro128 with a non-integer state word → InvalidArgumentError', () => {
    expect(() => new Xoshiro128('a' as never, 1, 2, 3)).toThrow(InvalidArgumentError);
    expect(() => new Xoshiro128(1, 2, 3, 0.5)).toThrow(InvalidArgumentError);
    expect(new Xoshiro128(0, 0, 0, 0).nextU32()).toBe(new Xoshiro128(0x9e3779b9, 0, 0, 0).nextU32());
  });
});
