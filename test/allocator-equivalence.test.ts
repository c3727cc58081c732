// Allocator (WASM index) against ReferenceAllocator (the upstream algorithm as written): with the
// same seed and the same store contents they must make the same choices — the same address from
// every allocateNext, the same error (class and message) from every call, the same used()/free(),
// the same records in the store and the same metric counters. One seeded driver produces 10,000
// mixed operations per range, in phases that fill the range, drain it and churn it, with foreign
// records, malformed names, mid-air collisions and store failures injected into both stores alike.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { Allocator } from '../adapters/allocator.ts';
import type { IndexKind } from '../adapters/free-index.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { Xoshiro128, drawBelow, drawU64, seededRandom, uniformBelow, type RandomSource } from '../adapters/random.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { Prefix } from '../adapters/geometry.ts';
import { formatAddr } from '../adapters/address.ts';
import { allocatorLabels } from '../adapters/store.ts';
import type { IPAllocator } from '../adapters/types.ts';
import { METRIC_ALLOCATED_IPS, METRIC_AVAILABLE_IPS, METRIC_ALLOCATIONS, METRIC_ERRORS } from '../adapters/metrics.ts';

const OPS = 10_000;

/** How the Allocator reaches its MemoryStore: createSync/deleteSync/getSync, or the promises. */
type StorePath = 'sync' | 'async';

type Outcome = string;

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    const v = await p;
    return `ok ${v === undefined ? '' : String(v)}`;
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
}

/** Side by side: the same call on both, the outcomes must match. */
class Pair {
  readonly storeR = new FaultyMemoryStore();
  readonly storeA: FaultyMemoryStore;
  readonly regR = new Registry();
  readonly regA = new Registry();
  readonly ref: ReferenceAllocator;
  readonly alloc: Allocator;
  readonly prefix: Prefix;
  /** Addresses handed out and not released, for picking realistic release/allocate targets. */
  readonly live: string[] = [];
  /** Names injected into both stores. */
  readonly injected: string[] = [];
  /** Outcome kinds seen (`ok`, `ErrFull`, …), to check the driver reached the interesting paths. */
  readonly seen = new Map<string, number>();

  /** storePath 'async': the Allocator's store hides its synchronous operations (every call through promises). */
  constructor(cidr: string, seed: number, index: IndexKind = 'auto', storePath: StorePath = 'sync') {
    this.storeA = new FaultyMemoryStore({ syncOps: storePath === 'sync' });
    this.ref = new ReferenceAllocator(cidr, { store: this.storeR, random: seededRandom(seed), metrics: this.regR });
    this.alloc = Allocator.create(cidr, { store: this.storeA, random: seededRandom(seed), metrics: this.regA, index });
    this.prefix = Prefix.parse(cidr);
  }

  async both(f: (a: IPAllocator) => Promise<unknown>, what: string): Promise<Outcome> {
    const r = await outcome(f(this.ref));
    const a = await outcome(f(this.alloc));
    if (r !== a) throw new Error(`${what}: reference ${JSON.stringify(r)} but allocator ${JSON.stringify(a)}`);
    const kind = r.startsWith('ok') ? 'ok' : r.slice(0, r.indexOf(':'));
    this.seen.set(kind, (this.seen.get(kind) ?? 0) + 1);
    if (this.ref.used() !== this.alloc.used() || this.ref.free() !== this.alloc.free()) {
      throw new Error(`${what}: used/free differ: ${this.ref.used()}/${this.ref.free()} vs ${this.alloc.used()}/${this.alloc.free()}`);
    }
    return r;
  }

  stores(f: (s: FaultyMemoryStore) => void): void {
    f(this.storeR);
    f(this.storeA);
  }

  async metrics(): Promise<string[]> {
    const out: string[] = [];
    for (const reg of [this.regR, this.regA]) {
      const lines: string[] = [];
      for (const name of [METRIC_ALLOCATED_IPS, METRIC_AVAILABLE_IPS, METRIC_ALLOCATIONS, METRIC_ERRORS]) {
        lines.push(await reg.getSingleMetricAsString(name));
      }
      out.push(lines.join('\n'));
    }
    return out;
  }
}

/** A random address text near the range: inside, the edges, just outside, other family, junk. */
function pickAddress(pair: Pair, rng: RandomSource): string {
  const p = pair.prefix;
  const k = uniformBelow(rng, 20);
  if (k < 6 && pair.live.length > 0) return pair.live[uniformBelow(rng, pair.live.length)]!;
  if (k === 6) return formatAddr(p.version, p.network);
  if (k === 7) return formatAddr(p.version, p.broadcast);
  if (k === 8) return p.version === 4 ? '2001:db8::1' : '10.0.0.1';
  if (k === 9) return 'not-an-ip';
  if (k === 10) return formatAddr(p.version, p.first);
  if (k === 11) return formatAddr(p.version, p.last);
  // inside: a low offset (dense region) or anywhere
  const count = p.sizeHi * 4294967296 + p.sizeLo;
  const span = Math.min(count, k < 16 ? 600 : 2 ** 52);
  return p.formatAt(0, uniformBelow(rng, span));
}

async function drive(cidr: string, seed: number, index: IndexKind, storePath: StorePath): Promise<void> {
  const pair = new Pair(cidr, seed, index, storePath);
  const rng = seededRandom(seed * 7919 + 17);
  const owner = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };
  for (let i = 0; i < OPS; i++) {
    // phases of 1000 operations: fill, churn, drain, …
    const phase = Math.floor(i / 1000) % 3;
    const allocWeight = phase === 0 ? 80 : phase === 1 ? 50 : 20;
    const roll = uniformBelow(rng, 100);
    const what = `op ${i} (${cidr}, seed ${seed})`;
    if (roll < allocWeight * 0.75) {
      const r = await pair.both((a) => a.allocateNext(roll % 2 === 0 ? owner : undefined), `${what} allocateNext`);
      if (r.startsWith('ok ')) pair.live.push(r.slice(3));
    } else if (roll < allocWeight) {
      const ip = pickAddress(pair, rng);
      const r = await pair.both((a) => a.allocate(ip), `${what} allocate(${ip})`);
      if (r.startsWith('ok')) pair.live.push(ip);
    } else if (roll < 97) {
      const useLive = pair.live.length > 0 && uniformBelow(rng, 4) !== 0;
      const j = useLive ? uniformBelow(rng, pair.live.length) : -1;
      const ip = useLive ? pair.live[j]! : pickAddress(pair, rng);
      await pair.both((a) => a.release(ip), `${what} release(${ip})`);
      if (useLive) {
        pair.live[j] = pair.live[pair.live.length - 1]!;
        pair.live.pop();
      }
    } else {
      // disturbances, applied to both stores alike
      const d = uniformBelow(rng, 6);
      if (d === 0) pair.stores((s) => s.collideCreates(1));
      else if (d === 1) {
        const err = new Error('server error');
        pair.stores((s) => s.failCreates(err, 1));
      } else if (d === 2) {
        // a record of another controller (no labels) somewhere in the range
        const ip = pickAddress(pair, rng);
        pair.stores((s) => s.inject(ip, {}));
        pair.injected.push(ip);
      } else if (d === 3) {
        // labelled records the allocator did not write: malformed, or a non-canonical spelling
        const name = uniformBelow(rng, 2) === 0 ? 'invalid-ip-address' : nonCanonical(pickAddress(pair, rng));
        pair.stores((s) => s.inject(name, allocatorLabels(pair.prefix.family)));
        pair.injected.push(name);
      } else if (d === 4 && pair.injected.length > 0) {
        const name = pair.injected.pop()!;
        pair.stores((s) => void s.delete(name).catch(() => {}));
      } else {
        const ip = pickAddress(pair, rng);
        await pair.both((a) => a.has(ip), `${what} has(${ip})`);
      }
      // a pending injected failure/collision must not leak into the comparison of the next op:
      // both stores got the same one, so the next create on each side consumes it alike.
    }
  }
  // Drop pending injections identically, then compare everything that is left.
  pair.stores((s) => {
    s.failCreates(new Error('unused'), 0);
    s.collideCreates(0);
  });
  const names = (s: FaultyMemoryStore) =>
    s
      .records()
      .map((r) => `${r.name} ${JSON.stringify(r.labels)} ${JSON.stringify(r.parentRef)}`)
      .sort();
  expect(names(pair.storeA)).toEqual(names(pair.storeR));
  const [mr, ma] = await pair.metrics();
  expect(ma).toBe(mr);
  const collect = (a: IPAllocator) => {
    const out: string[] = [];
    a.forEach((ip) => out.push(ip));
    return out.sort();
  };
  expect(collect(pair.alloc)).toEqual(collect(pair.ref));
  pair.alloc.validate();
  // the driver must have reached the interesting paths
  for (const kind of ['ok', 'ErrAllocated', 'ErrNotInRange', 'InvalidAddressError', 'Error']) {
    expect(pair.seen.get(kind) ?? 0, kind).toBeGreaterThan(0);
  }
  if (pair.prefix.size <= 256n) expect(pair.seen.get('ErrFull') ?? 0).toBeGreaterThan(0);
  pair.ref.destroy();
  pair.alloc.destroy();
}

/** A non-canonical spelling of the same address where one exists (IPv6: zero groups written out; IPv4: mapped). */
function nonCanonical(ip: string): string {
  if (ip.includes(':')) {
    if (ip.includes('::')) return ip.replace('::', ':0:0:').replace(/^:/, '0:').replace(/:$/, ':0');
    return ip.toUpperCase();
  }
  return `::ffff:${ip}`;
}

describe('Allocator ≡ ReferenceAllocator (same seed, same store contents)', () => {
  describe.each([
    ['192.168.7.0/24', 'auto', 'sync'],
    ['10.20.16.0/20', 'auto', 'sync'],
    ['2001:db8:5::/112', 'auto', 'sync'],
    ['fd00:1::/120', 'auto', 'sync'],
    ['2001:db8:1:2::/64', 'auto', 'sync'],
    ['10.0.0.0/29', 'auto', 'sync'],
    ['192.168.7.0/24', 'sparse', 'sync'],
    ['2001:db8:5::/112', 'sparse', 'sync'],
    ['192.168.7.0/24', 'auto', 'async'],
    ['2001:db8:5::/112', 'auto', 'async'],
    ['2001:db8:1:2::/64', 'auto', 'async'],
    ['10.0.0.0/29', 'auto', 'async'],
  ] as [string, IndexKind, StorePath][])('%s (index %s, %s store calls)', (cidr, index, storePath) => {
    it.each([1, 2024])('10,000 mixed operations, seed %i', async (seed) => {
      await drive(cidr, seed, index, storePath);
    });
  });

  it('the random streams stay in step through ErrFull (fast path) and the lower-band fallback', async () => {
    const pair = new Pair('10.1.1.0/27', 5); // 30 addresses: upper 14, lower 16
    for (let i = 0; i < 30; i++) await pair.both((a) => a.allocateNext(), `fill ${i}`);
    for (let i = 0; i < 5; i++) expect(await pair.both((a) => a.allocateNext(), `full ${i}`)).toBe('ErrFull: range is full');
    await pair.both((a) => a.release('10.1.1.3'), 'release');
    await pair.both((a) => a.release('10.1.1.20'), 'release');
    expect(await pair.both((a) => a.allocateNext(), 'after release')).toBe('ok 10.1.1.20');
    expect(await pair.both((a) => a.allocateNext(), 'after release')).toBe('ok 10.1.1.3');
    // the next draw must still agree
    await pair.both((a) => a.release('10.1.1.7'), 'release');
    await pair.both((a) => a.release('10.1.1.9'), 'release');
    const x = await pair.both((a) => a.allocateNext(), 'lower band draw');
    expect(['ok 10.1.1.7', 'ok 10.1.1.9']).toContain(x);
  });
});

describe('calls started together, without awaiting each other (the README: The one-line swap)', () => {
  // Both take the same values from the source in the same order, but once the dynamic band is
  // full the Allocator draws a call's static-band start at once, ReferenceAllocator a microtask
  // later, after the later calls' dynamic-band draws: the static band gets different addresses,
  // not only another order. Pinned as the README tells it.
  it('a /24, seededRandom(8), 240 calls: the same 238 dynamic-band answers, other static-band ones', async () => {
    const answers: string[][] = [];
    for (const Class of [ReferenceAllocator, Allocator]) {
      const a = new Class('10.0.0.0/24', { store: new MemoryStore(), random: seededRandom(8) });
      answers.push(await Promise.all(Array.from({ length: 240 }, () => a.allocateNext())));
      a.destroy();
    }
    const [reference, allocator] = answers as [string[], string[]];
    expect(allocator.slice(0, 238)).toEqual(reference.slice(0, 238));
    expect(reference.slice(238)).toEqual(['10.0.0.14', '10.0.0.9']);
    expect(allocator.slice(238)).toEqual(['10.0.0.3', '10.0.0.9']);
    for (const got of answers) expect(new Set(got).size).toBe(240);
  });

  it.each([true, false])(
    'a full /27 (syncOps %s), allocateNext and release started together: ErrFull from Allocator, the released address from ReferenceAllocator',
    async (syncOps) => {
      const answers: string[] = [];
      for (const Class of [ReferenceAllocator, Allocator]) {
        const a = new Class('10.0.0.0/27', { store: new MemoryStore({ syncOps }), random: seededRandom(1) });
        for (let i = 0; i < 30; i++) await a.allocateNext();
        const [next] = await Promise.allSettled([a.allocateNext(), a.release('10.0.0.5')]);
        answers.push(next.status === 'fulfilled' ? next.value : String(next.reason));
        a.destroy();
      }
      expect(answers).toEqual(['10.0.0.5', 'ErrFull: range is full']);
    },
  );

  it('awaited one at a time, the same 240 answers', async () => {
    const answers: string[][] = [];
    for (const Class of [ReferenceAllocator, Allocator]) {
      const a = new Class('10.0.0.0/24', { store: new MemoryStore(), random: seededRandom(8) });
      const got: string[] = [];
      for (let i = 0; i < 240; i++) got.push(await a.allocateNext());
      answers.push(got);
      a.destroy();
    }
    expect(answers[1]).toEqual(answers[0]);
  });
});

// The draws both allocators share (adapters/random.ts).
describe('random: the shared draws', () => {
  it('xoshiro128** matches the reference implementation from state [1, 2, 3, 4]', () => {
    const r = new Xoshiro128(1, 2, 3, 4);
    expect([r.nextU32(), r.nextU32(), r.nextU32()]).toEqual([11520, 0, 5927040]);
  });

  it('equal seeds give equal sequences, different seeds different ones', () => {
    const a = seededRandom(123);
    const b = seededRandom(123);
    const c = seededRandom(124);
    const sa = Array.from({ length: 8 }, () => a.nextU32());
    expect(Array.from({ length: 8 }, () => b.nextU32())).toEqual(sa);
    expect(Array.from({ length: 8 }, () => c.nextU32())).not.toEqual(sa);
    expect(() => seededRandom(Number.NaN)).toThrow(InvalidArgumentError);
  });

  it('drawBelow stays below n at the word boundaries and makes no draw for n = 1', () => {
    const rng = seededRandom(9);
    const out = { hi: 0, lo: 0 };
    const cases: [number, number][] = [
      [0, 2],
      [0, 3],
      [0, 0xffffffff],
      [1, 0],
      [1, 1],
      [0x7fffffff, 0xffffffff],
      [0xffffffff, 0xffffffff],
    ];
    for (const [nHi, nLo] of cases) {
      for (let i = 0; i < 200; i++) {
        drawBelow(rng, nHi, nLo, out);
        const below = out.hi < nHi || (out.hi === nHi && out.lo < nLo);
        if (!below) throw new Error(`drawBelow(${nHi}, ${nLo}) gave (${out.hi}, ${out.lo})`);
      }
    }
    const counting = {
      n: 0,
      nextU32() {
        this.n++;
        return 0;
      },
    };
    drawBelow(counting, 0, 1, out);
    expect(counting.n).toBe(0);
    expect(out).toEqual({ hi: 0, lo: 0 });
    expect(() => drawBelow(counting, 0, 0, out)).toThrow(RangeError);
  });

  it('drawBelow is uniform: every value of a small range, near-equal counts (fixed seed)', () => {
    const rng = seededRandom(77);
    const n = 10;
    const counts = new Array<number>(n).fill(0);
    for (let i = 0; i < 100_000; i++) counts[uniformBelow(rng, n)]!++;
    // chi-square with 9 degrees of freedom; 27.9 is the 0.1 % critical value
    const chi = counts.reduce((s, c) => s + (c - 10_000) ** 2 / 10_000, 0);
    expect(chi).toBeLessThan(27.9);
  });

  it('rejection keeps a non-power-of-two range unbiased (the top value is as likely as the bottom)', () => {
    // n = 3·2^30: a modulo reduction of a 32-bit draw would favour the lowest quarter 2:1
    const rng = seededRandom(5);
    const n = 3 * 2 ** 30;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 60_000; i++) {
      const v = uniformBelow(rng, n);
      if (v < 2 ** 30) low++;
      else if (v >= 2 * 2 ** 30) high++;
    }
    expect(Math.abs(low - high)).toBeLessThan(1500);
  });

  it('drawU64 takes hi then lo', () => {
    const words = [5, 6];
    const src = { nextU32: () => words.shift()! };
    const out = { hi: 0, lo: 0 };
    drawU64(src, out);
    expect(out).toEqual({ hi: 5, lo: 6 });
  });
});

// Draws that random runs practically never produce, scripted word by word.
describe('scripted draws reach the rare /64 branches identically', () => {
  const scripted = (words: number[]): RandomSource => {
    let i = 0;
    return { nextU32: () => words[i++ % words.length]! };
  };
  it.each([
    ['offset 0', '2001:db8::/64', [0, 0], '2001:db8::101'],
    ['#134193 guard: 2^64−1 − offset < rangeOffset', '2001:db8::/64', [0xffffffff, 0xffffffff], '2001:db8::101'],
    ['offset 2^64−257: one past last, clamps to the band start', '2001:db8::/64', [0xffffffff, 0xfffffeff], '2001:db8::101'],
    ['offset 2^64−258: exactly last', '2001:db8::/64', [0xffffffff, 0xfffffefe], '2001:db8::ffff:ffff:ffff:ffff'],
    [
      'top of the space: start overflows 128 bits, upper band yields nothing, lower band',
      'ffff:ffff:ffff:ffff::/64',
      [0xffffffff, 0xfffffeff, 5],
      'ffff:ffff:ffff:ffff::6',
    ],
  ])('%s', async (_what, cidr, words, want) => {
    const r = new ReferenceAllocator(cidr, { random: scripted(words) });
    const a = Allocator.create(cidr, { random: scripted(words) });
    expect(await r.allocateNext()).toBe(want);
    expect(await a.allocateNext()).toBe(want);
  });
});
