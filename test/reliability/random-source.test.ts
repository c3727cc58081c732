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
  it('seededRandom itself given as options.random is refused with how to call it', () => {
    expect(() => new Allocator('10.0.0.0/29', { random: seededRandom as never })).toThrow(
      new InvalidArgumentError(
        'options.random must be an object with a nextU32() method (the generator seededRandom(seed) makes, e.g. seededRandom(1)), got the function "seededRandom"',
      ),
    );
    expect(() => new Allocator('10.0.0.0/29', { random: Math.random as never })).toThrow(
      new InvalidArgumentError('options.random must be an object with a nextU32() method, got the function "random"'),
    );
  });
  it.each([
    ['NaN', Number.NaN, 'seed must be an integer, got NaN'],
    ['Infinity', Infinity, 'seed must be an integer, got Infinity'],
    ['-Infinity', -Infinity, 'seed must be an integer, got -Infinity'],
    ['"1"', '1', 'seed must be an integer (a number), got "1"'],
    ['null', null, 'seed must be an integer (a number), got null'],
    ['1n', 1n, 'seed must be an integer (a number), got 1n (a bigint: pass Number(seed))'],
    ['-0.5', -0.5, 'seed must be an integer, got -0.5: only its integer part would count'],
    ['1.9', 1.9, 'seed must be an integer, got 1.9: only its integer part would count'],
    ['Number.EPSILON', Number.EPSILON, `seed must be an integer, got ${Number.EPSILON}: only its integer part would count`],
  ])('seededRandom(%s) → InvalidArgumentError saying what is wrong', (_name, seed, message) => {
    expect(() => seededRandom(seed as never)).toThrow(InvalidArgumentError);
    expect(() => seededRandom(seed as never)).toThrow(message);
  });
  it.each([2 ** 53, -(2 ** 53), 2 ** 64, -Number.MAX_VALUE, Number.MAX_VALUE])(
    'seededRandom(%s), beyond Number.MAX_SAFE_INTEGER → InvalidArgumentError naming the range',
    (seed) => {
      expect(() => seededRandom(seed)).toThrow(InvalidArgumentError);
      expect(() => seededRandom(seed)).toThrow(/at most Number\.MAX_SAFE_INTEGER \(2\^53 − 1\) in magnitude/);
    },
  );
  it('the largest seeds are accepted, and ±Number.MAX_SAFE_INTEGER and their neighbours differ', () => {
    const max = Number.MAX_SAFE_INTEGER;
    const firsts = [max, max - 1, -max, -(max - 1)].map((seed) => seededRandom(seed).nextU32());
    expect(new Set(firsts).size).toBe(4);
  });
  it('distinct small seeds give distinct first draws: 0..9999 give at least 9990 different values', () => {
    // Two seeds' first draws coincide only by chance (about 0.01 pairs among 10,000 seeds),
    // not because the seeds share their high 32 bits.
    const firsts = new Set<number>();
    for (let seed = 0; seed < 10_000; seed++) firsts.add(seededRandom(seed).nextU32());
    expect(firsts.size).toBeGreaterThanOrEqual(9990);
  });
  it('seeds that share their low 32 bits give distinct first draws too', () => {
    const firsts = new Set<number>();
    for (let hi = 0; hi < 1000; hi++) firsts.add(seededRandom(hi * 2 ** 32 + 7).nextU32());
    expect(firsts.size).toBeGreaterThanOrEqual(999);
  });
  it('neighbouring seeds are unrelated from the first draw: each of the first four draws differs in about 16 bits', () => {
    // Correlated seeds (some state words equal) would give equal draws, and far fewer differing bits.
    for (let k = 0; k < 4; k++) {
      let bits = 0;
      const seeds = 2000;
      for (let seed = 0; seed < seeds; seed++) {
        const a = seededRandom(seed);
        const b = seededRandom(seed + 1);
        let x = 0;
        for (let i = 0; i <= k; i++) x = (a.nextU32() ^ b.nextU32()) >>> 0;
        for (; x !== 0; x >>>= 1) bits += x & 1;
      }
      // 32 000 bit pairs per draw: a mean of 16 ± 0.09 (one standard deviation); 15.5..16.5 is 5.6 of them.
      expect(bits / seeds).toBeGreaterThan(15.5);
      expect(bits / seeds).toBeLessThan(16.5);
    }
  });
  it('the first allocateNext of a seeded Range over a /12 depends on the seed', () => {
    const firsts = [1, 2, 3, 4, 5, 6].map((seed) => new Range('10.96.0.0/12', { random: seededRandom(seed) }).allocateNext());
    expect(new Set(firsts).size).toBe(6);
  });
  it('a seeded MetaAllocator over eight /16s does not start in the same range for every seed', async () => {
    const starts = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) {
      const cidrs = new InMemoryServiceCIDRs();
      for (let i = 0; i < 8; i++) cidrs.addServiceCIDR(`cidr-${i}`, [`10.${100 + i}.0.0/16`]);
      const meta = new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random: seededRandom(seed) });
      starts.add((await meta.allocateNext(OWNER)).split('.').slice(0, 2).join('.'));
      meta.destroy();
    }
    expect(starts.size).toBeGreaterThan(1);
  });
  it('equal seeds give equal sequences; the sign counts, and -0 is 0', () => {
    const draws = (seed: number) => {
      const r = seededRandom(seed);
      return Array.from({ length: 8 }, () => r.nextU32());
    };
    expect(draws(123)).toEqual(draws(123));
    expect(draws(-0)).toEqual(draws(0));
    expect(draws(-1)).not.toEqual(draws(1));
    expect(draws(-(2 ** 32))).not.toEqual(draws(2 ** 32));
  });
  it('new Xoshiro128 with a state word that is not an integer in [0, 2^32) → InvalidArgumentError naming it', () => {
    expect(() => new Xoshiro128('a' as never, 1, 2, 3)).toThrow(InvalidArgumentError);
    expect(() => new Xoshiro128(1, 2, 3, 0.5)).toThrow(InvalidArgumentError);
    // not taken modulo 2^32: 2^32 would be the all-zero state, -1 the word 2^32 - 1
    for (const [words, message] of [
      [[2 ** 32, 0, 0, 0], 'got 4294967296 as word 0'],
      [[1, -1, 2, 3], 'got -1 as word 1'],
      [[1, 2, 1e300, 3], 'got 1e+300 as word 2'],
      [[1, 2, 3, Number.NaN], 'got NaN as word 3'],
      [[1n, 2, 3, 4], 'got 1n as word 0'],
    ] as const) {
      expect(() => new Xoshiro128(...(words as unknown as [number, number, number, number]))).toThrow(
        new InvalidArgumentError(`Xoshiro128 state words must be integers in [0, 2^32), ${message}`),
      );
    }
    expect(new Xoshiro128(-0, 0xffffffff, 0, 0).nextU32()).toBe(new Xoshiro128(0, 0xffffffff, 0, 0).nextU32());
    expect(new Xoshiro128(0, 0, 0, 0).nextU32()).toBe(new Xoshiro128(0x9e3779b9, 0, 0, 0).nextU32());
  });
});

describe("a source of your own that looks like this package's generator is guarded all the same", () => {
  /** A source drawing from seededRandom(1) that destroys `target()` at its first draw, and tells what that did. */
  function destroyingSource(target: () => Allocator) {
    const inner = seededRandom(1);
    const seen: { destroy?: unknown } = {};
    const nextU32 = () => {
      if (!('destroy' in seen)) {
        try {
          target().destroy();
          seen.destroy = 'allowed';
        } catch (e) {
          seen.destroy = e;
        }
      }
      return inner.nextU32();
    };
    return { nextU32, seen };
  }

  it.each([
    [
      'Object.create(Xoshiro128.prototype) with a nextU32 of its own',
      (f: () => number) => Object.create(Xoshiro128.prototype, { nextU32: { value: f } }),
    ],
    [
      "a Proxy whose getPrototypeOf answers Xoshiro128's prototype",
      (f: () => number) => new Proxy({ nextU32: f }, { getPrototypeOf: () => Xoshiro128.prototype }),
    ],
  ])('%s: destroy() from its draw is refused, and the call allocates', async (_, disguise) => {
    // Regression: guardedSource knew this package's generators by their prototype, so these ran
    // unguarded: destroy() from the draw freed the range mid-call, and allocateNext failed with
    // "core space_take answered -1"
    let a: Allocator | undefined;
    const { nextU32, seen } = destroyingSource(() => a!);
    a = Allocator.create('10.0.0.0/24', { store: new MemoryStore(), random: disguise(nextU32) as RandomSource });
    const ip = await a.allocateNext(OWNER);
    expect(seen.destroy).toBeInstanceOf(InvalidArgumentError);
    expect(a.used()).toBe(1);
    expect(ip.startsWith('10.0.0.')).toBe(true);
    a.destroy();
  });

  it("this package's generators are frozen: no nextU32 of the caller's can shadow theirs", () => {
    const r = seededRandom(1);
    expect(Object.isFrozen(r)).toBe(true);
    expect(() => {
      (r as { nextU32: () => number }).nextU32 = () => 0;
    }).toThrow(TypeError);
  });
});

describe('a random source of your own is read once, at construction', () => {
  // what was checked is what is called: a nextU32 deleted or replaced later, or a getter that
  // answers otherwise the next time, must not turn a draw into a TypeError
  const counting = () => {
    let reads = 0;
    let draws = 0;
    const source = {
      get nextU32() {
        if (reads++ > 0) throw new Error('read again');
        return () => (draws++ * 2654435761) >>> 0;
      },
    };
    return { source, reads: () => reads, draws: () => draws };
  };

  it('by Range, Allocator, ReferenceAllocator and MetaAllocator', async () => {
    const r = counting();
    const range = new Range('10.0.0.0/24', { random: r.source });
    range.allocateNext();
    range.allocateNext();
    expect([r.reads(), r.draws() > 0]).toEqual([1, true]);

    for (const make of [
      (random: RandomSource) => new Allocator('10.0.0.0/24', { store: new MemoryStore(), random }),
      (random: RandomSource) => new ReferenceAllocator('10.0.0.0/24', { store: new MemoryStore(), random }),
    ]) {
      const c = counting();
      const a = make(c.source);
      await a.allocateNext();
      await a.allocateNext();
      expect([c.reads(), c.draws() > 0]).toEqual([1, true]);
    }

    const replaced = { nextU32: (): number => 5 };
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/24']);
    cidrs.addServiceCIDR('b', ['10.1.0.0/24']);
    const meta = new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random: replaced });
    replaced.nextU32 = undefined as never;
    expect(await meta.allocateNext()).toMatch(/^10\.[01]\.0\./);
  });
});

describe("a random source of your own is named once, at construction, in the draws' errors", () => {
  // a draw's error reads the source's class name: a Proxy or a getter there must not replace
  // the InvalidArgumentError with its own error, nor run at every failing draw
  it('by Range, Allocator and MetaAllocator', async () => {
    const proxied = (): { source: RandomSource; reads: () => number } => {
      let reads = 0;
      const source = new Proxy(
        { nextU32: (): number => Number.NaN },
        {
          get(target, key) {
            if (key !== 'constructor') return target[key as 'nextU32'];
            if (reads++ > 0) throw new Error('constructor read again');
            return Object;
          },
        },
      );
      return { source, reads: () => reads };
    };
    const message = 'the random source: nextU32() must return an integer in [0, 2^32), got NaN (number)';
    const p = proxied();
    const range = new Range('10.0.0.0/24', { random: p.source });
    expect(() => range.allocateNext()).toThrow(new InvalidArgumentError(message));
    expect(() => range.allocateNext()).toThrow(new InvalidArgumentError(message));
    const q = proxied();
    const allocator = new Allocator('10.0.0.0/24', { store: new MemoryStore(), random: q.source });
    await expect(allocator.allocateNext()).rejects.toThrow(new InvalidArgumentError(message));
    await expect(allocator.allocateNext()).rejects.toThrow(new InvalidArgumentError(message));
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/24']);
    cidrs.addServiceCIDR('b', ['10.1.0.0/24']);
    const m = proxied();
    const meta = new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random: m.source });
    await expect(meta.allocateNext()).rejects.toThrow(new InvalidArgumentError(message));
    await expect(meta.allocateNext()).rejects.toThrow(new InvalidArgumentError(message));
    expect([p.reads(), q.reads(), m.reads()]).toEqual([1, 1, 1]);
    // one whose constructor cannot be read at all is "the random source"
    const throwing = new Proxy(
      { nextU32: (): number => 0.5 },
      {
        get(target, key) {
          if (key === 'constructor') throw new Error('no constructor');
          return target[key as 'nextU32'];
        },
      },
    );
    expect(() => new Range('10.0.0.0/24', { random: throwing }).allocateNext()).toThrow(
      new InvalidArgumentError('the random source: nextU32() must return an integer in [0, 2^32), got 0.5 (number)'),
    );
    range.destroy();
    allocator.destroy();
    meta.destroy();
  });
});
