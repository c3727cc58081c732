// Counts and sizes in messages are written with digit separators (formatCount), as the command
// line writes them: "16,777,216 addresses", "2,228,288 bytes (2.1 MiB)". A count of eight digits
// without them is misread by a factor of ten as easily as not. Addresses, prefix lengths,
// offsets and a caller's own input quoted back are written as they are.
import { afterAll, describe, expect, it } from 'vitest';
import { formatCount } from '../adapters/quote.ts';
import { MAX_ALLOCATE_MANY, Range } from '../adapters/range.ts';
import { InvalidArgumentError, OutOfMemoryError } from '../adapters/errors.ts';
import { memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/** The message `f` throws with, or a failure of the test when it throws nothing. */
function thrownMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a throw');
}

describe('formatCount', () => {
  it.each([
    { name: 'a small count', n: 999, text: '999' },
    { name: 'a thousand', n: 1000, text: '1,000' },
    { name: 'millions', n: 16777216, text: '16,777,216' },
    { name: 'a negative count', n: -1234567, text: '-1,234,567' },
    { name: 'a bigint past 2^53', n: 2n ** 64n - 1n, text: '18,446,744,073,709,551,615' },
    { name: 'decimal text', n: '1048576', text: '1,048,576' },
    { name: 'a fraction: only its whole part is grouped', n: 1234.5678, text: '1,234.5678' },
    { name: 'a number JavaScript writes with an exponent stays so', n: 2 ** 70, text: '1.1805916207174113e+21' },
    { name: 'not a number', n: Number.NaN, text: 'NaN' },
  ])('$name', ({ n, text }) => {
    expect(formatCount(n)).toBe(text);
  });
});

describe('counts in messages', () => {
  it("Range.allocateMany's per-call cap and the count asked for", () => {
    const r = new Range('2001:db8::/64');
    expect(() => r.allocateMany(MAX_ALLOCATE_MANY + 1)).toThrow(
      new InvalidArgumentError('allocateMany reserves at most 16,777,216 addresses per call, got 16,777,217'),
    );
    expect(r.used()).toBe(0);
    r.destroy();
  });

  it("a snapshot's byte counts: its data and the length it says", () => {
    const r = new Range('2001:db8::/64');
    r.allocate('2001:db8::5');
    const snap = r.snapshot();
    expect(thrownMessage(() => Range.fromSnapshot({ ...snap, length: 1234567 }))).toBe(
      'snapshot of "2001:db8::/64": its data is 8 bytes, the snapshot says 1,234,567: truncated or padded',
    );
    expect(thrownMessage(() => r.restore(snap.range, new Uint8Array(12345)))).toBe(
      'snapshot data of a range over 2^24 addresses must be a multiple of 8 bytes, got 12,345',
    );
    expect(r.has('2001:db8::5')).toBe(true);
    r.destroy();
  });

  it('the nearest caps setMemoryLimit names', () => {
    expect(thrownMessage(() => setMemoryLimit(1_000_000))).toBe(
      'memory limit must be a multiple of 65,536 bytes (WebAssembly memory comes in pages of 64 KiB), got 1000000 (number); the nearest are 983,040 and 1,048,576',
    );
  });

  it("an OutOfMemoryError's addresses and bytes", () => {
    setMemoryLimit(0);
    let thrown: unknown;
    try {
      new Range('10.0.0.0/8');
    } catch (e) {
      thrown = e;
    }
    setMemoryLimit(Infinity);
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    const e = thrown as OutOfMemoryError;
    expect(e.requested).toBeGreaterThan(2 ** 21);
    expect(e.message).toMatch(/^out of memory: creating an index of 16,777,214 addresses asked for \d{1,3}(,\d{3})+ bytes \(2\.1 MiB\); /);
    expect(e.message).toContain(`the WebAssembly memory cap set with setMemoryLimit is ${formatCount(e.limit!)} bytes`);
    expect(e.message).toContain(`in use and only ${formatCount(e.free!)} bytes`);
  });

  it("a sparse load's estimate: the addresses it loads and what each may take", () => {
    const r = new Range('2001:db8::/64');
    setMemoryLimit(memoryLimit().size);
    let thrown: unknown;
    try {
      r.allocateMany(5_000_000);
    } catch (e) {
      thrown = e;
    }
    setMemoryLimit(Infinity);
    expect(thrown).toBeInstanceOf(OutOfMemoryError);
    const e = thrown as OutOfMemoryError;
    expect(e.message).toMatch(
      /^out of memory: marking an address taken needs about \d{1,3}(,\d{3})+ bytes \(\d+(\.\d)? MiB\) \(an estimate: /,
    );
    expect(e.message).toContain('5,000,000 addresses');
    expect(r.used()).toBe(0);
    r.destroy();
  });
});
