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

// Regression: under Deno the advice was npm's (npm install prom-client), which changes nothing
// for the copy Deno runs from its npm cache (npm:ipallocator): Deno gives that copy the packages
// the deno.json of the directory it runs in names, which `deno add` writes.
describe('the install advice follows where this copy of ipallocator is loaded from', () => {
  const cache = 'file:///home/me/.cache/deno/npm/registry.npmjs.org/ipallocator/0.1.0/dist/adapters/metrics.js';
  const denoFolder = 'file:///srv/app/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/adapters/metrics.js';
  const npmFolder = 'file:///srv/my%20app/node_modules/ipallocator/dist/adapters/metrics.js';
  const checkout = 'file:///work/ipallocator/adapters/metrics.ts';
  /** loadPromClientFrom(url)'s message for each url, in a process of `runtime` (none of them holds prom-client). */
  async function advice(runtime: 'node' | 'deno', urls: string[]): Promise<string[]> {
    const { execFile } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const { join } = await import('node:path');
    const root = fileURLToPath(new URL('..', import.meta.url));
    const script =
      "import { loadPromClientFrom } from './adapters/metrics.ts';" +
      `for (const url of ${JSON.stringify(urls)}) { try { loadPromClientFrom(url); console.log('loaded'); } catch (e) { console.log(e.message); } }`;
    const [file, args] =
      runtime === 'node'
        ? ['node', ['--import', 'tsx', '--input-type=module', '--eval', script]]
        : [join(root, 'node_modules', '.bin', 'deno'), ['eval', '--ext=ts', script]];
    const out = await new Promise<string>((done, fail) =>
      execFile(file, args as string[], { cwd: root, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout) =>
        err ? fail(err) : done(stdout),
      ),
    );
    return out.trimEnd().split('\n');
  }
  const said = (install: string) =>
    `metrics need prom-client, an optional peer dependency: install it (${install}); it was not found (Cannot find module 'prom-client'`;

  it('under Deno: deno add where it runs for its npm cache, in the folder for a node_modules Deno laid out, npm install for one npm laid out', async () => {
    const [fromCache, fromDenoFolder, fromNpmFolder, fromCheckout] = await advice('deno', [cache, denoFolder, npmFolder, checkout]);
    expect(fromCache).toContain(
      said('deno add npm:prom-client in the directory you run it in: Deno gives npm:ipallocator the packages its deno.json names'),
    );
    expect(fromDenoFolder).toContain(said('deno add npm:prom-client in "/srv/app", whose node_modules folder holds ipallocator'));
    expect(fromNpmFolder).toContain(said('npm install prom-client in "/srv/my app", whose node_modules folder holds ipallocator'));
    expect(fromCheckout).toContain(said('npm install prom-client'));
  });

  // Found by an outside test: from a module Deno loads by URL (JSR), the advice was npm's and the
  // reason Node's ("The argument 'filename' must be a file URL object, …"), where nothing can be
  // required and the one way is the metrics entry point, which imports prom-client itself.
  it('from a module not on disk (JSR, another URL): import the metrics entry point first, under Deno and Node alike', async () => {
    const jsr = 'https://jsr.io/@ipallocator/ipallocator/0.1.0/adapters/metrics.ts';
    const expected =
      `metrics cannot load prom-client by themselves from ${jsr}, a module not on disk (from JSR or another URL): ` +
      "import ipallocator's metrics entry point once before enabling metrics (jsr:@ipallocator/ipallocator/metrics from JSR), " +
      'which imports prom-client (deno add npm:prom-client if your deno.json does not name it)';
    expect(await advice('deno', [jsr])).toEqual([expected]);
    expect(await advice('node', [jsr])).toEqual([expected]);
  });

  it("under Node: npm's command wherever it is", async () => {
    for (const line of await advice('node', [cache, denoFolder, npmFolder, checkout]))
      expect(line).toContain(said('npm install prom-client'));
  });
});
