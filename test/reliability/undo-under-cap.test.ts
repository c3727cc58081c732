// Undoing under a WASM memory cap: a give-back that itself needs memory. Clearing an address in
// the middle of a sparse index's run splits the run (or turns its ends into isolated offsets),
// which can need a new block when the memory the call's earlier steps freed was taken since.
// Reached through the public API: a DualStackAllocator whose rollback clears such an address,
// and a Range.allocateMany whose strategy fails part-way (a strategy of your own may throw) after
// the memory ran out. Each must lose nothing and hand nothing out twice, and say what it kept.
//
// WebAssembly memory cannot shrink and the instance is shared by the whole file (vitest runs each
// file in its own fork): the cap is lifted in afterAll whatever happens.
import { afterAll, describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { DualStackAllocator } from '../../adapters/dual-stack.ts';
import { ErrFull, OutOfMemoryError } from '../../adapters/errors.ts';
import { Range } from '../../adapters/range.ts';
import type { AllocationStrategy } from '../../adapters/strategy.ts';
import { STRATEGIES } from '../../adapters/builtin-strategies.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import { core, memoryLimit, setMemoryLimit } from '../../adapters/wasm.ts';
import { FaultyMemoryStore } from '../doubles/memory-store-faults.ts';
import { rejection } from '../helpers.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/**
 * Caps the memory where it is and takes every block left, of every size, largest first (so no
 * size class keeps a free block that a clear's small allocation could use); returns a function
 * that gives them back and lifts the cap. Raw core blocks only hold memory aside here.
 */
function exhaust(): () => void {
  setMemoryLimit(0);
  const held: [number, number][] = [];
  for (let size = 1 << 20; size >= 16; size >>= 1) {
    for (let p = core.buf_alloc(size); p !== 0; p = core.buf_alloc(size)) held.push([p, size]);
  }
  return () => {
    for (const [p, size] of held) core.buf_free(p, size);
    setMemoryLimit(Infinity);
  };
}

describe('a give-back that needs WASM memory', () => {
  it('a DualStackAllocator rollback whose index clear runs out of memory still gives the address back; the allocator finds it free once it has memory', async () => {
    setMemoryLimit(Infinity);
    const store = new FaultyMemoryStore();
    const a4 = new Allocator('10.0.0.0/16', { store, index: 'sparse', strategy: 'lowest-free' });
    // 1,536 addresses in a row, every sixth given back: 256 runs of five, one full page of runs
    const taken: string[] = [];
    for (let i = 0; i < 1536; i++) taken.push(await a4.allocateNext());
    for (let i = 5; i < taken.length; i += 6) await a4.release(taken[i]!);
    let giveBack = (): void => {};
    const real6 = new Allocator('fd00::/120', { store });
    // Meanwhile another caller releases the middle of a run (the page is full again), the memory
    // runs out, and the IPv6 family fails: an IPv6 allocator of your own does all three.
    const own6: IPAllocator = Object.assign(Object.create(real6) as IPAllocator, {
      allocateNext: async () => {
        await a4.release(taken[14]!);
        giveBack = exhaust();
        throw new ErrFull();
      },
    });
    const reported: unknown[] = [];
    const ds = new DualStackAllocator(a4, own6, { onRollbackError: (e) => reported.push(e) });
    // the IPv4 address taken first (taken[5]) joins two runs into one; giving it back splits
    // them again, which needs a new page of runs
    const e = await rejection(ds.allocateNext());
    expect(e).toBeInstanceOf(ErrFull);
    expect(reported).toEqual([]);
    const kept = taken.filter((_, i) => i % 6 !== 5 && i !== 14);
    const records = store
      .records()
      .map((r) => r.name)
      .sort();
    expect(records).toEqual([...kept].sort());
    expect(await a4.has(taken[5]!)).toBe(false);
    // under the cap the allocator cannot hand anything out (its index must be rebuilt first) ...
    expect(await rejection(a4.allocateNext())).toBeInstanceOf(OutOfMemoryError);
    giveBack();
    // ... and once it has memory, the address given back is free: lowest-free hands it out again
    expect(await a4.allocateNext()).toBe(taken[5]);
    a4.validate();
    ds.destroy();
  });

  it('a Range.allocateMany whose undo runs out of memory keeps what it could not give back, counted, and says why it failed', () => {
    setMemoryLimit(Infinity);
    let failAfter = Number.POSITIVE_INFINITY;
    let picks = 0;
    let giveBack = (): void => {};
    const why = new Error('the chooser failed');
    // lowest-free, failing on demand after the memory ran out: a strategy of your own may throw
    const failing: AllocationStrategy = {
      name: 'lowest-free, failing on demand',
      forRange(view) {
        const inner = STRATEGIES['lowest-free'].forRange(view);
        return {
          choose(out) {
            if (++picks > failAfter) {
              giveBack = exhaust();
              throw why;
            }
            return inner.choose(out);
          },
        };
      },
    };
    const r = new Range('2001:db8:7b::/64', { strategy: failing });
    const held = r.allocateMany(4000); // one run
    expect(r.releaseMany(held.filter((_, i) => i % 2 === 0))).toBe(2000); // isolated offsets, a free one between two
    const kept = new Set(held.filter((_, i) => i % 2 === 1));
    // the next 1,990 picks fill the gaps (one run again: the isolated offsets' node shrinks), the
    // one after fails with the memory gone: giving the picks back isolates the offsets again
    picks = 0;
    failAfter = 1990;
    let thrown: unknown;
    try {
      r.allocateMany(1995);
    } catch (e) {
      thrown = e;
    }
    failAfter = Number.POSITIVE_INFINITY;
    const listed: string[] = [];
    r.forEach((ip) => listed.push(ip));
    r.validate();
    expect(r.used()).toBe(listed.length);
    const extra = listed.filter((ip) => !kept.has(ip));
    // the undo isolated the offsets again until the memory the merges freed was gone: what is
    // left stays allocated, counted, listed, and the error says how many and what failed first
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    const message = (thrown as Error).message;
    expect(message).toMatch(
      /^out of memory: allocateMany failed part-way \(the chooser failed\), and [\d,]+ of the addresses it took could not be given back: they stay allocated/,
    );
    expect((thrown as Error).cause).toBe(why);
    const stay = Number(/and ([\d,]+) of the addresses/.exec(message)![1]!.replaceAll(',', ''));
    expect(stay).toBeGreaterThan(0);
    expect(extra.length).toBe(stay);
    giveBack();
    const more = r.allocateMany(3000); // nothing allocated is handed out again
    expect(more.filter((ip) => listed.includes(ip))).toEqual([]);
    r.validate();
    r.destroy();
  });
});
