// What the process's first index costs in WASM memory, as the README states it beside
// setMemoryLimit: memoryLimit().size is what the memory has grown to (steps of at least 1 MiB),
// not what the indexes need; the core's bookkeeping takes the first 192 KiB. Memory never shrinks,
// so each case loads a core of its own (a fresh module graph, a fresh WebAssembly instance).
import { describe, expect, it, vi } from 'vitest';

const KiB = 1024;

async function freshCore() {
  vi.resetModules();
  const wasm = await import('../adapters/wasm.ts');
  const { Range } = await import('../adapters/range.ts');
  return { memoryLimit: wasm.memoryLimit, setMemoryLimit: wasm.setMemoryLimit, Range };
}

describe('the first index of a process', () => {
  it('with no cap, a /24 grows the memory from 64 KiB to 1,088 KiB while it holds a few hundred bytes', async () => {
    const { memoryLimit, Range } = await freshCore();
    expect(memoryLimit().size).toBe(64 * KiB);
    const r = new Range('10.0.0.0/24');
    expect(memoryLimit().size).toBe(1088 * KiB);
    expect(memoryLimit().inUse).toBeLessThan(KiB);
    r.destroy();
  });

  it('the same /24 fits under a cap of 256 KiB, not of 192 KiB (the bookkeeping before the first block)', async () => {
    const tight = await freshCore();
    tight.setMemoryLimit(192 * KiB);
    expect(() => new tight.Range('10.0.0.0/24')).toThrow(expect.objectContaining({ name: 'OutOfMemoryError' }));
    const { memoryLimit, setMemoryLimit, Range } = await freshCore();
    setMemoryLimit(256 * KiB);
    const r = new Range('10.0.0.0/24');
    r.allocateNext();
    expect(memoryLimit().size).toBe(256 * KiB);
    r.destroy();
  });
});
