// How metrics find prom-client when enabled without `ipallocator/metrics` imported first: through
// process.getBuiltinModule (Node 20.16+, Deno 2). Where the runtime has none, the error says to
// import `ipallocator/metrics` first, not to install what is installed.
import { afterEach, describe, expect, it, vi } from 'vitest';

const host = process as { getBuiltinModule?: unknown };
const saved = host.getBuiltinModule;
afterEach(() => {
  host.getBuiltinModule = saved;
  vi.resetModules();
});

describe('metrics loading prom-client by themselves', () => {
  it('a runtime without process.getBuiltinModule (Node 20 before 20.16): the error says to import ipallocator/metrics first', async () => {
    host.getBuiltinModule = undefined;
    vi.resetModules();
    const { recorderFor } = await import('../adapters/metrics.ts');
    expect(() => recorderFor(true)).toThrow(
      /^metrics cannot load prom-client by themselves here \(this runtime has no process\.getBuiltinModule.*\): import 'ipallocator\/metrics' once before enabling metrics/,
    );
  });

  it('prom-client not installed: IPAllocatorError (ERR_IPALLOCATOR) saying to install it, with the loader’s first line', async () => {
    const real = saved as (id: string) => unknown;
    host.getBuiltinModule = (id: string) =>
      id === 'node:module'
        ? {
            createRequire: () => () => {
              throw new Error("Cannot find module 'prom-client'\nRequire stack:\n- /app/index.js");
            },
          }
        : real(id);
    vi.resetModules();
    const { recorderFor } = await import('../adapters/metrics.ts');
    const { IPAllocatorError } = await import('../adapters/errors.ts');
    let caught: unknown;
    try {
      recorderFor(true);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(IPAllocatorError);
    expect((caught as InstanceType<typeof IPAllocatorError>).code).toBe('ERR_IPALLOCATOR');
    expect((caught as Error).message).toBe(
      "metrics need prom-client, an optional peer dependency: install it (npm install prom-client) or import 'ipallocator/metrics' before enabling metrics (Cannot find module 'prom-client')",
    );
  });

  it('with it, the default registry is prom-client’s', async () => {
    vi.resetModules();
    const { recorderFor } = await import('../adapters/metrics.ts');
    expect(() => recorderFor(true)).not.toThrow();
  });
});
