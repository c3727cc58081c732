// A dense index holds a bit for every address from its creation, so marking addresses in it needs
// no memory beyond it: under a cap that leaves no room for a load's batch, the addresses go in a
// few at a time. Then creating the index is all a load can run out on, and the README's rule (a cap
// raised by `requested - free`, rounded up to 64 KiB, lets the same call through) holds for an
// Allocator's warm start after one raise: it had asked for the index only, then failed again on
// the batch's block. Its own file: it is about a fresh process's memory. Memory never shrinks, so
// each case loads a core of its own (a fresh module graph, a fresh WebAssembly instance) and sets
// its own cap: it runs the same alone, in any order, and after any other case.
import { expect, it } from 'vitest';
import { freshCore } from './fresh-core.ts';
import { failureOfMaking } from './helpers.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A core of its own (freshCore), and raisedFor and fillMemory on it. */
async function freshCoreWithFill() {
  const fresh = await freshCore();
  const { memoryLimit, OutOfMemoryError, Range } = fresh;
  type OutOfMemory = InstanceType<typeof OutOfMemoryError>;

  /** The cap the README's rule sets after `e`. */
  function raisedFor(e: OutOfMemory): number {
    return memoryLimit().limit + Math.ceil((e.requested! - e.free!) / 65536) * 65536;
  }

  /**
   * Small ranges made until one more does not fit under the cap: the memory is full. Only under a
   * cap close to what is in use: without one, they would fill WebAssembly's 4 GiB.
   */
  function fillMemory(): InstanceType<typeof Range>[] {
    const { limit, inUse } = memoryLimit();
    expect(
      limit - inUse,
      `fillMemory needs a cap at most 4 MiB above the memory in use (cap ${limit}, in use ${inUse})`,
    ).toBeLessThanOrEqual(4 * MiB);
    const fillers: InstanceType<typeof Range>[] = [];
    for (;;) {
      try {
        fillers.push(new Range('192.168.0.0/24'));
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        return fillers;
      }
    }
  }

  return { ...fresh, raisedFor, fillMemory };
}

it('an Allocator of a /8 warm-starting from 60,000 records goes through after one raise of the cap', async () => {
  const { setMemoryLimit, Allocator, OutOfMemoryError, MemoryStore, raisedFor } = await freshCoreWithFill();
  // An Allocator's index is an AddressSpace: its load goes a few at a time through
  // AddressSpace.setMany, never through FreeIndex.setMany (a Range's loadMany: the next case)
  setMemoryLimit(256 * KiB);
  const store = new MemoryStore();
  const seed = new Allocator('10.0.0.0/16', { store });
  for (let i = 0; i < 60_000; i++) await seed.allocateNext();
  seed.destroy();

  const make = () => new Allocator('10.0.0.0/8', { store });
  const e = failureOfMaking(make) as InstanceType<typeof OutOfMemoryError>;
  expect(e).toBeInstanceOf(OutOfMemoryError);
  expect(e.reason).toBe('limit');
  setMemoryLimit(raisedFor(e));
  const a = make();
  expect(a.used()).toBe(60_000);
  expect(a.validate().indexed).toBe(60_000);
  a.destroy();
});

it("a dense Range's loadMany needs no room beyond its index: it goes through with the memory full", async () => {
  const { setMemoryLimit, OutOfMemoryError, Range, raisedFor, fillMemory } = await freshCoreWithFill();
  setMemoryLimit(256 * KiB); // far below the /8's index of 2 MiB: the cap ends where the index does
  const probe = failureOfMaking(() => new Range('10.0.0.0/8')) as InstanceType<typeof OutOfMemoryError>;
  expect(probe).toBeInstanceOf(OutOfMemoryError);
  setMemoryLimit(raisedFor(probe));
  const r = new Range('10.0.0.0/8');
  const fillers = fillMemory(); // no room is left for a slice of the load's offsets
  const ips = Array.from({ length: 200_000 }, (_, i) => `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`).slice(1);
  expect(r.loadMany(ips)).toBe(ips.length);
  expect(r.used()).toBe(ips.length);
  expect(r.has('10.3.13.63')).toBe(true);
  expect(r.has('10.3.13.64')).toBe(false);
  expect(() => r.validate()).not.toThrow();
  for (const f of fillers) f.destroy();
  r.destroy();
});

it('with no room for the batch, an address outside the range marks none of the others, as the one batch marks none', async () => {
  const { memoryLimit, setMemoryLimit, InvalidArgumentError, Prefix, AddressSpace, fillMemory } = await freshCoreWithFill();
  const space = new AddressSpace(Prefix.parse('10.0.0.0/24'), 'dense');
  const words = new Uint32Array(40 * 4);
  for (let i = 0; i < 40; i++) words[i * 4 + 3] = 0x0a000001 + i;
  words[39 * 4 + 3] = 0x0b000000; // the last one outside: the slices before it, through the scratch window
  const refused = (): unknown => {
    try {
      return space.setMany(words, 40);
    } catch (e) {
      return e;
    }
  };
  const inOneBatch = refused();
  expect(inOneBatch).toBeInstanceOf(InvalidArgumentError);
  expect((inOneBatch as Error).message).toBe('address at position 39 is outside 10.0.0.0/24');
  expect(space.count()).toBe(0);
  setMemoryLimit(memoryLimit().size); // capped where it stands: a few small ranges fill it
  const fillers = fillMemory();
  const inSlices = refused();
  for (const f of fillers) f.destroy();
  expect(inSlices).toBeInstanceOf(InvalidArgumentError);
  expect((inSlices as Error).message).toBe('address at position 39 is outside 10.0.0.0/24');
  expect(space.count()).toBe(0);
  space.destroy();
});
