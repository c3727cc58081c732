// The README's rule for an OutOfMemoryError (a cap raised by `requested - free`, rounded up to
// 64 KiB, lets the same call through) and its limit: with another index alive below the cap, a
// large index's bitmap lies at a multiple of its size past it, and `free` counts the room below
// that, which the bitmap cannot use; the call fails again as 'fragmented', and up to the bitmap's
// size more lets it through. Its own file: it is about a fresh process's memory, where the
// blocks land in the order the core asks for them.
import { afterAll, expect, it } from 'vitest';
import { OutOfMemoryError } from '../adapters/errors.ts';
import { Range } from '../adapters/range.ts';
import { core, memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/** What `new Range(cidr)` threw, or undefined when it returned (the range is destroyed). */
function failureOf(cidr: string): unknown {
  try {
    new Range(cidr).destroy();
    return undefined;
  } catch (e) {
    return e;
  }
}

it('a /8 beside a /24: the rule falls short as the README says, by no more than the bitmap', () => {
  const small = new Range('10.1.0.0/24');
  setMemoryLimit(2 ** 20);
  const first = failureOf('10.0.0.0/8') as OutOfMemoryError;
  expect(first).toBeInstanceOf(OutOfMemoryError);
  expect(first.reason).toBe('limit');
  setMemoryLimit(memoryLimit().limit + Math.ceil((first.requested! - first.free!) / 65536) * 65536);
  const again = failureOf('10.0.0.0/8') as OutOfMemoryError;
  expect(again).toBeInstanceOf(OutOfMemoryError);
  expect(again.reason).toBe('fragmented');
  expect(again.free!).toBeGreaterThanOrEqual(again.requested!); // so the rule gives no more
  expect(core.heap_validate()).toBe(0); // the room carved below the bitmap's place is free blocks
  setMemoryLimit(memoryLimit().limit + 2 * 2 ** 20); // the /8's bitmap: a bit per address
  expect(failureOf('10.0.0.0/8')).toBeUndefined();
  expect(small.has('10.1.0.1')).toBe(false);
  small.destroy();
});
