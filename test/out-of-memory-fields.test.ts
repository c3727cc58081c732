// OutOfMemoryError's fields describe the user's operation, measured once it has given back what
// it took: `requested` is what the whole operation needed (the blocks it had taken, plus the one
// it could not get), and `free + inUse` is the limit less the core's 192 KiB of bookkeeping
// (docs/memory.md; OutOfMemoryDetails). The operations go through the public API; raw core
// blocks only hold memory aside. Its own file: the identity is exact in a fresh process, whose
// memory stays far below the 120 MiB past which bookkeeping grows. Memory never shrinks, so each
// case loads a core of its own (a fresh module graph, a fresh WebAssembly instance, below): it
// runs the same alone, in any order, and after any other case.
import { beforeEach, describe, expect, it } from 'vitest';
import { formatCount } from '../adapters/quote.ts';
import { seededRandom } from '../adapters/random.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import { type FreshCore, freshCore } from './fresh-core.ts';

type OutOfMemoryError = import('../adapters/errors.ts').OutOfMemoryError;
type Range = import('../adapters/range.ts').Range;

let { Allocator, OutOfMemoryError, MemoryStore, Range, STRATEGIES, allocatorLabels, core, memoryLimit, setMemoryLimit, capAt } =
  {} as FreshCore; // each case's own, loaded before it
beforeEach(async () => {
  ({ Allocator, OutOfMemoryError, MemoryStore, Range, STRATEGIES, allocatorLabels, core, memoryLimit, setMemoryLimit, capAt } =
    await freshCore());
});

/**
 * A cap that leaves `free` bytes free beside what is in use: the memory a case grew before it
 * (a load, a snapshot's source) stays, held aside (capAt). Returns a function that gives it back
 * and lifts the cap.
 */
const leaving = (free: number) => capAt(memoryLimit().inUse + BOOKKEEPING + free);

/** What `f` threw (the test fails when it returns). */
function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('nothing thrown');
}

/** `count` distinct random addresses of the /64 `net` (its four groups, none 0), canonical, seeded. */
function randomAddresses(net: string, count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const group = () => ((random.nextU32() & 0xffff) | 0x1000).toString(16); // four digits: canonical as written
  const out = new Set<string>();
  while (out.size < count) out.add(`${net}:${group()}:${group()}:${group()}:${group()}`);
  return [...out];
}

const KiB = 1024;
/** The core's own bookkeeping below its blocks (static data, the free-block bitmap, the first slab leaves). */
const BOOKKEEPING = 192 * KiB;

/** Runs `f` until it throws; the OutOfMemoryError it throws (anything else fails the test). */
function untilOutOfMemory(f: () => unknown, most: number): OutOfMemoryError {
  for (let i = 0; i < most; i++) {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(OutOfMemoryError);
      return e as OutOfMemoryError;
    }
  }
  throw new Error(`no OutOfMemoryError in ${most} calls`);
}

describe('OutOfMemoryError fields', () => {
  it('a sparse index that cannot grow reports what the operation needed, and the memory as the operation left it', () => {
    setMemoryLimit(memoryLimit().size + 2 * 1024 * KiB);
    // random picks (seeded: the same run each time): isolated addresses, singles nodes that grow and split
    const range = new Range('fd00::/64', { random: seededRandom(5) });
    let allocated = 0;
    // each failure at the cap, then a little more room: a node split fails at its last new node,
    // after the first new node was taken (given back before the error)
    for (let round = 0; round < 6; round++) {
      const e = untilOutOfMemory(() => {
        range.allocateNext();
        allocated++;
      }, 1_000_000);
      const now = memoryLimit();
      expect(e.reason).toBe('limit');
      expect(e.limit).toBe(now.limit);
      // nothing the failed call took is still held, and nothing it took and gave back is missing
      expect(e.inUse).toBe(now.inUse);
      expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
      // what it needed did not fit beside what is in use: more than is free, not the failing piece
      // alone (that fitted in the room the blocks it had taken left)
      expect(e.requested!).toBeGreaterThan(e.free!);
      expect(e.message).toContain(`asked for ${formatCount(e.requested!)} bytes`);
      expect(e.message).toContain(`only ${formatCount(e.free!)} bytes`);
      expect(range.used()).toBe(allocated);
      range.validate();
      setMemoryLimit(e.limit! + 256 * KiB);
    }
    range.destroy();
  });

  it('a batch load that cannot get its memory counts the buffer it was given in, as needed and as free', () => {
    const range = new Range('fd01::/64');
    const emptyIndex = range.indexBytes();
    setMemoryLimit(memoryLimit().size + 4 * 1024 * KiB);
    // held aside until about 1.5 MiB is free, 1 MiB of it in one piece: room for the batch's
    // buffer, not for the load
    const room = core.buf_alloc(1024 * KiB);
    expect(room).not.toBe(0);
    const filler: number[] = [];
    for (let p = 1; p !== 0 && core.heap_bytes_free() > 512 * KiB; ) {
      p = core.buf_alloc(64 * KiB);
      if (p !== 0) filler.push(p);
    }
    core.buf_free(room, 1024 * KiB);
    const count = 131_072; // 8 bytes each in the buffer (an offset)
    const group = (v: number): string => (v & 0xffff).toString(16);
    const ips = Array.from({ length: count }, (_, i) => `fd01::${group(i * 7919)}:${group((i * 7919) >>> 16)}:1`);
    let thrown: unknown;
    try {
      range.loadMany(ips);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    const e = thrown as OutOfMemoryError;
    // the batch's buffer (1 MiB) is not counted as in use: what is in use now differs from it
    // only by what the emptied index kept after the slices' undo (its last small node and its
    // directory, core-as/DESIGN.md), so that taking an address again needs no memory
    const kept = range.indexBytes() - emptyIndex;
    expect(e.inUse!).toBeLessThanOrEqual(memoryLimit().inUse);
    expect(memoryLimit().inUse - e.inUse!).toBeLessThanOrEqual(kept);
    expect(kept).toBeLessThan(4 * KiB);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    expect(e.requested!).toBeGreaterThan(count * 8); // the buffer, and what the load needed besides
    expect(range.used()).toBe(0);
    for (const p of filler) core.buf_free(p, 64 * KiB);
    range.destroy();
  });

  it('a small dense index reports its own block whichever step failed, not the 4 KiB the heap cuts it from', () => {
    const before = memoryLimit().inUse;
    const probe = new Range('10.1.0.0/24', { indexKind: 'dense' });
    const whole = memoryLimit().inUse - before; // the index and the range's own block
    probe.destroy();
    expect(whole).toBeLessThan(4 * KiB);
    const requested = new Set<number>();
    const keep: Range[] = [];
    // ranges up to the cap, again and again a little higher: each failure at a different step
    // (the index's block, the range's own, a slab to cut either from)
    setMemoryLimit(memoryLimit().size + 64 * KiB);
    for (let round = 0; round < 40; round++) {
      const e = untilOutOfMemory(
        () => keep.push(new Range(`10.${2 + (keep.length >> 8)}.${keep.length & 255}.0/24`, { indexKind: 'dense' })),
        100_000,
      );
      expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
      requested.add(e.requested!);
      setMemoryLimit(e.limit! + 64 * KiB);
    }
    // the index alone, or the index and the range's block after it: never a 4 KiB slab
    for (const r of requested) expect(r).toBeLessThanOrEqual(whole);
    expect(requested.has(whole)).toBe(true);
    for (const r of keep) r.destroy();
  });

  // Found by an outside tester: each of these reported the memory as it was when the core failed,
  // with the blocks its operation held then counted in use (704.9 KiB, where memoryLimit().inUse
  // said 192 bytes right after), and `requested` only the last block.
  it('an allocateMany that runs out part-way reports the memory as its undo left it, and what it took as needed', () => {
    const range = new Range('fd02::/64', { random: seededRandom(8) });
    const lift = leaving(1024 * KiB);
    const e = thrownBy(() => range.allocateMany(200_000)) as OutOfMemoryError; // about 2 MiB of isolated addresses
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(range.used()).toBe(0);
    const now = memoryLimit();
    expect(e.inUse).toBe(now.inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    // the blocks it had taken (given back since) and the one it could not get: more than is free
    expect(e.reason).toBe('limit');
    expect(e.requested!).toBeGreaterThan(e.free!);
    expect(e.message).toContain(`needs about ${formatCount(e.requested!)} bytes`);
    expect(e.message).toContain('an estimate');
    range.destroy();
    lift();
  });

  it('a Range.fromSnapshot that runs out reports the memory once the new Range is dropped, and all of it as needed', () => {
    const source = new Range('fd03:1:1:1::/64');
    source.loadMany(randomAddresses('fd03:1:1:1', 60_000, 3));
    const snapshot = source.snapshot();
    source.destroy();
    const lift = leaving(256 * KiB); // room for a part of the index
    const inUse = memoryLimit().inUse;
    const e = thrownBy(() => Range.fromSnapshot(snapshot)) as OutOfMemoryError;
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(memoryLimit().inUse).toBe(inUse);
    expect(e.inUse).toBe(inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    // the blocks the new Range had taken count, not only the one it could not get
    expect(e.requested!).toBeGreaterThan(core.heap_failed_block());
    lift();
  });

  it('a loadMany that runs out in slices reports the memory as its undo left it, and what the slices took as needed', () => {
    const range = new Range('fd05:1:1:1::/64');
    range.loadMany(randomAddresses('fd05:1:1:1', 5_000, 5));
    const before = range.snapshot();
    const more = randomAddresses('fd05:1:1:1', 60_000, 6); // 60,000 offsets: a batch of 512 KiB
    const lift = leaving(384 * KiB); // room for the slices' first pages, not for the batch
    const e = thrownBy(() => range.loadMany(more)) as OutOfMemoryError;
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(range.snapshot().data).toEqual(before.data); // all or nothing
    expect(range.validate().indexed).toBe(5_000);
    // measured after the slices before the failing one were cleared again
    expect(e.inUse).toBe(memoryLimit().inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    // the pages the slices had taken count, not only the block that failed
    expect(e.requested!).toBeGreaterThan(core.heap_failed_block());
    // an estimate of the whole load (the one batch's buffer, which the slices never needed, not in it)
    expect(e.message).toContain(`needs about ${formatCount(e.requested!)} bytes`);
    expect(e.message).toContain('an estimate');
    range.destroy();
    lift();
  });

  it('a releaseMany that runs out part-way reports the memory as its undo left it', () => {
    // one run of consecutive addresses: a few bytes, until every other one is released
    const range = new Range('fd06::/64', { strategy: 'lowest-free' });
    const ips = range.allocateMany(100_000);
    const lift = leaving(256 * KiB);
    const e = thrownBy(() => range.releaseMany(ips.filter((_, i) => i % 2 === 1))) as OutOfMemoryError;
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(e.cause).toBeUndefined(); // taken back in full
    expect(range.used()).toBe(100_000);
    expect(range.validate().indexed).toBe(100_000);
    // measured after the released addresses were marked again (one run again: the split-off
    // pieces given back)
    expect(e.inUse).toBe(memoryLimit().inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    // what the clears before the failing one had split off counts as needed
    expect(e.requested!).toBeGreaterThan(core.heap_failed_block());
    range.destroy();
    lift();
  });

  it("an Allocator's warm start and the rebuild of its index that run out report the memory once the index is dropped", async () => {
    const store = new MemoryStore();
    const labels = allocatorLabels('IPv6');
    const names = randomAddresses('fd04:1:1:1', 60_000, 4);
    for (const name of names.slice(0, 30_000)) store.createSync({ name, labels, parentRef: null });
    let lift = leaving(256 * KiB);
    let inUse = memoryLimit().inUse;
    // the warm start: the listing loaded into a new index, which is dropped
    const warm = thrownBy(() => new Allocator('fd04:1:1:1::/64', { store })) as OutOfMemoryError;
    expect(warm).toBeInstanceOf(OutOfMemoryError);
    expect(memoryLimit().inUse).toBe(inUse);
    expect(warm.inUse).toBe(inUse);
    expect(warm.free! + warm.inUse!).toBe(warm.limit! - BOOKKEEPING);
    expect(warm.requested!).toBeGreaterThan(core.heap_failed_block());
    lift();
    // the rebuild: an allocator over the store, whose index missed records added under the cap
    const allocator = new Allocator('fd04:1:1:1::/64', { store });
    lift = leaving(128 * KiB);
    for (const name of names.slice(30_000)) store.createSync({ name, labels, parentRef: null });
    inUse = memoryLimit().inUse;
    const rebuilt = await allocator.allocateNext().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(rebuilt).toBeInstanceOf(OutOfMemoryError);
    const e = rebuilt as OutOfMemoryError;
    expect(memoryLimit().inUse).toBe(inUse);
    expect(e.inUse).toBe(inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    expect(e.requested!).toBeGreaterThan(core.heap_failed_block());
    // refused at once while nothing that could let it succeed happens: the memory as it is now
    // (a Range made since holds some), not as the failed rebuild left it
    const other = new Range('10.9.0.0/24');
    expect(memoryLimit().inUse).toBeGreaterThan(inUse);
    const refused = (await allocator.allocateNext().then(
      () => undefined,
      (e: unknown) => e,
    )) as OutOfMemoryError;
    expect(refused).toBeInstanceOf(OutOfMemoryError);
    expect(refused.message).toContain('could not be rebuilt');
    // its message says what its fields say, with what to do, as the first one's does
    for (const bytes of [refused.requested, refused.limit, refused.free, refused.inUse]) {
      expect(refused.message).toContain(`${formatCount(bytes!)} bytes`);
    }
    expect(refused.message).toContain('raise the cap with setMemoryLimit(bytes)');
    // an estimate, as the failed rebuild's message said
    expect(e.message).toContain(`needs about ${formatCount(refused.requested!)} bytes`);
    expect(refused.message).toContain(`it needs about ${formatCount(refused.requested!)} bytes`);
    expect(refused.inUse).toBe(memoryLimit().inUse);
    expect(refused.free! + refused.inUse!).toBe(refused.limit! - BOOKKEEPING);
    expect(refused.requested).toBe(e.requested);
    expect(refused.reason).toBe(refused.free! < refused.requested! ? 'limit' : e.reason);
    other.destroy();
    allocator.destroy();
    lift();
  });

  it("an Allocator whose strategy's forRange runs out at construction reports the memory once its index is dropped", () => {
    const lift = leaving(256 * KiB);
    const inUse = memoryLimit().inUse;
    // a strategy of your own that makes a large index of its own (512 KiB) for each range
    const strategy: AllocationStrategy = {
      name: 'with a large index of its own',
      forRange(view) {
        new Range('10.64.0.0/10', { indexKind: 'dense' });
        return STRATEGIES['lowest-free'].forRange(view);
      },
    };
    // the allocator's own index (a dense /16, in a block of its own) is made, then dropped
    const e = thrownBy(() => new Allocator('10.9.0.0/16', { strategy })) as OutOfMemoryError;
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(memoryLimit().inUse).toBe(inUse);
    expect(e.inUse).toBe(inUse);
    expect(e.free! + e.inUse!).toBe(e.limit! - BOOKKEEPING);
    lift();
  });

  /** The cap raised by `e.requested - e.free`, rounded up to a whole page: what code acting on the fields does. */
  const raisedBy = (e: OutOfMemoryError) => e.limit! + Math.ceil((e.requested! - e.free!) / (64 * KiB)) * 64 * KiB;

  it("the rebuild of an Allocator's index that runs out requests the whole index: a cap raised by requested - free is enough", async () => {
    const store = new MemoryStore();
    const labels = allocatorLabels('IPv6');
    const names = randomAddresses('fd04:1:1:2', 80_000, 6);
    for (const name of names.slice(0, 20_000)) store.createSync({ name, labels, parentRef: null });
    const allocator = new Allocator('fd04:1:1:2::/64', { store });
    const lift = leaving(128 * KiB);
    for (const name of names.slice(20_000)) store.createSync({ name, labels, parentRef: null });
    const failed = (await allocator.allocateNext().then(
      () => undefined,
      (e: unknown) => e,
    )) as OutOfMemoryError;
    expect(failed).toBeInstanceOf(OutOfMemoryError);
    expect(failed.message).toContain('an estimate');
    setMemoryLimit(raisedBy(failed));
    await expect(allocator.allocateNext()).resolves.toMatch(/^fd04:1:1:2:/);
    expect(allocator.validate().indexed).toBe(80_001);
    allocator.destroy();
    lift();
  });

  it('a Range built from a snapshot that runs out requests the whole index: a cap raised by requested - free is enough', () => {
    const source = new Range('fd05:1:1:2::/64');
    source.loadMany(randomAddresses('fd05:1:1:2', 80_000, 7));
    const snapshot = source.snapshot();
    source.destroy();
    const lift = leaving(128 * KiB);
    const failed = thrownBy(() => Range.fromSnapshot(snapshot)) as OutOfMemoryError;
    expect(failed).toBeInstanceOf(OutOfMemoryError);
    setMemoryLimit(raisedBy(failed));
    const range = Range.fromSnapshot(snapshot);
    expect(range.used()).toBe(80_000);
    range.destroy();
    lift();
  });

  // Regression: late in a load many of the index's nodes grow at once, and an address costs far
  // more than the average so far: 10^6 random addresses refused part-way asked for about 13 MB
  // where 17 MB were needed, and the cap raised by requested - free was refused again.
  it('a snapshot of 10^6 random addresses refused part-way: a cap raised by requested - free is enough, wherever the load stopped', () => {
    const source = new Range('fd05:1:1:4::/64');
    source.loadMany(randomAddresses('fd05:1:1:4', 1_000_000, 9));
    const snapshot = source.snapshot();
    source.destroy();
    for (const part of [0.6, 0.72]) {
      const lift = leaving(part * 17e6); // stops the load at about that part of the 17 MB its slices build
      const failed = thrownBy(() => Range.fromSnapshot(snapshot)) as OutOfMemoryError;
      expect(failed).toBeInstanceOf(OutOfMemoryError);
      setMemoryLimit(raisedBy(failed));
      const range = Range.fromSnapshot(snapshot);
      expect(range.used()).toBe(1_000_000);
      range.destroy();
      lift();
    }
  });

  it('a loadMany that runs out keeps its addresses as they were and gives back what the index grew into: a cap raised by requested - free is enough', () => {
    const range = new Range('fd05:1:1:3::/64');
    const names = randomAddresses('fd05:1:1:3', 100_000, 8);
    range.loadMany(names.slice(0, 20_000));
    const lift = leaving(512 * KiB);
    const inUse = memoryLimit().inUse;
    const failed = thrownBy(() => range.loadMany(names.slice(20_000))) as OutOfMemoryError;
    expect(failed).toBeInstanceOf(OutOfMemoryError);
    expect(range.used()).toBe(20_000);
    // the nodes its slices split are merged again: the memory is about as it was before the load
    expect(memoryLimit().inUse - inUse).toBeLessThan(64 * KiB);
    expect(failed.inUse).toBe(memoryLimit().inUse);
    setMemoryLimit(raisedBy(failed));
    expect(range.loadMany(names.slice(20_000))).toBe(80_000);
    range.destroy();
    lift();
  });
});
