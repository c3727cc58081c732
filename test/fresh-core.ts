// A core of its own, for a test about the WebAssembly memory. The memory never shrinks and its cap
// is the process's, so such a test loads a fresh module graph (vi.resetModules) and with it a fresh
// WebAssembly instance, whose memory starts small: it runs the same alone, in any order, and after
// any other test. Everything it uses that touches the core must come from that graph — an
// OutOfMemoryError of another graph is another class, and capAt of another graph caps another
// core — so freshCore() returns them together.
import { vi } from 'vitest';

/** A fresh core and the modules of its graph that the memory tests use. */
export async function freshCore() {
  vi.resetModules();
  const { core, memoryLimit, setMemoryLimit } = await import('../adapters/wasm.ts');
  const { InvalidArgumentError, OutOfMemoryError } = await import('../adapters/errors.ts');
  const { Range } = await import('../adapters/range.ts');
  const { Allocator } = await import('../adapters/allocator.ts');
  const { MemoryStore } = await import('../adapters/memory-store.ts');
  const { STRATEGIES } = await import('../adapters/builtin-strategies.ts');
  const { allocatorLabels } = await import('../adapters/store.ts');
  const { Prefix } = await import('../adapters/geometry.ts');
  const { AddressSpace } = await import('../adapters/space.ts');
  const { capAt, randomV4 } = await import('./sparse-helpers.ts');
  return {
    core,
    memoryLimit,
    setMemoryLimit,
    InvalidArgumentError,
    OutOfMemoryError,
    Range,
    Allocator,
    MemoryStore,
    STRATEGIES,
    allocatorLabels,
    Prefix,
    AddressSpace,
    capAt,
    randomV4,
  };
}

export type FreshCore = Awaited<ReturnType<typeof freshCore>>;
