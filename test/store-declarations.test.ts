// What a user reads: go-to-definition on Store, StoreCache or IPAddressRecord lands in the
// package's dist/adapters/store.d.ts, which showed every helper the allocators use to check a
// store's answers (nextTurn, syncAnswer, recordAnswer, checkWatcher, …) beside the contract, none
// of them importable from the package; dist/adapters/memory-store.d.ts showed storeOption, and
// every other module's declaration its helpers likewise. scripts/build-dist.mjs compiles with
// stripInternal (tsconfig.build.json): a declaration marked @internal is left out of the .d.ts.
// Each name a shipped .d.ts declares must be one an entry point of the package exports, or one
// that a declaration a user reaches from an entry point imports (a base class, an option's type).
import { readFileSync, readdirSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The entry points ("exports" in package.json), as their sources. */
const ENTRIES = ['adapters/index.ts', 'adapters/core.ts', 'adapters/prometheus.ts', 'adapters/kubernetes/index.ts'];

/** A module's declaration file as the build writes it (stripInternal). */
function declaration(path: string): string {
  return ts.transpileDeclaration(read(path), { fileName: path, compilerOptions: { stripInternal: true } }).outputText;
}

/** The names a declaration file declares as exports: its declarations and its export lists. */
function declaredExports(text: string): string[] {
  const declared = [...text.matchAll(/^export (?:declare )?(?:abstract )?(?:const|function|interface|type|class|enum) (\w+)/gm)].map(
    (m) => m[1]!,
  );
  for (const m of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) declared.push(...listed(m[1]!).map(([, name]) => name));
  return declared;
}

/** The [name, as-name] pairs of an import or export list (`a, type b as c`). */
function listed(list: string): [string, string][] {
  return list
    .split(',')
    .map((part) => part.trim().replace(/^type /, ''))
    .filter((part) => part !== '')
    .map((part) => {
      const [name, as] = part.split(/\s+as\s+/);
      return [name!.trim(), (as ?? name!).trim()];
    });
}

/** Each relative module a declaration file imports or re-exports from, with the names it takes (by their names there). */
function importsOf(path: string, text: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  const add = (specifier: string, names: string[]) => {
    const target = posix.join(posix.dirname(path), specifier);
    modules.set(target, [...(modules.get(target) ?? []), ...names]);
  };
  for (const m of text.matchAll(/^(?:import|export) (?:type )?\{([^}]*)\} from '(\.[^']+)'/gm))
    add(
      m[2]!,
      listed(m[1]!).map(([name]) => name),
    );
  for (const m of text.matchAll(/import\('(\.[^']+)'\)\.(\w+)/g)) add(m[1]!, [m[2]!]);
  return modules;
}

/** The sources whose declarations the package ships: every module under adapters/ (dist/adapters/). */
function shippedModules(): string[] {
  const dir = new URL('adapters/', root);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `adapters/${f.split(/[\\/]/).join('/')}`)
    .sort();
}

/**
 * The names a declaration file's declarations refer to (a constructor's parameter type, a base
 * class): every identifier but those that name a declaration, an import or an export.
 */
function referencedIn(text: string): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    const parent = node.parent as (ts.Node & { name?: ts.Node }) | undefined;
    if (ts.isIdentifier(node) && parent?.name !== node) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('declaration.d.ts', text, ts.ScriptTarget.Latest, true));
  return names;
}

/**
 * The names a user can reach, as `module#name`: from each declaration reached from the entry
 * points, the names it imports (by module) and the names of its own module it refers to.
 */
function reachableNames(declarations: Map<string, string>): Set<string> {
  const names = new Set<string>();
  const seen = new Set<string>();
  const queue = [...ENTRIES];
  while (queue.length > 0) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const text = declarations.get(path);
    if (text === undefined) throw new Error(`${path} is imported by a declaration but is no module of the package`);
    for (const name of referencedIn(text)) names.add(`${path}#${name}`);
    for (const [module, imported] of importsOf(path, text)) {
      for (const name of imported) names.add(`${module}#${name}`);
      queue.push(module);
    }
  }
  return names;
}

describe("the shipped declarations: the package's API, not its helpers", () => {
  it("store.d.ts declares the Store contract, not the allocators' helpers", () => {
    const declared = declaredExports(declaration('adapters/store.ts'));
    expect(declared).toEqual(expect.arrayContaining(['Store', 'StoreCache', 'StoreWatcher', 'SyncStoreOps', 'IPAddressRecord']));
  });

  it('every .d.ts declares only names an entry point exports or a reachable declaration needs', () => {
    const modules = shippedModules();
    expect(modules).toEqual(
      expect.arrayContaining([...ENTRIES, 'adapters/memory-store.ts', 'adapters/input.ts', 'adapters/kubernetes/informer.ts']),
    );
    const declarations = new Map(modules.map((path) => [path, declaration(path)]));
    const reachable = reachableNames(declarations);
    const stray: string[] = [];
    for (const [path, text] of declarations) {
      if (ENTRIES.includes(path)) continue;
      for (const name of declaredExports(text)) {
        if (!reachable.has(`${path}#${name}`)) stray.push(`${path}: ${name}`);
      }
    }
    expect(reachable.size).toBeGreaterThan(100); // Allocator, Range, … and the types they name
    expect(stray).toEqual([]);
  });
});
