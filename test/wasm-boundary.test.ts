import { describe, expect, it } from 'vitest';
import { core, scratch, coreTarget } from '../adapters/wasm.ts';

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
