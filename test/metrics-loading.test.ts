// How metrics find prom-client when enabled without `ipallocator/metrics` imported first: through
// process.getBuiltinModule (Node 20.16+, Deno 2). Where the runtime has none, the error says to
// import `ipallocator/metrics` first, not to install what is installed; where prom-client is not
// installed, it says to install it, not to import what cannot be found.
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

  // Regression: in an esbuild bundle in CommonJS, import.meta.url is undefined, createRequire threw
  // ERR_INVALID_ARG_TYPE, and the error said to install prom-client, installed next to the bundle.
  it('a module without a URL (a bundle in CommonJS): the error says to import ipallocator/metrics first, not to install prom-client', async () => {
    vi.resetModules();
    const { loadPromClientFrom } = await import('../adapters/metrics.ts');
    expect(() => loadPromClientFrom(undefined)).toThrow(
      "metrics cannot load prom-client by themselves here (this module has no URL to load it from, as in a bundle in CommonJS): import 'ipallocator/metrics' once before enabling metrics (and install prom-client if it is not)",
    );
    expect(loadPromClientFrom(import.meta.url).Counter).toBeTypeOf('function'); // with its URL, it loads
  });

  /** recorderFor(true) with a CommonJS loader whose require of prom-client throws `error`: what it throws, twice. */
  async function refusals(error: Error): Promise<unknown[]> {
    const real = saved as (id: string) => unknown;
    host.getBuiltinModule = (id: string) =>
      id === 'node:module'
        ? {
            createRequire: () => () => {
              throw error;
            },
          }
        : real(id);
    vi.resetModules();
    const { recorderFor } = await import('../adapters/metrics.ts');
    const caught: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        recorderFor(true);
      } catch (e) {
        caught.push(e);
      }
    }
    return caught;
  }

  it('prom-client not installed: IPAllocatorError (ERR_IPALLOCATOR) saying to install it, and only that, with the loader’s first line', async () => {
    // what Node's and Deno's require throw: importing 'ipallocator/metrics' cannot help then
    const notFound = Object.assign(new Error("Cannot find module 'prom-client'\nRequire stack:\n- /app/index.js"), {
      code: 'MODULE_NOT_FOUND',
    });
    const caught = await refusals(notFound);
    const { IPAllocatorError } = await import('../adapters/errors.ts');
    expect(caught).toHaveLength(2); // nothing kept: the second try fails the same way
    for (const e of caught) {
      expect(e).toBeInstanceOf(IPAllocatorError);
      expect((e as InstanceType<typeof IPAllocatorError>).code).toBe('ERR_IPALLOCATOR');
      expect((e as Error).message).toBe(
        "metrics need prom-client, an optional peer dependency: install it (npm install prom-client); it was not found (Cannot find module 'prom-client'); in a bundle, which it cannot be loaded from by name, import 'ipallocator/metrics' once before enabling metrics",
      );
    }
  });

  it('prom-client found but not loadable by require here: the error says to install it or import ipallocator/metrics first', async () => {
    const caught = await refusals(Object.assign(new Error('require() of ES Module not supported'), { code: 'ERR_REQUIRE_ESM' }));
    const { IPAllocatorError } = await import('../adapters/errors.ts');
    expect(caught).toHaveLength(2);
    expect(caught[0]).toBeInstanceOf(IPAllocatorError);
    expect((caught[0] as Error).message).toBe(
      "metrics need prom-client, an optional peer dependency: install it (npm install prom-client) or import 'ipallocator/metrics' before enabling metrics (require() of ES Module not supported)",
    );
  });

  it('with it, the default registry is prom-client’s', async () => {
    vi.resetModules();
    const { recorderFor } = await import('../adapters/metrics.ts');
    expect(() => recorderFor(true)).not.toThrow();
  });
});
