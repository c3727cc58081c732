#!/usr/bin/env node
// The package.json that `npm pack` and `npm publish` put in the tarball: this one without "scripts".
//   node scripts/pack-manifest.mjs strip     (prepack, after the build)
//   node scripts/pack-manifest.mjs restore   (postpack)
//
// Every script of package.json is for a checkout: each runs scripts/, bench/ or a development
// tool, none of which ships. In the tarball one of them does harm: npm 11 lists `prepare` among
// the install scripts of a package installed from a file or a URL (not from the registry) and
// warns that it is "not yet covered by allowScripts", for a build that could not run there. npm
// packs package.json as it is on disk and has no setting that leaves a field out, so prepack
// writes it without "scripts" and postpack puts the file back, byte for byte (the pattern of
// pinst, which does the same for postinstall). In a checkout `prepare` stays: `npm install` builds.
//
// npm packs by reading package.json anew after prepack, so it finds no `prepare` to run there:
// prepack builds first (package.json "prepack"). `npm publish` reads the manifest it sends to the
// registry again after postpack, so the registry's copy keeps the scripts; npm runs none of them
// for a package installed from the registry.
//
// The original waits in build/ (ignored by git, not packed). A pack that failed between the two
// steps leaves it there: `strip` then refuses, and `restore` puts it back.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const saved = join(root, 'build', 'package.json.before-pack');

const [command] = process.argv.slice(2);
if (command === 'strip') {
  if (existsSync(saved)) {
    console.error(`pack-manifest: ${saved} is left from a pack that did not finish: run 'node scripts/pack-manifest.mjs restore' first`);
    process.exit(1);
  }
  const text = readFileSync(manifest, 'utf8');
  const { scripts: _, ...packed } = JSON.parse(text);
  mkdirSync(dirname(saved), { recursive: true });
  writeFileSync(saved, text);
  writeFileSync(manifest, `${JSON.stringify(packed, null, 2)}\n`);
} else if (command === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
} else {
  console.error('usage: node scripts/pack-manifest.mjs strip|restore');
  process.exit(2);
}
