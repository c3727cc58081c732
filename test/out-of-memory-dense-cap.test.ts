// The README's rule for an OutOfMemoryError (Memory): a cap raised by `requested - free`,
// rounded up to 64 KiB, lets the same call through — here for the dense index of a large IPv4
// range, the README's own example (a /8 under a 1 MiB cap). Its own file: the rule is about a
// fresh process's memory, where the index's blocks land in the order the core asks for them.
// Memory never shrinks, so each case loads a core of its own (a fresh module graph, a fresh
// WebAssembly instance): it runs the same alone, in any order, and after any other case.
import { describe, expect, it } from 'vitest';
import { freshCore } from './fresh-core.ts';
import { failureOfMaking } from './helpers.ts';

describe('a cap raised by what an OutOfMemoryError asked for lets the same call through', () => {
  it.each([
    ['Allocator', '10.0.0.0/9'],
    ['Range', '10.0.0.0/8'],
  ])('%s of %s, from a 1 MiB cap', async (kind, cidr) => {
    const { memoryLimit, setMemoryLimit, Allocator, OutOfMemoryError, MemoryStore, Range } = await freshCore();
    const make = () => (kind === 'Range' ? new Range(cidr) : Allocator.create(cidr, { store: new MemoryStore() }));
    setMemoryLimit(2 ** 20);
    const e = failureOfMaking(make) as InstanceType<typeof OutOfMemoryError>;
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(e.reason).toBe('limit');
    // the rule as the README gives it. It failed as 'fragmented' with nothing in use: the index
    // took its summaries' block before its bitmap (2 MiB for a /8, which must lie at a multiple
    // of its size), the space's own block was not counted, and a block carved past the free
    // memory a smaller index had left needed twice its size
    setMemoryLimit(memoryLimit().limit + Math.ceil((e.requested! - e.free!) / 65536) * 65536);
    expect(failureOfMaking(make)).toBeUndefined();
  });
});
