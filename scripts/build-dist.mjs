#!/usr/bin/env node
// Compiles adapters/ (and whatever tsconfig.build.json includes) to dist/: JavaScript plus .d.ts.
//   node scripts/build-dist.mjs
// dist/ is emptied first, so the package never ships a module whose source is gone.
//
// The sources import each other as './x.ts' (one tree serves Node through tsc, Deno and vitest);
// tsc rewrites those specifiers to './x.js' in the JavaScript it emits, but not in declarations.
// Declarations keep './x.ts' and a consumer's TypeScript must then resolve .ts files it was not
// given; so the relative specifiers of every .d.ts are rewritten to '.js' here, which every
// TypeScript ≥ 5.0 resolves under node16, nodenext and bundler.
//
// Classes offer `[Symbol.dispose]()` (and `[Symbol.asyncDispose]()`) for `using`. Those symbols
// and the Disposable interfaces are declared by TypeScript's lib "esnext.disposable" (5.2+) and by
// @types/node, but not by lib ES2022: a consumer with neither could not read our declarations. So
// dist/ gets one more declaration file, disposable.d.ts, declaring them as @types/node does (the
// declarations merge where a lib has them too), referenced by each .d.ts that uses them. It is
// written here rather than kept in adapters/: Deno has the symbols built in, and JSR refuses
// global augmentation in a published module.
//
// A declaration file that no entry point reaches is deleted: what a module whose exports are all
// @internal compiles to (a bare `export {}`), and the commands' (they export nothing). From the
// "types" of each entry point of package.json's "exports", the relative specifiers of each
// declaration are followed (import, export … from, import('…'), /// <reference path>); the
// package ships only the declarations a user's TypeScript can read.
//
// Likewise a JavaScript file that no entry point ("exports") or command ("bin") reaches, by its
// imports (static or dynamic), is deleted: a module that only declares types compiles to a bare
// `export {}` that nothing loads, and "exports" lets no one import it by its path.
//
// tsc keeps the doc comment of a private member in its declaration (`private taken;`): notes for
// maintainers, about code users never call, that "go to definition" shows them. They are dropped
// from the .d.ts (the member stays: it keeps the class nominal).
//
// The JavaScript ships without comments, the declarations with theirs. The comments of the sources
// are notes for maintainers and doc comments, about 40 % of what tsc writes; users read the doc
// comments in their editor, from the .d.ts, and no one reads them in the .js. So tsc runs twice:
// once for the declarations (which type-checks), once for the JavaScript with removeComments
// (noCheck: the first run checked; with isolatedModules the code written is the same either way).
// removeComments keeps a comment that opens with `/*!` (a license), but not a bundler's
// annotation (`/*#__PURE__*/`): the sources have none, and check-package fails if one appears.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const build = (...options) =>
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', ...options], { cwd: root, stdio: 'inherit' });
build('--emitDeclarationOnly');
build('--declaration', 'false', '--removeComments', '--noCheck');

// from './x.ts' | import('./x.ts') | import './x.ts'  →  './x.js' (relative specifiers only)
const SPECIFIER = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;
// a doc comment (no `*/` inside it) on the lines right above a private member of the same indent
const PRIVATE_DOC = /^([ \t]*)\/\*\*(?:(?!\*\/)[\s\S])*\*\/\n(?=\1private )/gm;
const DISPOSABLE = `// Written by scripts/build-dist.mjs: see there.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
  interface Disposable {
    [Symbol.dispose](): void;
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>;
  }
}
export {};
`;
writeFileSync(join(dist, 'adapters', 'disposable.d.ts'), DISPOSABLE);
let rewritten = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts') || entry.name === 'disposable.d.ts') continue;
  const file = join(entry.parentPath ?? entry.path, entry.name); // parentPath: Node 20.12+
  const text = readFileSync(file, 'utf8');
  let out = text.replace(SPECIFIER, (_, head, path, tail) => `${head}${path}.js${tail}`).replace(PRIVATE_DOC, '');
  if (/\bSymbol\.(dispose|asyncDispose)\b|\b(Async)?Disposable\b/.test(out)) {
    const ref = relative(entry.parentPath ?? entry.path, join(dist, 'adapters', 'disposable.d.ts'));
    out = `/// <reference path="${ref.startsWith('.') ? ref : `./${ref}`}" />\n${out}`;
  }
  if (out !== text) {
    writeFileSync(file, out);
    rewritten += 1;
  }
}

// from './x.js' | import('./x.js') | import './x.js' | /// <reference path="./x.d.ts" />, once rewritten
const REFERENCE = /(?:(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"])|(?:<reference path="([^"]+)")/g;
const { exports, bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** The files of dist/ that `starts` reach, `follow` naming the files each file refers to. */
function reachedFrom(starts, follow) {
  const reached = new Set();
  const queue = starts.map((start) => resolve(root, start));
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (reached.has(file)) continue;
    if (!existsSync(file)) throw new Error(`build-dist: ${relative(root, file)} is reached from an entry point but was not written`);
    reached.add(file);
    queue.push(...follow(file, readFileSync(file, 'utf8')));
  }
  return reached;
}
const entries = Object.values(exports).filter((entry) => typeof entry === 'object');
const reached = new Set([
  ...reachedFrom(
    entries.map((entry) => entry.types),
    (file, text) =>
      [...text.matchAll(REFERENCE)].map(([, specifier, reference]) =>
        resolve(dirname(file), specifier?.replace(/\.js$/, '.d.ts') ?? reference),
      ),
  ),
  ...reachedFrom([...entries.map((entry) => entry.default), ...Object.values(bin ?? {})], (file, text) =>
    [...text.matchAll(REFERENCE)].flatMap(([, specifier]) => (specifier === undefined ? [] : [resolve(dirname(file), specifier)])),
  ),
]);
const pruned = { declarations: 0, javascript: 0 };
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const file = join(entry.parentPath ?? entry.path, entry.name);
  const kind = entry.name.endsWith('.d.ts') ? 'declarations' : entry.name.endsWith('.js') ? 'javascript' : undefined;
  if (entry.isFile() && kind !== undefined && !reached.has(file)) {
    rmSync(file);
    pruned[kind] += 1;
  }
}
console.log(
  `build-dist: dist/ written; ${rewritten} declaration files rewritten (.ts specifiers to .js, private members' doc comments dropped); ` +
    `deleted as no entry point reaches them: ${pruned.declarations} declaration files, ${pruned.javascript} JavaScript files`,
);
