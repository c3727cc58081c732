#!/usr/bin/env node
// Checks the package as its users get it, from the packed tarball (run by .ci/run):
//   1. the tarball holds exactly what runs: dist/ (JavaScript + declarations), LICENSE, README.md
//      and the pages it links (its docs/ pages and what they link; no pictures, which npmjs.com
//      does not show from the package), and package.json without its scripts, which are for a
//      checkout (scripts/pack-manifest.mjs);
//      the checkout's package.json is as it was after packing; each declaration file in it is one
//      that TypeScript reads for an app importing every entry point, each JavaScript file one that
//      an entry point or a command loads; the JavaScript carries no comments but licenses, and the
//      declarations keep the doc comment of each documented export
//   2. publint (package.json and exports) and attw (types as each resolver sees them); the JSR
//      package (deno publish --dry-run) holds the pictures README.md shows
//   3. a fresh app (scripts/consumers/) installs the tarball, npm saying nothing of install scripts, and
//      - without prom-client: loads, allocates, and says what to install when metrics are enabled;
//        its types (all but ipallocator/metrics, which imports prom-client) type-check without it
//      - from ESM and from CommonJS require(): runs every entry point; its commands print --help
//      - type-checks under node16, nodenext and bundler with TypeScript 5.0, the current 5.x and 7,
//        lib ES2022 only (no DOM, no @types/node), skipLibCheck off; a .cts file require()s it
//      - type-checks every entry point of "exports" alone, as the README's Install section promises:
//        lib ES2022 + ESNext.Disposable, types [], skipLibCheck off, and no optional peer installed
//        but the one the entry needs (prom-client for ./metrics; @kubernetes/client-node and
//        @types/ws for ./kubernetes)
//      - runs every example of README.md and of the docs/ pages (except cluster ones) as ESM and as
//        CommonJS, type-checked as a Node app checks them (lib ES2022 and @types/node, no DOM lib)
// Packs as `npm publish` does, with the package's own prepack and postpack (which build dist/ and
// the WASM core again first). Installs from the npm cache where it can; the app's
// tools are pinned in scripts/consumers/package.json, prom-client to the version of package.json.
//   node scripts/check-package.mjs
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => join(root, 'node_modules', pkg, file);
const work = mkdtempSync(join(tmpdir(), 'ipallocator-package-'));
const app = join(work, 'app');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
let failed = 0;

function run(cmd, args, cwd = root) {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
function step(name, fn) {
  const t0 = Date.now();
  try {
    const note = fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)${note ? `: ${note}` : ''}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}\n${[e.stdout, e.stderr, e.stdout || e.stderr ? '' : e.stack].filter(Boolean).join('\n')}`);
  }
}
/** Independent checks, a few at a time (each is a tsc run of several seconds). */
async function stepsInParallel(steps) {
  const queue = [...steps];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [name, cmd, args, cwd] = next;
      const t0 = Date.now();
      try {
        await promisify(execFile)(cmd, args, { cwd, encoding: 'utf8' });
        console.log(`ok   ${name} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed += 1;
        console.log(`FAIL ${name}\n${[e.stdout, e.stderr].filter(Boolean).join('\n')}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(3, availableParallelism()) }, worker));
}
/**
 * npm install into the app, from the cache when it has the packages (CI's npm ci filled it). A
 * warning that names this package among those with install scripts fails it: it has none to run
 * (npm 11 lists the scripts it finds "not yet covered by allowScripts", one package a line).
 */
function install(...specs) {
  const args = ['install', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', ...specs];
  const { status, stdout, stderr, error } = spawnSync('npm', args, { cwd: app, encoding: 'utf8' });
  if (error !== undefined) throw error;
  if (status !== 0 || new RegExp(`install-scripts\\s+${pkg.name}@`).test(stderr)) {
    throw Object.assign(new Error(`npm ${args.join(' ')}: exit ${status}`), { stdout, stderr });
  }
}

/**
 * The documents README.md links under docs/ and bench/results/, then, page by page, what those
 * Markdown pages link in the same two folders (a docs/ page's pictures, the strategies page's
 * charts); `pictures` false leaves the pictures out (the pages are followed either way).
 */
function linkedDocuments(from = 'README.md', pictures = true) {
  const found = new Set();
  const queue = [from];
  for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
    const text = readFileSync(join(root, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#\s:]+)(?:#[^)\s]*)?\)/g)) {
      const file = posix.normalize(posix.join(posix.dirname(page), target));
      if (!/^(docs|bench\/results)\//.test(file) || found.has(file)) continue;
      found.add(file);
      if (file.endsWith('.md')) queue.push(file);
    }
  }
  return [...found].filter((f) => pictures || f.endsWith('.md'));
}
/** The pictures README.md itself shows (not those of the pages it links). */
const readmePictures = () => [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);

/** README.md's and the docs/ pages' examples: every ```ts block but the `// no-run` ones (cluster examples). */
function documentedExamples() {
  const pages = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  return pages.flatMap((page) =>
    [...readFileSync(join(root, page), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((m) => m[1])
      .filter((c) => !c.startsWith('// no-run')),
  );
}

/**
 * The comments of a JavaScript or declaration file, each as its text: the trivia before and after
 * each token, as TypeScript's parser sees it (not a pattern, which strings and regular expressions
 * would fool). The shebang line is not a comment.
 */
function commentsOf(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Map();
  const visit = (node) => {
    // a doc comment is both trivia and a node (JSDoc) of what it documents: read it as trivia only
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length > 0) return children.forEach(visit);
    for (const range of [...(ts.getLeadingCommentRanges(text, node.pos) ?? []), ...(ts.getTrailingCommentRanges(text, node.end) ?? [])]) {
      found.set(range.pos, text.slice(range.pos, range.end));
    }
  };
  visit(source);
  return [...found.values()];
}
/** A comment the shipped JavaScript keeps: a license (`/*!`, @license, @preserve) or an annotation for bundlers. */
const KEPT_COMMENT = /^\/\*!|@license|@preserve|[#@]__(PURE|NO_SIDE_EFFECTS)__/;
/** A bundler's annotation: a comment that is only `#__PURE__` or `@__NO_SIDE_EFFECTS__` (`/*#__PURE__*\/`). */
const ANNOTATION = /^\/\*\s*[#@]__(PURE|NO_SIDE_EFFECTS)__\s*\*\/$/;

/** Each export of a module (its symbol in `program`), by name, with its doc comment as an editor shows it ('' for none). */
function docsOfExports(program, module) {
  const checker = program.getTypeChecker();
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return [symbol.name, ts.displayPartsToString(target.getDocumentationComment(checker))];
    }),
  );
}

let tarball = '';
/** The paths of the files in the tarball, as npm lists them (dist/adapters/index.js, …). */
let packedFiles = [];
step('npm pack: exactly what runs', () => {
  const before = readFileSync(join(root, 'package.json'), 'utf8');
  // the scripts' output (the build's) goes to npm's log, not into the JSON on standard output
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--foreground-scripts=false', '--pack-destination', work]));
  tarball = join(work, info.filename);
  if (readFileSync(join(root, 'package.json'), 'utf8') !== before) throw new Error('package.json is not as it was before npm pack');
  const { scripts: _, ...withoutScripts } = pkg;
  const packed = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json']));
  if (JSON.stringify(packed) !== JSON.stringify(withoutScripts)) {
    const found =
      packed.scripts === undefined ? `fields ${Object.keys(packed).join(', ')}` : `scripts ${Object.keys(packed.scripts).join(', ')}`;
    throw new Error(`the packed package.json is not package.json without "scripts": it has ${found}`);
  }
  const files = info.files.map((f) => f.path);
  packedFiles = files;
  const required = ['LICENSE', 'README.md', 'package.json', 'dist/adapters/generated/core-wasm.inline.js'];
  for (const entry of Object.values(pkg.exports)) {
    if (typeof entry === 'string') continue;
    required.push(entry.types.slice(2), entry.default.slice(2));
  }
  const missing = required.filter((f) => !files.includes(f));
  // the pages the README links (npm links to them) and those they link in turn, the `map
  // --snapshot` example's input and the `--from` example's listing; no declarations for the CLI, which exports nothing. No pictures:
  // npmjs.com shows a README's pictures from the repository package.json names, never from the
  // package, so there they would only weigh (JSR shows them from its package: see below)
  const docs = [...linkedDocuments('README.md', false), 'docs/map-example.json', 'docs/cluster-example.json'];
  required.push(...docs);
  const stray = files.filter(
    (f) =>
      ![...docs, 'LICENSE', 'README.md', 'package.json'].includes(f) &&
      // dist/ holds what scripts/build-dist.mjs writes, nothing a type check of the tests emitted
      (!/^dist\/(adapters|cli)\/.+\.(js|d\.ts)$/.test(f) || /^dist\/cli\/.+\.d\.ts$/.test(f)),
  );
  if (missing.length > 0 || stray.length > 0) {
    throw new Error(`missing: ${missing.join(', ') || '-'}; not for users: ${stray.join(', ') || '-'}`);
  }
  return `${files.length} files, ${(info.size / 1024).toFixed(0)} kB packed`;
});

step("declarations: no maintainers' notes on private members", () => {
  // scripts/build-dist.mjs drops them: users never call those members
  const declarations = run('tar', ['-xzOf', tarball, '--wildcards', 'package/dist/*.d.ts']);
  const noted = declarations.match(/\*\/\n[ \t]*private [^\n]*/g) ?? [];
  if (noted.length > 0) throw new Error(`${noted.length} private members carry a doc comment, e.g. ${noted[0].split('\n')[1].trim()}`);
  return 'none';
});

// scripts/build-dist.mjs writes the JavaScript without comments (users read the doc comments in
// the declarations) but a license's; tsc's removeComments would drop a bundler's annotation too,
// so the sources must have none, or this step says how many went missing. Annotations are counted
// apart from licenses on both sides: a license kept must not make up for an annotation lost.
step('JavaScript: no comments but licenses', () => {
  const unpacked = join(work, 'unpacked');
  mkdirSync(unpacked);
  run('tar', ['-xzf', tarball, '-C', unpacked]);
  const commented = [];
  let licenses = 0;
  let annotations = 0;
  for (const file of packedFiles.filter((f) => f.endsWith('.js'))) {
    const comments = commentsOf(file, readFileSync(join(unpacked, 'package', file), 'utf8'));
    const other = comments.filter((c) => !KEPT_COMMENT.test(c));
    const annotated = comments.filter((c) => ANNOTATION.test(c)).length;
    annotations += annotated;
    licenses += comments.length - other.length - annotated;
    if (other.length > 0) commented.push(`${file} (${other.length}, e.g. ${other[0].split('\n')[0]})`);
  }
  if (commented.length > 0) throw new Error(`${commented.length} JavaScript files carry comments: ${commented.join('; ')}`);
  const annotationsIn = (dir) =>
    readdirSync(join(root, dir), { recursive: true })
      .filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))
      .reduce((n, f) => n + commentsOf(f, readFileSync(join(root, dir, f), 'utf8')).filter((c) => ANNOTATION.test(c)).length, 0);
  const wanted = annotationsIn('adapters') + annotationsIn('cli');
  if (annotations < wanted) {
    throw new Error(
      `the sources carry ${wanted} annotations for bundlers (/*#__PURE__*/, /*@__NO_SIDE_EFFECTS__*/), the JavaScript ${annotations}: the build dropped ${wanted - annotations}`,
    );
  }
  return `${licenses} licenses, ${annotations} annotations for bundlers kept`;
});

// JSR publishes the sources (deno.json "publish"); jsr.io shows the README with its pictures
// from the package's own files (there is no repository to take them from), so they must be in it.
step('JSR (deno publish --dry-run): README.md and the pictures it shows', () => {
  const deno = join(root, 'node_modules', '.bin', 'deno');
  const { stdout, stderr, error } = spawnSync(deno, ['publish', '--dry-run', '--allow-dirty'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    // a dry run takes about half a minute here; one that hangs (resolving npm: packages) fails
    timeout: 300_000,
  });
  // not run (no deno binary) or stopped by the timeout: say why, with what it wrote by then
  if (error !== undefined)
    throw Object.assign(new Error(`${deno} publish --dry-run did not run to its end: ${error.message}`), { stdout, stderr });
  const prefix = `${pathToFileURL(root).href}/`;
  const files = [...`${stdout}${stderr}`.matchAll(/^\s+(file:\S+) \(/gm)].map((m) => m[1].slice(prefix.length));
  if (!/Dry run complete/.test(`${stdout}${stderr}`)) throw Object.assign(new Error('deno publish --dry-run failed'), { stdout, stderr });
  const missing = ['README.md', ...readmePictures()].filter((f) => !files.includes(f));
  if (missing.length > 0) throw new Error(`missing from the JSR package: ${missing.join(', ')}`);
  return `${files.length} files`;
});

step('publint --strict', () => {
  run(process.execPath, [bin('publint', 'src/cli.js'), 'run', tarball, '--strict']);
});

// esm-only: the package is ES modules only. It does not resolve under the legacy node10 resolver,
// and a CommonJS require() of it needs Node 20.19+ (the .cts check below covers TypeScript's side).
step('attw --profile esm-only', () => {
  run(process.execPath, [bin('@arethetypeswrong/cli', 'dist/index.js'), tarball, '--profile', 'esm-only', '--format', 'table-flipped']);
});

step('a fresh app installs the tarball (no prom-client)', () => {
  cpSync(join(root, 'scripts', 'consumers'), app, { recursive: true });
  install(tarball);
  run(process.execPath, ['no-prom-client.mjs'], app);
});

const compilers = [
  // The app's own TypeScript (scripts/consumers/package.json pins 5.0, the oldest we support).
  ['5.0', join(app, 'node_modules', 'typescript', 'bin', 'tsc')],
  [pkg.devDependencies.typescript, bin('typescript', 'bin/tsc')],
  // TypeScript 7, the native compiler, which `npm install typescript` now gives an app.
  ['7', join(app, 'node_modules', 'typescript-7', 'bin', 'tsc')],
];
// Each entry point of "exports" alone, in an app with no DOM lib and no @types/node (types: [],
// lib ES2022 + ESNext.Disposable, which TypeScript 5.2+ has) and skipLibCheck off, so that every
// declaration file the entry reaches is checked: one naming a global that only the DOM lib or
// @types/node declares (WebAssembly.Memory, Buffer, NodeJS.Timeout, …) fails here. An entry is
// checked with only the optional peers the README's Install section says it needs (PEER_TYPES)
// installed; ./kubernetes gets @types/node through client-node, whose own typings import node:https.
const PEER_TYPES = {
  './metrics': [`prom-client@${pkg.devDependencies['prom-client']}`],
  './kubernetes': [`@kubernetes/client-node@${pkg.devDependencies['@kubernetes/client-node']}`, '@types/ws@8.18.2'],
};
/** What every TypeScript check of the app compiles with: an app's strict ESM settings, the package's typings checked too. */
const APP_COMPILER_OPTIONS = { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false };
const specifier = (entry) => (entry === '.' ? pkg.name : `${pkg.name}${entry.slice(1)}`);
function entryCheck(entry) {
  const name = `entry-${entry === '.' ? 'root' : entry.slice(2).replaceAll('/', '-')}`;
  writeFileSync(join(app, `${name}.ts`), `export * from '${specifier(entry)}';\n`);
  writeFileSync(
    join(app, `tsconfig.${name}.json`),
    JSON.stringify({
      compilerOptions: {
        ...APP_COMPILER_OPTIONS,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        lib: ['ES2022', 'ESNext.Disposable'],
        types: [],
      },
      files: [`${name}.ts`],
    }),
  );
  const peers = PEER_TYPES[entry] ?? [];
  return [
    `TypeScript ${pkg.devDependencies.typescript}, ${specifier(entry)} alone, lib ES2022 + ESNext.Disposable, types [], ${peers.length > 0 ? `with ${peers.join(', ')}` : 'no peer installed'}`,
    process.execPath,
    [bin('typescript', 'bin/tsc'), '-p', `tsconfig.${name}.json`],
    app,
  ];
}
const entries = Object.keys(pkg.exports).filter((e) => e !== './package.json');
for (const entry of Object.keys(PEER_TYPES)) {
  if (!entries.includes(entry)) throw new Error(`PEER_TYPES names ${entry}, which package.json "exports" does not have`);
}

// Each declaration file shipped is one that TypeScript reads for an app importing every entry
// point (the files of its program), and none other: a module whose exports are all @internal
// compiles to a bare `export {}` that no entry point imports, and the commands export nothing.
step('declarations: each one shipped is reached from an entry point', () => {
  writeFileSync(join(app, 'every-entry.ts'), entries.map((e) => `export * from '${specifier(e)}';\n`).join(''));
  writeFileSync(
    join(app, 'tsconfig.every-entry.json'),
    JSON.stringify({ compilerOptions: { ...APP_COMPILER_OPTIONS, noEmit: true, lib: ['ES2022'], types: [] }, files: ['every-entry.ts'] }),
  );
  const listed = run(process.execPath, [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.every-entry.json', '--listFilesOnly'], app);
  const prefix = `node_modules/${pkg.name}/`;
  const reached = new Set(
    listed
      .split('\n')
      .map((f) => f.replaceAll('\\', '/'))
      .filter((f) => f.includes(`/${prefix}`))
      .map((f) => f.slice(f.lastIndexOf(`/${prefix}`) + prefix.length + 1)),
  );
  const shipped = packedFiles.filter((f) => f.endsWith('.d.ts'));
  const unreached = shipped.filter((f) => !reached.has(f));
  if (shipped.length === 0 || unreached.length > 0) {
    throw new Error(`${unreached.length} of ${shipped.length} declaration files no entry point reaches: ${unreached.join(', ') || '-'}`);
  }
  return `${shipped.length} declaration files`;
});

// The doc comments are what an editor shows of the package: each export of an entry point that
// its source documents is documented in the declarations shipped (as TypeScript reads them, from
// the app), so that no build step strips them with the JavaScript's comments.
step('declarations: each documented export keeps its doc comment', () => {
  // the sources of the entry points: dist/adapters/x.d.ts is compiled from adapters/x.ts
  const sourceOf = (entry) =>
    join(
      root,
      pkg.exports[entry].types
        .slice(2)
        .replace(/^dist\//, '')
        .replace(/\.d\.ts$/, '.ts'),
    );
  const { options } = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} },
  );
  const sources = ts.createProgram(entries.map(sourceOf), { ...options, noEmit: true });
  const appOptions = ts.convertCompilerOptionsFromJson({ ...APP_COMPILER_OPTIONS, noEmit: true, lib: ['ES2022'], types: [] }, app).options;
  const shipped = ts.createProgram([join(app, 'every-entry.ts')], appOptions);
  const imports = shipped.getSourceFile(join(app, 'every-entry.ts')).statements;
  let checked = 0;
  const lost = [];
  for (const entry of entries) {
    const want = docsOfExports(sources, sources.getTypeChecker().getSymbolAtLocation(sources.getSourceFile(sourceOf(entry))));
    const from = imports.find((s) => s.moduleSpecifier.text === specifier(entry)).moduleSpecifier;
    const have = docsOfExports(shipped, shipped.getTypeChecker().getSymbolAtLocation(from));
    for (const [name, doc] of want) {
      if (doc === '' || !have.has(name)) continue; // undocumented, or @internal and so not shipped
      checked += 1;
      if (have.get(name) === '') lost.push(`${specifier(entry)} ${name}`);
    }
  }
  if (checked === 0 || lost.length > 0)
    throw new Error(`${lost.length} of ${checked} documented exports have no doc comment: ${lost.join(', ') || '-'}`);
  return `${checked} documented exports`;
});

// Each JavaScript file shipped is one that an entry point or a command loads (esbuild follows
// their imports, dynamic ones too): a module that only has types compiles to a bare `export {}`
// that nothing imports, and "exports" lets no one else load it.
step('JavaScript: each module shipped is reached from an entry point or a command', () => {
  const installed = join(app, 'node_modules', pkg.name);
  const starts = [...entries.map((e) => pkg.exports[e].default), ...Object.values(pkg.bin ?? {})];
  const { metafile } = esbuild.buildSync({
    entryPoints: starts.map((f) => join(installed, f)),
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    metafile: true,
    write: false,
    outdir: join(work, 'reach'),
    absWorkingDir: installed, // so that metafile.inputs are named as npm lists the files
    logLevel: 'error',
  });
  const reached = new Set(Object.keys(metafile.inputs));
  const shipped = packedFiles.filter((f) => f.endsWith('.js'));
  const unreached = shipped.filter((f) => !reached.has(f));
  if (unreached.length > 0)
    throw new Error(`${unreached.length} of ${shipped.length} JavaScript files nothing loads: ${unreached.join(', ')}`);
  return `${shipped.length} JavaScript files`;
});

// Before prom-client is installed: an unresolved import of it in a declaration fails here, while
// an app with skipLibCheck on would silently get `any` in its place.
await stepsInParallel([
  ...compilers.map(([ts, tsc]) => [
    `TypeScript ${ts}, no prom-client installed, lib ES2022 only`,
    process.execPath,
    [tsc, '-p', 'tsconfig.no-prom-client.json'],
    app,
  ]),
  ...entries.filter((e) => PEER_TYPES[e] === undefined).map(entryCheck),
]);

step('with prom-client: ESM', () => {
  install(`prom-client@${pkg.devDependencies['prom-client']}`);
  run(process.execPath, ['esm.mjs'], app);
});

step('CommonJS require()', () => {
  run(process.execPath, ['cjs.cjs'], app);
});

// A bundler drops what an app does not use, module by module, where package.json's "sideEffects"
// lets it: every module but the few that act when loaded (the core's instantiation, the
// registration of prom-client, the kubernetes entry's check before client-node loads, the
// commands). Each bundle runs from a directory without node_modules.
step('bundled (esbuild): Range alone leaves the allocators out; ipallocator/metrics imported for its effect stays', () => {
  const out = join(work, 'bundles');
  const { metafile } = esbuild.buildSync({
    entryPoints: [join(app, 'bundle-range.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    metafile: true,
    outfile: join(out, 'range.mjs'),
    logLevel: 'error',
  });
  // the modules whose code the bundle holds (metafile.inputs lists every module read, dropped ones too)
  const inputs = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs).filter((f) => o.inputs[f].bytesInOutput > 0));
  const unused = inputs.filter((f) =>
    /dist\/adapters\/(allocator|meta-allocator|memory-store|dual-stack(-arguments)?|reference-allocator)\.js$/.test(f),
  );
  if (unused.length > 0) throw new Error(`a bundle of Range alone holds ${unused.join(', ')}`);
  esbuild.buildSync({
    entryPoints: [join(app, 'bundle-metrics.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    // prom-client is CommonJS and requires Node's modules: an ESM bundle gives it a require()
    banner: {
      js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);",
    },
    outfile: join(out, 'metrics.mjs'),
    logLevel: 'error',
  });
  run(process.execPath, ['range.mjs'], out);
  run(process.execPath, ['metrics.mjs'], out);
  return `${inputs.length} modules in the Range bundle`;
});

for (const name of Object.keys(pkg.bin ?? {})) {
  step(`the ${name} command installed by npm runs (--help)`, () => {
    run(join(app, 'node_modules', '.bin', name), ['--help'], app);
    const version = run(join(app, 'node_modules', '.bin', name), ['--version'], app).trim();
    if (version !== pkg.version) throw new Error(`--version printed ${version}, the package is ${pkg.version}`);
  });
}

step("the README's map example on the snapshot that ships with the package", () => {
  const out = run(
    join(app, 'node_modules', '.bin', 'ipallocator'),
    ['map', '--snapshot', 'node_modules/ipallocator/docs/map-example.json', '--out', 'map.svg'],
    app,
  );
  if (!/^wrote "map\.svg": 10\.96\.0\.0\/16, /.test(out)) throw new Error(`unexpected output: ${out}`);
  return out.trim();
});

step("the README's status --from example on the listing that ships with the package", () => {
  const example = 'node_modules/ipallocator/docs/cluster-example.json';
  const out = run(join(app, 'node_modules', '.bin', 'ipallocator'), ['status', '--from', example], app);
  if (!out.startsWith(`file ${example}: 2 ServiceCIDRs, 27 IPAddresses\n`)) throw new Error(`unexpected output: ${out}`);
  return out.split('\n')[0];
});

const typeChecks = [];
for (const [ts, tsc] of compilers) {
  for (const mode of ['node16', 'nodenext', 'bundler']) {
    typeChecks.push([`TypeScript ${ts}, ${mode}, lib ES2022 only`, process.execPath, [tsc, '-p', `tsconfig.${mode}.json`], app]);
  }
}
typeChecks.push([
  `TypeScript ${pkg.devDependencies.typescript}, a .cts file require()s the package`,
  process.execPath,
  [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.cjs.json'],
  app,
]);
await stepsInParallel(typeChecks);

step('README and docs/ examples as ESM and as CommonJS, type-checked', () => {
  const blocks = documentedExamples();
  // console.assert only prints: make a failed assertion fail the example.
  const strict =
    "console.assert = (ok?: unknown, ...data: unknown[]) => { if (!ok) throw new Error('assertion failed: ' + data.join(' ')); };\n";
  const files = [];
  blocks.forEach((code, i) => {
    const imports = [...code.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+('[^']+');\n/gm)];
    const body = code.replace(/^import\s+[^;]+;\n/gm, '');
    writeFileSync(join(app, `readme-${i}.mts`), `${imports.map((m) => m[0]).join('')}${strict}${body}\nexport {};\n`);
    // `import m = require()` (not `const m = require()`) so that TypeScript types the CommonJS side too.
    const requires = imports
      .map((m, k) => {
        // the types an example imports are aliases of the module's (`type Store = m0.Store`)
        const types = [...m[1].matchAll(/\btype\s+(\w+)/g)].map((t) => `type ${t[1]} = m${k}.${t[1]};\n`).join('');
        return `import m${k} = require(${m[2]});\n${types}const {${m[1].replace(/\btype\s+\w+\s*,?/g, '')}} = m${k};\n`;
      })
      .join('');
    writeFileSync(
      join(app, `readme-${i}.cts`),
      `${requires}${strict}(async () => {\n${body}\n})().catch((e) => { console.error(e); process.exitCode = 1; });\n`,
    );
    files.push(`readme-${i}.mts`, `readme-${i}.cts`);
  });
  writeFileSync(
    join(app, 'tsconfig.readme.json'),
    JSON.stringify({
      // as a Node app's tsconfig has it: lib ES2022 without the DOM lib, whose console.assert
      // takes any message, where @types/node's takes a string only
      compilerOptions: { ...APP_COMPILER_OPTIONS, lib: ['ES2022'], types: ['node'], outDir: 'out' },
      files,
    }),
  );
  run(process.execPath, [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.readme.json'], app);
  for (const f of readdirSync(join(app, 'out')).filter((f) => /\.(mjs|cjs)$/.test(f))) {
    run(process.execPath, [join('out', f)], app);
  }
  return `${blocks.length} examples`;
});

// Last, as installing client-node changes the app the steps above check.
for (const [entry, peers] of Object.entries(PEER_TYPES)) {
  step(`install ${peers.join(', ')} (for ${specifier(entry)})`, () => install(...peers));
  await stepsInParallel([entryCheck(entry)]);
}

rmSync(work, { recursive: true, force: true });
console.log(failed === 0 ? 'package checks: all passed' : `package checks: ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
