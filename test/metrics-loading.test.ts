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
    const { enableMetrics } = await import('../adapters/metrics.ts');
    expect(() => enableMetrics()).toThrow(
      /^metrics cannot load prom-client by themselves here \(this runtime has no process\.getBuiltinModule.*\): import 'ipallocator\/metrics' once before enabling metrics/,
    );
  });

  it('with it, the default registry is prom-client’s', async () => {
    vi.resetModules();
    const { enableMetrics } = await import('../adapters/metrics.ts');
    expect(() => enableMetrics()).not.toThrow();
  });
});
