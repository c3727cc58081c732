// The calls a program makes over and over make no typed array of their own: under Deno a new
// Uint32Array costs several hundred nanoseconds (under Node a tenth of that), more than some of
// these calls take in all. Counted by putting a counting Proxy in place of each typed-array
// constructor while the calls run: the library's modules read those globals when they run.
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalAddr, parseAddrInto } from '../adapters/core.ts';
import {
  Allocator,
  ErrNotReady,
  InMemoryServiceCIDRs,
  MemoryStore,
  MetaAllocator,
  Range,
  seededRandom,
  type Store,
} from '../adapters/index.ts';

const KINDS = ['Uint8Array', 'Int32Array', 'Uint32Array', 'Float64Array'] as const;
const originals = KINDS.map((k) => globalThis[k]);
afterEach(() => {
  KINDS.forEach((k, i) => Object.assign(globalThis, { [k]: originals[i] }));
});

/** The typed arrays (of KINDS) made while `run` runs, by kind. */
async function typedArraysMadeBy(run: () => unknown): Promise<Record<string, number>> {
  const made: Record<string, number> = {};
  KINDS.forEach((k, i) => {
    const counted: object = new Proxy(originals[i]!, {
      construct(target, args, newTarget): object {
        made[k] = (made[k] ?? 0) + 1;
        return Reflect.construct(target, args, newTarget === counted ? target : newTarget);
      },
    });
    Object.assign(globalThis, { [k]: counted });
  });
  try {
    await run();
  } finally {
    KINDS.forEach((k, i) => Object.assign(globalThis, { [k]: originals[i] }));
  }
  return made;
}

const CALLS = 64;
const ADDRESSES4 = Array.from({ length: CALLS }, (_, i) => `10.96.${i}.${i + 2}`);
const ADDRESSES6 = Array.from({ length: CALLS }, (_, i) => `2001:db8::${(i * 977 + 1).toString(16)}:${i + 5}`);

/** A MemoryStore seen as a store without synchronous operations: every call answers a promise. */
function asyncStore(): Store {
  const m = new MemoryStore();
  return {
    sync: null,
    create: (r) => m.create(r),
    delete: (name) => m.delete(name),
    get: (name) => m.get(name),
    cache: m.cache,
    close: () => m.close(),
  };
}

describe('the calls made over and over make no typed array per call', () => {
  it('the counting works: a new Uint32Array, and one made by Uint32Array.from, are counted', async () => {
    const made = await typedArraysMadeBy(() => Uint32Array.from(new Uint32Array(4)));
    expect(made).toEqual({ Uint32Array: 2 });
  });
});

describe('ipallocator/core', () => {
  it('parseAddrInto, into one array for every address, and canonicalAddr', async () => {
    const words = new Uint32Array(4);
    parseAddrInto('10.96.0.1', words);
    let v4 = 0;
    const made = await typedArraysMadeBy(() => {
      for (const ip of [...ADDRESSES4, ...ADDRESSES6, 'FD00::1', '::ffff:10.0.0.1']) {
        if (parseAddrInto(ip, words) === 4) v4++;
        canonicalAddr(ip);
      }
    });
    expect(made).toEqual({});
    expect([v4, [...words]]).toEqual([CALLS + 1, [0, 0, 0, 0x0a000001]]);
  });
});

describe('Range', () => {
  it("a dry run's release, of IPv4 and IPv6 text", async () => {
    const range = new Range('10.96.0.0/16');
    const dry = range.dryRun();
    dry.release('10.96.0.1');
    const made = await typedArraysMadeBy(() => {
      for (const ip of [...ADDRESSES4, ...ADDRESSES6]) dry.release(ip);
    });
    expect(made).toEqual({});
    expect(() => dry.release('10.96.0.01')).toThrow('ParseAddr("10.96.0.01"): IPv4 field has octet with leading zero');
    range.destroy();
  });
});

describe('Allocator', () => {
  it.each([
    ['10.96.0.0/16', ADDRESSES4],
    ['2001:db8::/64', ADDRESSES6],
  ])('on a store that answers with promises, allocate and release (%s)', async (cidr, addresses) => {
    const alloc = new Allocator(cidr, { store: asyncStore() });
    await alloc.allocate(addresses[0]!);
    await alloc.release(addresses[0]!);
    const made = await typedArraysMadeBy(async () => {
      for (const ip of addresses) {
        await alloc.allocate(ip);
        await alloc.release(ip);
      }
    });
    expect(made.Uint32Array).toBeUndefined();
    expect(made.Int32Array ?? 0).toBeLessThan(CALLS / 4); // the store's tables of names, compacted now and then
    // each release was taken back by the index: every address is free to allocate again
    expect(alloc.used()).toBe(0);
    for (const ip of addresses) await alloc.allocate(ip);
    expect(alloc.validate()).toEqual({ indexed: addresses.length });
    alloc.destroy();
  });
});

describe('MetaAllocator', () => {
  it("allocate and release with the 'upstream' policy, the address held by several ranges (a range drawn)", async () => {
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('a', ['10.96.0.0/16']);
    source.addServiceCIDR('b', ['10.96.0.0/12']);
    source.addServiceCIDR('c', ['10.112.0.0/16']);
    const meta = new MetaAllocator('IPv4', source, { store: new MemoryStore(), random: seededRandom(1) });
    expect(meta.policy).toBe('upstream');
    await meta.allocate(ADDRESSES4[0]!);
    await meta.release(ADDRESSES4[0]!);
    const made = await typedArraysMadeBy(async () => {
      for (const ip of ADDRESSES4) {
        await meta.allocate(ip);
        await meta.release(ip);
      }
    });
    expect(made.Uint32Array).toBeUndefined();
    expect(made.Int32Array ?? 0).toBeLessThan(CALLS / 4); // the store's tables of names, compacted now and then
    for (const ip of ADDRESSES4) await meta.allocate(ip);
    expect([meta.used(), await meta.has(ADDRESSES4[5]!)]).toEqual([CALLS, true]);
    meta.destroy();
  });
});

describe('MetaAllocator with no range ready', () => {
  it("its dry run's release, and allocate (which answers ErrNotReady)", async () => {
    const meta = new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store: new MemoryStore() });
    const dry = meta.dryRun();
    await dry.release('10.96.0.1');
    const made = await typedArraysMadeBy(async () => {
      for (const ip of [...ADDRESSES4, ...ADDRESSES6]) await dry.release(ip);
    });
    expect(made).toEqual({});
    const refusals = await typedArraysMadeBy(async () => {
      for (const ip of ADDRESSES4) await expect(dry.allocate(ip)).rejects.toThrow(ErrNotReady);
    });
    expect(refusals).toEqual({});
    await expect(dry.release('10.96.0.01')).rejects.toThrow('ParseAddr("10.96.0.01"): IPv4 field has octet with leading zero');
    meta.destroy();
  });
});
