// clientNodeMismatch: the command and ipallocator/kubernetes look at the package.json files of
// @kubernetes/client-node and of the undici it would load, before importing them — undici 8 (pulled by client-node 2.x as
// published) needs Node ≥ 22.19 and ends a Node 20 process while loading. Each case lays out a
// node_modules tree in a temporary directory, as npm would.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientNodeMismatch, refuseUnloadableClientNode, requireFromClientNode } from '../adapters/kubernetes/client-node-check.ts';
import { IPAllocatorError } from '../adapters/errors.ts';
import { NO_WASM } from './helpers.ts';

const UNDICI_8 = { name: 'undici', version: '8.14.0', engines: { node: '>=22.19.0' } };
const UNDICI_7 = { name: 'undici', version: '7.30.2', engines: { node: '>=20.18.1' } };
const CLIENT_NODE_2 = { name: '@kubernetes/client-node', version: '2.0.1', dependencies: { undici: '^8.7.0' } };
const CLIENT_NODE_1 = { name: '@kubernetes/client-node', version: '1.4.0', dependencies: { 'node-fetch': '^2.7.0' } };

describe('clientNodeMismatch', () => {
  let root: string;
  /** Where the command's own module would be: the tree is resolved from here. */
  let from: string;

  function write(path: string, json: unknown): void {
    const file = join(root, path, 'package.json');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(json));
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ipallocator-client-node-'));
    from = join(root, 'node_modules', 'ipallocator', 'dist', 'cli', 'main.js');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('client-node 2.x with undici 8 on Node 20: one line saying what to do', () => {
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('node_modules/undici', UNDICI_8);
    expect(clientNodeMismatch(from, '20.20.2')).toBe(
      '@kubernetes/client-node 2.0.1 uses undici 8.14.0, which needs Node 22.19.0 or later (this is Node 20.20.2): ' +
        'use a newer Node, or pin undici 7 with "overrides": {"undici": "7.30.2"} in your package.json and run npm install, ' +
        'or install @kubernetes/client-node@1.4',
    );
    expect(clientNodeMismatch(from, '22.18.9')).toContain('this is Node 22.18.9');
    // before Node 20.18.1 undici 7 does not load either: pinning it is no advice there
    expect(clientNodeMismatch(from, '20.0.0')).toBe(
      '@kubernetes/client-node 2.0.1 uses undici 8.14.0, which needs Node 22.19.0 or later (this is Node 20.0.0): ' +
        'use a newer Node, or install @kubernetes/client-node@1.4',
    );
    expect(clientNodeMismatch(from, '22.19.0')).toBeUndefined();
    expect(clientNodeMismatch(from, 'v24.1.0')).toBeUndefined();
  });

  it("run by npx, whose cache no package.json of yours reaches: the advice is npx's, client-node 1.4 named to it", () => {
    // npx's layout: <cache>/_npx/<hash>/node_modules/{ipallocator,@kubernetes/client-node,undici}
    write('_npx/0a1b2c/node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('_npx/0a1b2c/node_modules/undici', UNDICI_8);
    const npxFrom = join(root, '_npx', '0a1b2c', 'node_modules', 'ipallocator', 'dist', 'cli', 'main.js');
    expect(clientNodeMismatch(npxFrom, '20.20.2')).toBe(
      '@kubernetes/client-node 2.0.1 uses undici 8.14.0, which needs Node 22.19.0 or later (this is Node 20.20.2): ' +
        'use a newer Node, or name client-node 1.4 to npx: npx -p ipallocator -p @kubernetes/client-node@1.4 ipallocator …',
    );
    expect(clientNodeMismatch(pathToFileURL(npxFrom), '20.20.2')).toContain('npx -p ipallocator -p @kubernetes/client-node@1.4');
    expect(clientNodeMismatch(npxFrom, '22.19.0')).toBeUndefined();
  });

  it('ipallocator/kubernetes refuses to load with that line, as an IPAllocatorError the importer can catch', () => {
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('node_modules/undici', UNDICI_8);
    const e = (() => {
      try {
        refuseUnloadableClientNode(from, '20.20.2');
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(IPAllocatorError);
    expect((e as Error).message).toBe(`ipallocator/kubernetes cannot load: ${clientNodeMismatch(from, '20.20.2')}`);
    expect(() => refuseUnloadableClientNode(from, '22.19.0')).not.toThrow();
  });

  it('undici 7 pinned already, on a Node 20 before 20.18.1: no advice to pin it', () => {
    // regression: the line recommended the override already in place
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('node_modules/undici', UNDICI_7);
    expect(clientNodeMismatch(from, '20.0.0')).toBe(
      '@kubernetes/client-node 2.0.1 uses undici 7.30.2, which needs Node 20.18.1 or later (this is Node 20.0.0): ' +
        'use a newer Node, or install @kubernetes/client-node@1.4',
    );
    expect(clientNodeMismatch(from, '20.18.1')).toBeUndefined();
  });

  it('reads the undici client-node itself would load (its own nested copy first)', () => {
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('node_modules/@kubernetes/client-node/node_modules/undici', UNDICI_8);
    write('node_modules/undici', UNDICI_7);
    expect(clientNodeMismatch(from, '20.20.2')).toContain('undici 8.14.0');
    rmSync(join(root, 'node_modules/@kubernetes/client-node/node_modules'), { recursive: true });
    expect(clientNodeMismatch(from, '20.20.2')).toBeUndefined(); // undici 7 (an override) fits Node 20
  });

  it('says nothing when it cannot tell: client-node 1.x, no client-node, no undici, an engines range it does not read', () => {
    write('node_modules/undici', UNDICI_8);
    expect(clientNodeMismatch(from, '20.20.2')).toBeUndefined(); // no client-node: the import reports that
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_1);
    expect(clientNodeMismatch(from, '20.20.2')).toBeUndefined(); // 1.x loads node-fetch, not undici
    write('node_modules/@kubernetes/client-node', CLIENT_NODE_2);
    write('node_modules/undici', { ...UNDICI_8, engines: { node: '^22.19.0 || >=24' } });
    expect(clientNodeMismatch(from, '20.20.2')).toBeUndefined();
    rmSync(join(root, 'node_modules/undici'), { recursive: true });
    expect(clientNodeMismatch(from, '20.20.2')).toBeUndefined();
  });

  it("this repository's own tree (undici pinned by overrides) fits the running Node", () => {
    expect(clientNodeMismatch(new URL('../cli/main.ts', import.meta.url))).toBeUndefined();
  });
});

describe('requireFromClientNode', () => {
  // Regression: an app bundled with @kubernetes/client-node inside it, run where no node_modules
  // is, had every request of a KubernetesStore fail (client-node 1.x, whose node-fetch sends them;
  // 2.x through a proxy, whose undici does) with "Cannot find module
  // '@kubernetes/client-node/package.json'", saying neither why nor what to do.
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ipallocator-client-node-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });
  function thrown(f: () => unknown): unknown {
    try {
      f();
    } catch (err) {
      return err;
    }
    throw new Error('did not throw');
  }
  function write(path: string, content: string): void {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }

  it('loads the copy client-node itself loads (its own nested one first), from a path or a file URL', () => {
    write('node_modules/@kubernetes/client-node/package.json', JSON.stringify(CLIENT_NODE_1));
    write('node_modules/@kubernetes/client-node/node_modules/node-fetch/index.js', "module.exports = 'nested';");
    write('node_modules/node-fetch/index.js', "module.exports = 'top';");
    const from = join(root, 'node_modules', 'ipallocator', 'dist', 'adapters', 'kubernetes', 'answer-body.js');
    expect(requireFromClientNode('node-fetch', 'client-node 1.x sends requests with it', from)).toBe('nested');
    expect(requireFromClientNode('node-fetch', 'client-node 1.x sends requests with it', pathToFileURL(from).href)).toBe('nested');
  });

  it('without client-node on disk (a bundle holding it, a module from JSR): an IPAllocatorError saying what to do, the error as its cause', () => {
    const from = join(root, 'app', 'bundle.mjs');
    const use = 'client-node 1.x sends requests with it';
    const e = thrown(() => requireFromClientNode('node-fetch', use, from));
    expect(e).toBeInstanceOf(IPAllocatorError);
    expect((e as Error).message).toBe(
      `ipallocator/kubernetes needs the node-fetch of @kubernetes/client-node (client-node 1.x sends requests with it), ` +
        `loaded from client-node's folder in node_modules, and cannot load it from ${from}: ` +
        `Cannot find module '@kubernetes/client-node/package.json'. In a bundle, leave ipallocator and @kubernetes/client-node ` +
        'out of it (esbuild --external:ipallocator --external:@kubernetes/client-node) and install them where the bundle runs',
    );
    expect((e as { cause?: { code?: unknown } }).cause?.code).toBe('MODULE_NOT_FOUND');
    // a module from JSR (or another URL) is not on disk: no node_modules to load from
    const remote = 'https://jsr.io/@ipallocator/ipallocator/0.1.0/adapters/kubernetes/proxy-dispatch.ts';
    const fromJsr = thrown(() => requireFromClientNode('undici', 'a request through a proxy is sent with it', remote));
    expect(fromJsr).toBeInstanceOf(IPAllocatorError);
    expect((fromJsr as Error).message).toBe(
      'ipallocator/kubernetes needs the undici of @kubernetes/client-node (a request through a proxy is sent with it), ' +
        `loaded from client-node's folder in node_modules, and cannot load it from ${remote}, a module not on disk ` +
        '(from JSR or another URL): import ipallocator from npm instead (npm:ipallocator/kubernetes)',
    );
    // a bundle in CommonJS leaves import.meta empty: nothing to resolve from
    expect(() => requireFromClientNode('undici', 'a request through a proxy is sent with it', undefined)).toThrow(
      new IPAllocatorError(
        'ipallocator/kubernetes needs the undici of @kubernetes/client-node (a request through a proxy is sent with it), ' +
          "loaded from client-node's folder in node_modules, and cannot load it from this module, which has no URL (a bundle in CommonJS). " +
          'In a bundle, leave ipallocator and @kubernetes/client-node out of it (esbuild --external:ipallocator --external:@kubernetes/client-node) and install them where the bundle runs',
      ),
    );
  });
});

describe('ipallocator/kubernetes without WebAssembly', () => {
  // Regression: `node --jitless` printed Node's own undici failing ("ReferenceError: WebAssembly
  // is not defined", an unhandled rejection from client-node's loading, ending the process with
  // status 1) besides the IPAllocatorError the importer caught.
  it('the import throws only the IPAllocatorError saying so: nothing else printed, the process not ended by it', () => {
    const entry = pathToFileURL(join(import.meta.dirname, '..', 'adapters', 'kubernetes', 'index.ts')).href;
    const script = `try { await import(${JSON.stringify(entry)}); console.log('[]'); } catch (e) { console.log(JSON.stringify([e.name, e.message])); }`;
    const args =
      'Deno' in globalThis
        ? ['eval', '--v8-flags=--jitless', script]
        : ['--jitless', '--import', 'tsx', '--input-type=module', '-e', script];
    const run = spawnSync(process.execPath, args, { cwd: join(import.meta.dirname, '..'), encoding: 'utf8' });
    expect(JSON.parse(run.stdout.trim())).toEqual(['IPAllocatorError', NO_WASM]);
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
  }, 180_000); // tsx compiles each module without a JIT: slow
});
