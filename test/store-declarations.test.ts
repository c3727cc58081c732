// What a store author reads: go-to-definition on Store, StoreCache or IPAddressRecord lands in the
// package's dist/adapters/store.d.ts, which showed every helper the allocators use to check a
// store's answers (nextTurn, syncAnswer, recordAnswer, checkWatcher, …) beside the contract, none
// of them importable from the package. scripts/build-dist.mjs compiles with stripInternal
// (tsconfig.build.json): a declaration marked @internal is left out of the .d.ts. Each name the
// shipped store.d.ts declares must be one an entry point of the package exports.
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The names a module's declaration file declares as exports, as the build writes it (stripInternal). */
function declaredExports(path: string): string[] {
  const { outputText } = ts.transpileDeclaration(read(path), { fileName: path, compilerOptions: { stripInternal: true } });
  return [...outputText.matchAll(/^export (?:declare )?(?:const|function|interface|type|class|enum) (\w+)/gm)].map((m) => m[1]!);
}

/** Every name the package's entry points ("exports" in package.json) export, by name. */
function packageExports(): Set<string> {
  const entries = ['adapters/index.ts', 'adapters/core.ts', 'adapters/prometheus.ts', 'adapters/kubernetes/index.ts'];
  const names = new Set<string>();
  for (const entry of entries) {
    for (const m of read(entry).matchAll(/export (?:type )?\{([^}]*)\}/g)) {
      for (const part of m[1]!.split(',')) {
        const name = part
          .trim()
          .replace(/^type /, '')
          .split(/\s+as\s+/)
          .pop()!
          .trim();
        if (name !== '') names.add(name);
      }
    }
  }
  return names;
}

describe("the shipped store.d.ts: the Store contract, not the allocators' helpers", () => {
  it('declares only names the package exports', () => {
    const exported = packageExports();
    const declared = declaredExports('adapters/store.ts');
    expect(declared).toEqual(expect.arrayContaining(['Store', 'StoreCache', 'StoreWatcher', 'SyncStoreOps', 'IPAddressRecord']));
    expect(declared.filter((name) => !exported.has(name))).toEqual([]);
  });
});
