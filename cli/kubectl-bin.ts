#!/usr/bin/env node
// The executable behind `kubectl-ipallocator` (package.json "bin"): the command as a kubectl
// plugin, named so in its help and errors. A file of its own, since a runtime that runs a bin by
// the path of its file (Deno's npm:ipallocator/kubectl-ipallocator and `deno install`, npm's
// Windows shims) leaves the name it was installed under out of process.argv.
import { runExecutable } from './executable.ts';

await runExecutable('kubectl ipallocator');
