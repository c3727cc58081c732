// `ipallocator/core` is for tools that work with ranges without allocating: importing it must not
// load the allocators (their modules, the store, the strategies). Checked on the JavaScript the
// sources compile to (type-only imports erased as tsc erases them), following every relative import.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as coreEntry from '../adapters/core.ts';
import { addOffsetAddress, ipIterator } from '../adapters/core.ts';
import * as rootEntry from '../adapters/index.ts';
import { memoryLimit } from '../adapters/index.ts';
import { NO_WASM } from './helpers.ts';

const adapters = join(dirname(fileURLToPath(import.meta.url)), '..', 'adapters');
// import … from './x.ts', export … from './x.ts', import './x.ts', import('./x.ts')
const RELATIVE = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The modules loading `entry` loads, as paths relative to adapters/. */
function loadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    const name = relative(adapters, file);
    if (seen.has(name)) return;
    seen.add(name);
    const js = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    }).outputText;
    for (const m of js.matchAll(RELATIVE)) visit(resolve(dirname(file), m[1]!));
  };
  visit(join(adapters, entry));
  return seen;
}

describe('ipallocator/core', () => {
  it('loads no allocator: only address text, geometry, random sources and what they need', () => {
    const loaded = loadedBy('core.ts');
    for (const heavy of [
      'allocator.ts',
      'meta-allocator.ts',
      'range.ts',
      'memory-store.ts',
      'builtin-strategies.ts',
      'chooser-calls.ts',
      'cool-down.ts',
      'cooling.ts',
    ]) {
      expect(loaded.has(heavy), `${heavy} is loaded by ipallocator/core: ${[...loaded].join(', ')}`).toBe(false);
    }
    expect(loaded.has('geometry.ts')).toBe(true); // the walk does follow the entry's re-exports
  });

  it('without WebAssembly (--jitless) the import throws an IPAllocatorError saying so, not a bare ReferenceError', () => {
    // Found by an outside test: `node --jitless` ended the import in "WebAssembly is not defined".
    const entry = pathToFileURL(join(adapters, 'core.ts')).href;
    const script = `try { await import(${JSON.stringify(entry)}); console.log('[]'); } catch (e) { console.log(JSON.stringify([e.name, e.code, e.message])); }`;
    const args =
      'Deno' in globalThis
        ? ['eval', '--v8-flags=--jitless', script]
        : ['--jitless', '--import', 'tsx', '--input-type=module', '-e', script];
    const out = execFileSync(process.execPath, args, { cwd: join(adapters, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(JSON.parse(out.trim())).toEqual(['IPAllocatorError', 'ERR_IPALLOCATOR', NO_WASM]);
  });

  it.skipIf('Deno' in globalThis)(
    'without WebAssembly in a runtime that is neither Node nor Deno, the message names no flag of theirs',
    () => {
      // Regression: the message named Node's --jitless and --no-expose-wasm in every runtime, Deno's too.
      // Bun has a `process.versions.node` too, and `process.versions.bun`: played here by Node.
      const entry = pathToFileURL(join(adapters, 'core.ts')).href;
      const script =
        "Object.defineProperty(process.versions, 'bun', { value: '1.2.0' }); " +
        `try { await import(${JSON.stringify(entry)}); console.log('[]'); } catch (e) { console.log(JSON.stringify([e.name, e.message])); }`;
      const args = ['--jitless', '--import', 'tsx', '--input-type=module', '-e', script];
      const out = execFileSync(process.execPath, args, {
        cwd: join(adapters, '..'),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      expect(JSON.parse(out.trim())).toEqual([
        'IPAllocatorError',
        'ipallocator needs WebAssembly, which this JavaScript runtime does not offer',
      ]);
    },
  );

  it('an engine that refuses the core its memory or its compilation: the import throws an IPAllocatorError saying which, and what to do', () => {
    // Found by an outside test: under `ulimit -v 4000000` the import ended in a bare RangeError
    // from WebAssembly.Instance, and the command printed "internal error" with a stack trace.
    const entry = pathToFileURL(join(adapters, 'core.ts')).href;
    const refusals = {
      memory:
        "WebAssembly.Instance = function () { throw new RangeError('WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance'); };",
      compile:
        "WebAssembly.Module = function () { throw new WebAssembly.CompileError('WebAssembly.Module(): Wasm code generation disallowed by embedder'); };",
      engine: "WebAssembly.Module = function () { throw new WebAssembly.CompileError('WebAssembly.Module(): invalid opcode 0xfd'); };",
    };
    const outcome = (refusal: string) => {
      const script = `${refusal} try { await import(${JSON.stringify(entry)}); console.log('[]'); } catch (e) { console.log(JSON.stringify([e.name, e.code, e.message, String(e.cause)])); }`;
      const args = 'Deno' in globalThis ? ['eval', script] : ['--import', 'tsx', '--input-type=module', '-e', script];
      const out = execFileSync(process.execPath, args, {
        cwd: join(adapters, '..'),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      return JSON.parse(out.trim()) as unknown;
    };
    expect(outcome(refusals.memory)).toEqual([
      'IPAllocatorError',
      'ERR_IPALLOCATOR',
      'ipallocator cannot start its WebAssembly core: the JavaScript engine refused it its memory (RangeError: WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance). ' +
        'A limit on virtual memory (ulimit -v) below about 11 GiB does that in Node, whose WebAssembly memories each reserve 10 GiB of address space: raise or lift the limit, or start node with --disable-wasm-trap-handler, which reserves none',
      'RangeError: WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance',
    ]);
    expect(outcome(refusals.compile)).toEqual([
      'IPAllocatorError',
      'ERR_IPALLOCATOR',
      "ipallocator cannot compile its WebAssembly core here (CompileError: WebAssembly.Module(): Wasm code generation disallowed by embedder): the host forbids compiling WebAssembly, as a Content-Security-Policy without 'wasm-unsafe-eval' or a node:vm context made with codeGeneration: { wasm: false } does",
      'CompileError: WebAssembly.Module(): Wasm code generation disallowed by embedder',
    ]);
    // an engine's own failure is not blamed on the host
    expect(outcome(refusals.engine)).toEqual([
      'IPAllocatorError',
      'ERR_IPALLOCATOR',
      'ipallocator cannot compile its WebAssembly core here (CompileError: WebAssembly.Module(): invalid opcode 0xfd): this JavaScript engine cannot compile it; ipallocator runs on Node 20 or later and Deno 2',
      'CompileError: WebAssembly.Module(): invalid opcode 0xfd',
    ]);
  });

  it("ipIterator holds no WebAssembly memory, as upstream's closure holds nothing: none to free, so it has no destroy()", () => {
    const before = memoryLimit().inUse;
    const kept: (() => string | undefined)[] = [];
    for (let i = 0; i < 2000; i++) {
      const next = ipIterator('10.0.0.1', '10.0.255.254', BigInt(i));
      expect(next()).toBe(addOffsetAddress('10.0.0.1', BigInt(i)));
      kept.push(next, ipIterator('2001:db8::1', '2001:db8::ffff', BigInt(i))); // alive, taken from or not
    }
    expect(memoryLimit().inUse).toBe(before);
    expect(kept[0]!()).toBe('10.0.0.2');
    expect(kept[1]!()).toBe('2001:db8::1');
  });

  it("exports every name the README's table of entry points lists for it, seededRandom among its random sources", () => {
    const readme = readFileSync(join(adapters, '..', 'README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `ipallocator/core`'));
    const what = row!.split('|')[2]!;
    const names = [...what.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
    expect(names).toContain('seededRandom');
    for (const name of names) expect(coreEntry, `README lists ${name} for ipallocator/core`).toHaveProperty(name);
    // the same generator as the root entry's: a seed gives one sequence whichever entry it came from
    expect(coreEntry.seededRandom).toBe(rootEntry.seededRandom);
    const a = coreEntry.seededRandom(7);
    const b = rootEntry.seededRandom(7);
    for (let i = 0; i < 4; i++) expect(a.nextU32()).toBe(b.nextU32());
  });
});
