import { describe, expect, it } from 'vitest';
import { DENSE_AUTO_MAX_OFFSETS } from '../adapters/free-index.ts';
import { GEO, GEO_FLAG_COUNT_SATURATED, GEO_FLAG_NO_FIRST, GEO_FLAG_NO_LAST } from '../adapters/geometry.ts';
import { WASM_BASE64 } from '../adapters/generated/core-wasm.inline.ts';
import { MAX_ALLOCATE_MANY } from '../adapters/range.ts';
import {
  BAND_LOWER,
  BAND_UPPER,
  CoreAbortError,
  type CoreConstant,
  core,
  coreConstant,
  coreTarget,
  HEAP_FAIL_FRAGMENTED,
  HEAP_FAIL_HOST,
  HEAP_FAIL_LIMIT,
  KIND_AUTO,
  KIND_DENSE,
  KIND_SPARSE,
  NONE,
  OK,
  OUT_OF_MEMORY,
  OUT_OF_RANGE,
  scratch,
  TOO_FAR,
} from '../adapters/wasm.ts';

describe('wasm boundary', () => {
  it('instantiates the core synchronously and exposes a scratch window', () => {
    expect(['release', 'debug']).toContain(coreTarget);
    expect(core.memory.buffer.byteLength).toBeGreaterThan(0);
    expect(scratch().length).toBe(32);
  });

  it('buf_alloc hands out distinct 16-byte aligned blocks and reuses freed ones', () => {
    const a = core.buf_alloc(100);
    const b = core.buf_alloc(100);
    expect(a).not.toBe(0);
    expect(b).not.toBe(a);
    expect(a % 16).toBe(0);
    core.buf_free(a, 100);
    expect(core.buf_alloc(120)).toBe(a); // same 128-byte class
  });
});

describe('the numbers both sides share come from the core', () => {
  // Each value the host uses, by the name of the core's constant it must equal.
  const host: Record<CoreConstant, number> = {
    OK,
    NONE,
    OUT_OF_RANGE,
    OUT_OF_MEMORY,
    TOO_FAR,
    HEAP_FAIL_LIMIT,
    HEAP_FAIL_FRAGMENTED,
    HEAP_FAIL_HOST,
    KIND_AUTO,
    KIND_DENSE,
    KIND_SPARSE,
    DENSE_MAX_SLOTS: DENSE_AUTO_MAX_OFFSETS,
    DENSE_MAX_OFFSETS: 2 ** 31,
    BAND_UPPER,
    BAND_LOWER,
    SCRATCH_WORDS: scratch().length,
    GEO_NETWORK: GEO.NETWORK,
    GEO_BROADCAST: GEO.BROADCAST,
    GEO_FIRST: GEO.FIRST,
    GEO_LAST: GEO.LAST,
    GEO_OFFSET_ADDRESS: GEO.OFFSET_ADDRESS,
    GEO_SIZE: GEO.SIZE,
    GEO_RANGE_OFFSET: GEO.RANGE_OFFSET,
    GEO_FLAGS: GEO.FLAGS,
    GEO_COUNT: GEO.COUNT,
    FLAG_NO_FIRST: GEO_FLAG_NO_FIRST,
    FLAG_NO_LAST: GEO_FLAG_NO_LAST,
    FLAG_COUNT_SATURATED: GEO_FLAG_COUNT_SATURATED,
  };

  it('the core exports each as a constant, and the host holds its value', async () => {
    const module = new WebAssembly.Module(Uint8Array.from(atob(WASM_BASE64), (c) => c.charCodeAt(0)));
    const globals = WebAssembly.Module.exports(module)
      .filter((e) => e.kind === 'global')
      .map((e) => e.name)
      .sort();
    expect(globals).toEqual(Object.keys(host).sort());
    const { exports } = new WebAssembly.Instance(module, { env: { abort() {} } });
    for (const name of globals) {
      const value = Number((exports[name] as WebAssembly.Global).value);
      expect([name, host[name as CoreConstant]]).toEqual([name, value]);
    }
  });

  it('values the core defines are the documented ones', () => {
    expect([OK, NONE, OUT_OF_RANGE, OUT_OF_MEMORY, TOO_FAR]).toEqual([1, 0, -1, -2, -3]);
    expect([MAX_ALLOCATE_MANY, DENSE_AUTO_MAX_OFFSETS]).toEqual([2 ** 24, 2 ** 24]);
    expect(scratch().length).toBe(coreConstant('SCRATCH_WORDS'));
  });

  it('a constant the core does not export fails loudly', () => {
    expect(() => coreConstant('NO_SUCH' as CoreConstant)).toThrow(CoreAbortError);
  });
});
