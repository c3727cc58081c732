// Blocks under 4 KiB (small indexes' headers and bitmaps) are cut from 4 KiB blocks that serve
// only blocks of their own size again. Under a cap, memory that once held thousands of small
// indexes, all destroyed since, is free in name and yet cannot hold a larger index: the
// OutOfMemoryError must say so, or a reader sees "192 bytes in use" and nothing to destroy.
//
// Its own file: vitest runs each file in its own fork, so the core's memory starts empty here and
// the cap below is the only room there is.
import { afterAll, describe, expect, it } from 'vitest';
import { Range } from '../../adapters/range.ts';
import { OutOfMemoryError } from '../../adapters/errors.ts';
import { memoryLimit, setMemoryLimit } from '../../adapters/wasm.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

describe('memory held for small blocks under a cap', () => {
  it('is named by the OutOfMemoryError once the small indexes that held it are destroyed', () => {
    setMemoryLimit(2 ** 20);
    const ranges: Range[] = [];
    for (let i = 0; ; i++) {
      try {
        ranges.push(new Range(`10.${i >> 8}.${i & 255}.0/24`));
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        break;
      }
    }
    expect(ranges.length).toBeGreaterThan(1000);
    for (const r of ranges) r.destroy();
    expect(memoryLimit().inUse).toBe(0);
    let failure: unknown;
    try {
      new Range('10.200.0.0/20');
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(OutOfMemoryError);
    expect((failure as Error).message).toMatch(
      /, 0 bytes of it in use, and \d+ bytes \([\d.]+ KiB\) more held free for blocks under 4 KiB only \(small indexes\): raise it/,
    );
    // the small ones fit again
    const again = new Range('10.0.0.0/24');
    again.destroy();
  });
});
