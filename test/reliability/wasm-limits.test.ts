// WASM memory limits: with the core's memory capped (setMemoryLimit), a new big index and the
// growth of a sparse index cannot get memory. Each must fail with a typed OutOfMemoryError,
// change nothing (validate() passes, used/free/forEach/snapshot/store as before), and leave the
// range or allocator usable for releases; lifting the cap lets work continue.
//
// WebAssembly memory cannot shrink and the instance is shared by the whole process (vitest runs
// each file in its own fork): the memory a test takes to fill the cap is given back, and the cap
// lifted, after each test whether it passed or not (afterEach), and the cap restored in afterAll.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { FaultyMemoryStore } from '../doubles/memory-store-faults.ts';
import { Range } from '../../adapters/range.ts';
import { MetaAllocator } from '../../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../../adapters/service-cidrs.ts';
import { STRATEGIES } from '../../adapters/builtin-strategies.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import { seededRandom } from '../../adapters/random.ts';
import { ErrDestroyed, InvalidArgumentError, OutOfMemoryError } from '../../adapters/errors.ts';
import { core, memoryLimit, setMemoryLimit, wasmOutOfMemory } from '../../adapters/wasm.ts';
import { allocatorLabels } from '../../adapters/store.ts';
import { formatCount } from '../../adapters/quote.ts';
import { Driver } from './driver.ts';
import { rejection } from '../helpers.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

let ooms = 0;

/** Everything observable about a Range. */
function rangeState(r: Range): unknown {
  r.validate();
  const list: string[] = [];
  r.forEach((ip) => list.push(ip));
  return { used: r.used(), free: String(r.free()), list, snap: Array.from(r.snapshot().data).join(',') };
}

function expectOOM(f: () => unknown): void {
  let thrown: unknown;
  try {
    f();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(OutOfMemoryError);
  expect((thrown as Error).message).toMatch(/^out of memory: /);
  ooms++;
}

/** What exhaust() and takeTheRest() took, until giveBackAll gives it back. */
const fillers: Range[] = [];
const blocks: [ptr: number, bytes: number][] = [];

/** Gives back what exhaust() and takeTheRest() took; after each test too, so a failing one leaves nothing for the next. */
function giveBackAll(): void {
  for (const r of fillers.splice(0)) r.destroy(); // a filler destroyed already: destroy() again does nothing
  for (const [ptr, bytes] of blocks.splice(0)) core.buf_free(ptr, bytes);
}

afterEach(() => {
  giveBackAll();
  setMemoryLimit(Infinity);
});

/** Takes every byte the cap leaves with tiny indexes; returns them (giveBackAll gives them back). */
function exhaust(): Range[] {
  const hog: Range[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    try {
      const r = new Range('10.200.0.0/28');
      fillers.push(r);
      hog.push(r);
    } catch (e) {
      expect(e).toBeInstanceOf(OutOfMemoryError);
      return hog;
    }
  }
  throw new Error('the cap never bit');
}

/**
 * Takes, as raw blocks of the core's heap, the free memory below the cap that exhaust() leaves
 * (pieces too small for a /28's index, whose amount depends on what ran before), so that an
 * operation finds no headroom but what it frees itself. giveBackAll gives them back.
 */
function takeTheRest(): void {
  for (let bytes = 2 ** 30; bytes >= 16; bytes /= 2) {
    for (let ptr = core.buf_alloc(bytes); ptr !== 0; ptr = core.buf_alloc(bytes)) blocks.push([ptr, bytes]);
  }
  expect(core.heap_bytes_free()).toBe(0);
}

describe('WASM memory capped with setMemoryLimit', () => {
  let sparse: Range;
  let dense: Range;
  let store: FaultyMemoryStore;
  let alloc: Allocator;
  const d = new Driver(0x3a5e);

  // a count over the tests that ran (each asserts its own failures): a report, not a test
  afterAll(() => console.log(`[reliability] wasm limits: ${ooms} OutOfMemoryError failures checked, state unchanged after each`));

  beforeAll(async () => {
    sparse = new Range('2001:db8:1:2::/64', { random: seededRandom(1) });
    dense = new Range('10.100.0.0/20', { random: seededRandom(2) });
    store = new FaultyMemoryStore();
    alloc = new Allocator('2001:db8:3:4::/64', { store, random: seededRandom(3) });
    for (let i = 0; i < 50; i++) {
      sparse.allocateNext();
      dense.allocateNext();
      await alloc.allocateNext();
    }
  });

  it('setMemoryLimit validates its argument and never caps below the current size', () => {
    for (const bad of [-1, NaN, '1' as never, null as never]) expect(() => setMemoryLimit(bad)).toThrow(InvalidArgumentError);
    setMemoryLimit(0);
    expect(memoryLimit().limit).toBe(memoryLimit().size);
    setMemoryLimit(Infinity);
    expect(memoryLimit().limit).toBe(4 * 1024 ** 3);
  });

  it('setMemoryLimit refuses a number of bytes that is not whole 64 KiB pages, names the nearest, and keeps the cap', () => {
    setMemoryLimit(memoryLimit().size + 4 * 65536);
    const before = memoryLimit().limit;
    expect(() => setMemoryLimit(1_000_000)).toThrow(
      new InvalidArgumentError(
        'memory limit must be a multiple of 65,536 bytes (WebAssembly memory comes in pages of 64 KiB), got 1000000 (number); the nearest are 983,040 and 1,048,576',
      ),
    );
    expect(() => setMemoryLimit(before + 1)).toThrow(InvalidArgumentError);
    expect(() => setMemoryLimit(before + 0.5)).toThrow(InvalidArgumentError);
    expect(memoryLimit().limit).toBe(before);
    setMemoryLimit(before + 65536);
    expect(memoryLimit().limit).toBe(before + 65536);
    setMemoryLimit(5e9); // from 4 GiB up: WebAssembly's own limit, as Infinity
    expect(memoryLimit().limit).toBe(4 * 1024 ** 3);
    setMemoryLimit(Infinity);
  });

  it('memoryLimit().inUse counts what live indexes hold, and destroy() gives it back', () => {
    setMemoryLimit(Infinity);
    const before = memoryLimit().inUse;
    const r = new Range('fd00::/64');
    r.allocateMany(10_000);
    const during = memoryLimit().inUse;
    expect(during).toBeGreaterThan(before + 10_000 * 8); // at least the 8-byte keys
    expect(memoryLimit().size).toBeGreaterThanOrEqual(during);
    r.destroy();
    expect(memoryLimit().inUse).toBe(before);
  });

  it('a new big index → OutOfMemoryError, nothing changes; lifting the cap lets it through', () => {
    setMemoryLimit(0);
    exhaust(); // whatever the tests before left free (a big index given back is 2 MiB)
    const before = [rangeState(sparse), rangeState(dense)];
    const records = store.cache.size;
    const watchers = store.watcherCount;
    expectOOM(() => new Range('10.0.0.0/8')); // 2 MiB of bitmap
    expectOOM(() => new Allocator('10.0.0.0/9', { store })); // its one index: 1 MiB of bitmap
    expect([rangeState(sparse), rangeState(dense)]).toEqual(before);
    expect(store.cache.size).toBe(records); // no record, no subscription left behind
    expect(store.watcherCount).toBe(watchers);
    giveBackAll();
    setMemoryLimit(Infinity);
    const big = new Range('10.0.0.0/8');
    expect(big.allocateNext()).toMatch(/^10\./);
    big.destroy();
  });

  it('an OutOfMemoryError under a cap says what the index asked for, names the cap and its value and how to raise it, in fields too', () => {
    setMemoryLimit(0);
    const { limit, inUse } = memoryLimit();
    let thrown: unknown;
    try {
      new Range('0.0.0.0/1', { indexKind: 'dense' }); // 256 MiB of bitmap: more than the memory the tests before left
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    const e = thrown as OutOfMemoryError;
    // the whole index (its 256 MiB bitmap and its summaries), not the first of its blocks that failed
    expect(e.requested).toBeGreaterThan(2 ** 28);
    expect(e.requested).toBeLessThan(2 ** 29);
    expect([e.reason, e.limit, e.inUse]).toEqual(['limit', limit, inUse]);
    expect(e.free).toBeLessThan(limit);
    expect(e.message).toMatch(
      new RegExp(
        `^out of memory: creating an index of 2,147,483,646 addresses asked for ${formatCount(e.requested!)} bytes \\(272 MiB\\); `,
      ),
    );
    expect(e.message).toContain(`the WebAssembly memory cap set with setMemoryLimit is ${formatCount(limit)} bytes`);
    expect(e.message).toContain(`and only ${formatCount(e.free!)} bytes`);
    expect(e.message).toContain('raise the cap with setMemoryLimit(bytes), lift it with setMemoryLimit(Infinity)');
    expect(memoryLimit()).toEqual({ limit, size: memoryLimit().size, inUse });
  });

  it("with no cap, an OutOfMemoryError says none is set and names WebAssembly's own limit", () => {
    setMemoryLimit(Infinity);
    // A test cannot fill 4 GiB: a request larger than any block (2 GiB) fails in the core as the
    // 4 GiB limit would, and the error a core call would throw is built right after it.
    expect(core.buf_alloc(2 ** 31 + 16)).toBe(0);
    const uncapped = wasmOutOfMemory('creating an index of 16,777,214 addresses');
    expect(uncapped).toBeInstanceOf(OutOfMemoryError);
    expect([uncapped.requested, uncapped.reason, uncapped.limit]).toEqual([2 ** 31 + 16, 'limit', 2 ** 32]);
    expect(uncapped.message).toMatch(
      /^out of memory: creating an index of 16,777,214 addresses asked for 2,147,483,664 bytes \(2 GiB\); no memory cap is set \(setMemoryLimit\)/,
    );
    expect(uncapped.message).toContain("WebAssembly's own limit is 4,294,967,296 bytes (4 GiB)");
    expect(uncapped.message).not.toContain('raise');
  });

  it('sparse growth under the cap: allocate/allocateNext/allocateMany fail typed, state unchanged, releases work, then continue', () => {
    setMemoryLimit(0);
    exhaust();
    const before = rangeState(sparse);
    let failures = 0;
    const tried: string[] = [];
    // far-apart addresses: each needs a new node of the sparse index
    for (let i = 0; i < 10_000 && failures < 20; i++) {
      const ip = `2001:db8:1:2:${d.u32().toString(16).slice(0, 4) || '0'}:${(d.u32() & 0xffff).toString(16)}:${(d.u32() & 0xffff).toString(16)}:${((d.u32() & 0xfffe) | 1).toString(16)}`;
      const s = rangeState(sparse);
      try {
        sparse.allocate(ip);
        tried.push(ip);
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        ooms++;
        failures++;
        expect(sparse.has(ip)).toBe(false);
        expect(rangeState(sparse)).toEqual(s);
      }
    }
    expect(failures).toBeGreaterThan(0);
    // one more 64 KiB page: some inserts find memory, then the index runs out part-way
    setMemoryLimit(memoryLimit().size + 65536);
    const usedBefore = sparse.used();
    try {
      sparse.allocateMany(50_000);
    } catch (e) {
      expect(e).toBeInstanceOf(OutOfMemoryError);
      ooms++;
      sparse.validate();
      expect(sparse.used()).toBe(usedBefore); // reserves nothing: see the regression row below
    }
    // releases under the cap: every address allocated under the cap goes back
    for (const ip of tried) sparse.release(ip);
    sparse.validate();
    // the original 50 are still there
    const after: string[] = [];
    sparse.forEach((ip) => after.push(ip));
    expect(after.length).toBeGreaterThanOrEqual((before as { used: number }).used);
    giveBackAll();
    setMemoryLimit(Infinity);
    for (let i = 0; i < 1000; i++) sparse.allocateNext();
    sparse.validate();
  });

  it('Allocator.allocateNext under the cap: OutOfMemoryError before any record is written; releases work; then continue', async () => {
    setMemoryLimit(0);
    exhaust();
    const records = () =>
      store
        .records()
        .map((r) => r.name)
        .sort();
    let failures = 0;
    for (let i = 0; i < 5_000 && failures < 10; i++) {
      const beforeRecords = records();
      const used = alloc.used();
      try {
        await alloc.allocateNext();
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        ooms++;
        failures++;
        expect(records()).toEqual(beforeRecords);
        expect(alloc.used()).toBe(used);
        alloc.validate();
      }
    }
    expect(failures).toBeGreaterThan(0);
    const names = records();
    for (const ip of names.slice(0, 10)) await alloc.release(ip);
    expect(alloc.used()).toBe(names.length - 10);
    giveBackAll();
    setMemoryLimit(Infinity);
    for (let i = 0; i < 100; i++) await alloc.allocateNext();
    expect(alloc.used()).toBe(store.records().length);
    alloc.validate();
  });

  it('Allocator.allocate(ip) under the cap: typed OutOfMemoryError; the index still equals the store', async () => {
    setMemoryLimit(0);
    exhaust();
    let failures = 0;
    const problems: string[] = [];
    for (let i = 0; i < 5_000 && failures < 10; i++) {
      const ip = `2001:db8:3:4:${(d.u32() & 0xffff).toString(16)}:${(d.u32() & 0xffff).toString(16)}::${((d.u32() & 0xfffe) | 1).toString(16)}`;
      const before = store.records().length;
      try {
        await alloc.allocate(ip);
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        ooms++;
        failures++;
        const after = store.records().length;
        if (after !== before) problems.push(`allocate(${ip}) rejected but wrote its record`);
        if (alloc.used() !== after) problems.push(`allocate(${ip}): used() ${alloc.used()} but ${after} records`);
        try {
          alloc.validate();
        } catch (e) {
          problems.push(`allocate(${ip}): ${(e as Error).message}`);
        }
      }
    }
    giveBackAll();
    setMemoryLimit(Infinity);
    console.log(
      `[reliability] Allocator.allocate under the cap: ${failures} failures, problems: ${JSON.stringify(problems.slice(0, 6))} (${problems.length})`,
    );
    expect(failures).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  // allocateMany reserves one address at a time; when the index runs out of memory part-way it
  // throws OutOfMemoryError with the addresses reserved so far still reserved and not returned:
  // the caller cannot release them (its contract: "reserves nothing" when it throws ErrFull).
  // Regression row (found by this suite): allocateMany used to keep what it had reserved when it
  // ran out of memory part-way; it now gives it back before rethrowing.
  it('allocateMany that runs out of memory part-way reserves nothing (regression)', () => {
    setMemoryLimit(Infinity);
    const r = new Range('2001:db8:76::/64', { random: seededRandom(6) });
    r.allocateMany(1_000);
    const before = rangeState(r);
    setMemoryLimit(0);
    exhaust();
    setMemoryLimit(memoryLimit().size + 65536); // one more 64 KiB page: room for part of the batch, not all of it
    let thrown: unknown;
    try {
      r.allocateMany(50_000);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    ooms++;
    expect(rangeState(r)).toEqual(before);
    const notReached = /([\d,]+) addresses it had not reached/.exec((thrown as Error).message);
    expect(Number(notReached?.[1]?.replaceAll(',', ''))).toBeLessThan(50_000); // part-way: some were reserved first
    giveBackAll();
    setMemoryLimit(Infinity);
    expect(r.allocateMany(50_000)).toHaveLength(50_000);
    r.validate();
    r.destroy();
  });

  // Regressions (each below): a batch, or a cool-down's expiry, that ran out of
  // memory half-way left part of its work done.
  it('Range.releaseMany that runs out of memory part-way releases nothing', () => {
    setMemoryLimit(Infinity);
    const r = new Range('2001:db8:77::/64', { strategy: 'lowest-free' });
    const held = r.allocateMany(10_000); // one run: releasing every other address splits it again and again
    const before = rangeState(r);
    setMemoryLimit(0);
    exhaust();
    expectOOM(() => r.releaseMany(held.filter((_, i) => i % 2 === 0)));
    expect(rangeState(r)).toEqual(before);
    giveBackAll();
    setMemoryLimit(Infinity);
    expect(r.releaseMany(held.filter((_, i) => i % 2 === 0))).toBe(5_000);
    expect(r.used()).toBe(5_000);
    r.validate();
    r.destroy();
  });

  it('Range.releaseMany whose taking back runs out of memory too: the count follows the index, and the error says how many stay released', () => {
    // Regression: memory the first releases freed (whole runs removed) was
    // used by later splits, so re-marking them ran out; used() then kept the old count and the
    // released addresses were handed out twice.
    setMemoryLimit(Infinity);
    const r = new Range('2001:db8:7a::/64', { strategy: 'lowest-free' });
    const text = (o: number): string => `2001:db8:7a::${Math.floor(o / 65536).toString(16)}:${(o % 65536).toString(16)}`;
    const single = Array.from({ length: 2_000 }, (_, i) => text(2 * i + 1));
    const run = Array.from({ length: 2_000 }, (_, i) => text(1_000_000 + i));
    r.loadMany([...single, ...run]);
    setMemoryLimit(0);
    exhaust();
    takeTheRest(); // the releases' own memory only, whatever the tests before left free
    let thrown: unknown;
    try {
      r.releaseMany([...single, ...run.filter((_, i) => i % 2 === 1)]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    ooms++;
    const stillReleased = /and ([\d,]+) of the addresses it released could not be taken back/.exec((thrown as Error).message);
    // the taking back did run out (the name's case), and the error keeps what failed first as its cause
    expect(stillReleased).not.toBeNull();
    expect((thrown as Error).cause).toBeInstanceOf(OutOfMemoryError);
    const listed: string[] = [];
    r.forEach((ip) => listed.push(ip));
    expect(r.used()).toBe(listed.length);
    expect(listed.length).toBe(4_000 - (stillReleased === null ? 0 : Number(stillReleased[1]!.replaceAll(',', ''))));
    r.validate();
    giveBackAll();
    setMemoryLimit(Infinity);
    const more = r.allocateMany(5);
    expect(more.filter((ip) => listed.includes(ip))).toEqual([]); // nothing allocated is handed out again
    r.destroy();
  });

  it('Range.loadMany that runs out of memory part-way marks nothing', () => {
    setMemoryLimit(Infinity);
    const r = new Range('2001:db8:78::/64', { random: seededRandom(5) });
    r.allocateMany(1_000);
    const before = rangeState(r);
    const ips = Array.from({ length: 3_000 }, (_, i) => `2001:db8:78::${(d.u32() & 0xffff).toString(16)}:${i.toString(16)}:1`);
    const spacer = new Range('10.248.0.0/14', { indexKind: 'dense' }); // ≈ 64 KiB, given back below
    setMemoryLimit(0);
    exhaust();
    spacer.destroy(); // room for part of the batch, not all of it
    expectOOM(() => r.loadMany(ips));
    expect(rangeState(r)).toEqual(before);
    expect(ips.filter((ip) => r.has(ip))).toEqual([]);
    giveBackAll();
    setMemoryLimit(Infinity);
    expect(r.loadMany(ips)).toBe(3_000);
    r.validate();
    r.destroy();
  });

  it('a cool-down whose expiry runs out of memory keeps the rest held and the range goes on allocating', () => {
    setMemoryLimit(Infinity);
    let t = 0;
    const r = new Range('2001:db8:79::/64', { strategy: coolDown('lowest-free', { ms: 10, now: () => t }) });
    const held = r.allocateMany(10_000);
    const kept = new Set(held.filter((_, i) => i % 2 === 1));
    expect(r.releaseMany(held.filter((_, i) => i % 2 === 0))).toBe(5_000); // held: no memory needed
    setMemoryLimit(0);
    exhaust();
    t += 100; // every hold is over: the next allocateNext returns them to the pool, splitting the run
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(r.allocateNext());
    r.validate();
    const listed: string[] = [];
    r.forEach((ip) => listed.push(ip));
    expect(listed.filter((ip) => !kept.has(ip)).sort()).toEqual(got.sort()); // nothing allocated but what was handed out
    expect(r.used()).toBe(5_003);
    giveBackAll();
    setMemoryLimit(Infinity);
    for (let i = 0; i < 10; i++) r.allocateNext(); // the rest of the expired holds go back now
    r.validate();
    expect(r.used()).toBe(5_013);
    r.destroy();
  });

  it('a MetaAllocator tries again a ServiceCIDR it skipped for lack of memory', async () => {
    setMemoryLimit(Infinity);
    const cidrs = new InMemoryServiceCIDRs();
    const skipped: string[] = [];
    const meta = new MetaAllocator('IPv4', cidrs, {
      store: new FaultyMemoryStore(),
      onSkip: (s) => skipped.push(`${s.serviceCIDR} ${s.reason.name}`),
    });
    setMemoryLimit(0);
    exhaust();
    cidrs.addServiceCIDR('big', ['10.0.0.0/8']);
    expect(skipped).toEqual(['big OutOfMemoryError']);
    giveBackAll();
    setMemoryLimit(Infinity);
    cidrs.addServiceCIDR('other', ['192.168.0.0/24']); // any change of the ServiceCIDRs
    expect(meta.ranges().map((r) => r.cidr)).toEqual(['10.0.0.0/8', '192.168.0.0/24']);
    expect(meta.skipped()).toEqual([]);
    await meta.allocate('10.1.2.3');
    meta.destroy();
  });

  it('a MetaAllocator tries a range skipped for lack of memory again on its own calls once the headroom grew, and not before', async () => {
    setMemoryLimit(Infinity);
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('small', ['10.1.0.0/24']);
    const skipped: string[] = [];
    const meta = new MetaAllocator('IPv4', cidrs, {
      store: new FaultyMemoryStore(),
      onSkip: (s) => skipped.push(`${s.serviceCIDR} ${s.reason.name}`),
    });
    setMemoryLimit(0);
    const hog = exhaust();
    cidrs.addServiceCIDR('big', ['10.0.0.0/8']); // a dense index of 2 MiB: a /28's memory is far from enough
    expect(skipped).toEqual(['big OutOfMemoryError']);
    const builds = vi.spyOn(Allocator, 'create');
    try {
      // Every call that reads the ranges: nothing tried while the headroom has not grown; once
      // one /28 is freed, the next call tries the range again (it fails again, reported once).
      // has is not among them: it asks the store, which every range shares, and reads no range.
      const calls: [string, () => unknown][] = [
        ['allocate', () => meta.allocate('10.1.0.5').then(() => meta.release('10.1.0.5'))],
        ['allocateNext', () => meta.allocateNext()],
        ['release', () => meta.release('10.1.0.5')],
        ['rangeFor', () => expect(() => meta.rangeFor('10.9.0.1')).toThrow(OutOfMemoryError)], // its range is not built
        ['ranges', () => meta.ranges()],
        ['skipped', () => meta.skipped()],
        ['free', () => meta.free()],
        ['size', () => meta.size],
        ['dryRun', () => meta.dryRun()],
      ];
      for (const [name, call] of calls) {
        const before = builds.mock.calls.length;
        await call();
        expect(builds.mock.calls.length, `${name} with no more headroom`).toBe(before);
        hog.pop()!.destroy();
        await call();
        expect(builds.mock.calls.length, `${name} once the headroom grew`).toBe(before + 1);
        expect(builds.mock.calls.at(-1)![0]).toBe('10.0.0.0/8');
      }
      expect(skipped).toEqual(['big OutOfMemoryError']);
      expect(meta.skipped().map((s) => s.cidr)).toEqual(['10.0.0.0/8']);
      const built = builds.mock.calls.length;
      expect(await meta.has('10.9.0.1')).toBe(false); // from the store: no range built, none needed
      expect(builds.mock.calls.length).toBe(built);
      expect(await rejection(meta.allocate('10.9.0.1'))).toBeInstanceOf(OutOfMemoryError); // what to do, not "no range holds it"
      // the cap raised, no ServiceCIDR changed: the next call builds the range and routes to it
      setMemoryLimit(Infinity);
      expect(meta.rangeFor('10.9.0.1')).toBe('10.0.0.0/8');
      expect(meta.skipped()).toEqual([]);
      await meta.allocate('10.9.0.1');
      expect(await meta.has('10.9.0.1')).toBe(true);
    } finally {
      builds.mockRestore();
      giveBackAll();
      meta.destroy();
    }
  });

  it('a MetaAllocator destroyed by a range built in that retry ends the call with ErrDestroyed, nothing allocated', async () => {
    // one call of each kind that retries (the retry is one function, whichever call asks)
    const calls: [string, (m: MetaAllocator) => unknown][] = [
      ['allocate', (m) => m.allocate('10.9.0.1')],
      ['allocateNext', (m) => m.allocateNext()],
      ['size', (m) => m.size],
    ];
    // The fillers of every call kept until the end, topped up each time: filling all free memory
    // is slow only once.
    for (const [name, call] of calls) {
      setMemoryLimit(Infinity);
      const store = new FaultyMemoryStore();
      const cidrs = new InMemoryServiceCIDRs();
      cidrs.addServiceCIDR('small', ['10.1.0.0/24']);
      let armed = false;
      const meta: MetaAllocator = new MetaAllocator('IPv4', cidrs, {
        store,
        strategy: {
          name: 'destroys-when-armed',
          forRange: (view) => {
            if (armed) {
              armed = false;
              meta.destroy();
            }
            return STRATEGIES.sequential.forRange(view);
          },
        },
      });
      setMemoryLimit(0);
      exhaust();
      try {
        cidrs.addServiceCIDR('big', ['10.0.0.0/8']); // skipped: no memory
        setMemoryLimit(Infinity);
        armed = true;
        let outcome: unknown;
        try {
          outcome = await call(meta);
        } catch (e) {
          outcome = e;
        }
        expect(armed, `${name}: the retry built the range`).toBe(false);
        expect(outcome, name).toBeInstanceOf(ErrDestroyed);
        expect(store.size, name).toBe(0);
      } finally {
        meta.destroy();
      }
    }
  });

  // last: the 20,000-offset index it builds leaves free pages behind that the tests above must not find
  it('a warm start whose bulk load cannot get memory → OutOfMemoryError, nothing subscribed or held', () => {
    const big = new FaultyMemoryStore();
    const labels = allocatorLabels('IPv6');
    const hex = (): string => (d.u32() & 0xffff).toString(16);
    for (let i = 0; i < 20_000; i++) big.inject(`2001:db8:9:9:${hex()}:${hex()}:${hex()}:${hex()}`, labels);
    const n = big.size;
    setMemoryLimit(0);
    const hog = exhaust();
    hog.pop()!.destroy(); // room for the index header, not for 20,000 offsets
    expectOOM(() => new Allocator('2001:db8:9:9::/64', { store: big }));
    expect(big.watcherCount).toBe(0);
    giveBackAll();
    setMemoryLimit(Infinity);
    const a = new Allocator('2001:db8:9:9::/64', { store: big });
    expect(a.used()).toBe(n);
    expect(a.validate().indexed).toBe(n);
    expect(big.watcherCount).toBe(1);
    a.destroy();
    expect(big.watcherCount).toBe(0);
  });

  it('under the cap, the memory a destroyed sparse index gives back holds dense indexes of other ranges', () => {
    // Regression: freed blocks were reused for their own size only, so a /12
    // could not be had after a /64 that filled the cap was destroyed.
    setMemoryLimit(memoryLimit().size + 8 * 2 ** 20);
    const sparse = new Range('fd00:5::/64', { random: seededRandom(3) });
    for (;;) {
      try {
        sparse.allocateMany(10_000);
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        break;
      }
    }
    expect(sparse.used()).toBeGreaterThan(100_000);
    exhaust();
    const inUse = memoryLimit().inUse;
    sparse.destroy();
    const dense = ['10.16.0.0/12', '10.32.0.0/12', '10.64.0.0/11', '10.128.0.0/10'].map((cidr) => {
      const r = new Range(cidr, { indexKind: 'dense' });
      r.allocateNext();
      return r;
    });
    for (const r of dense) expect(r.used()).toBe(1);
    for (const r of dense) r.destroy();
    giveBackAll();
    expect(memoryLimit().inUse).toBeLessThan(inUse);
    setMemoryLimit(Infinity);
  });
});
