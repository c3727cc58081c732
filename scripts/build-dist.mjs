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
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });

// from './x.ts' | import('./x.ts') | import './x.ts'  →  './x.js' (relative specifiers only)
const SPECIFIER = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;
let rewritten = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath ?? entry.path, entry.name); // parentPath: Node 20.12+
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPECIFIER, (_, head, path, tail) => `${head}${path}.js${tail}`);
  if (out !== text) {
    writeFileSync(file, out);
    rewritten += 1;
  }
}
console.log(`build-dist: dist/ written; relative .ts specifiers rewritten to .js in ${rewritten} declaration files`);
