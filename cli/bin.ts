#!/usr/bin/env node
// The executable behind `ipallocator` (package.json "bin"). Run through a link or a copy named
// kubectl-ipallocator, it is the kubectl plugin, as kubectl-bin.ts is.
import { basename } from 'node:path';
import process from 'node:process';
import { runExecutable } from './executable.ts';

await runExecutable(basename(process.argv[1] ?? '').startsWith('kubectl-') ? 'kubectl ipallocator' : 'ipallocator');
