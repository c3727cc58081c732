#!/usr/bin/env node
// The executable behind `ipallocator` and `kubectl-ipallocator` (package.json "bin").
import { basename } from 'node:path';
import process from 'node:process';
import { run } from './main.ts';

const invokedAs = basename(process.argv[1] ?? '');
process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  prog: invokedAs.startsWith('kubectl-') ? 'kubectl ipallocator' : 'ipallocator',
});
