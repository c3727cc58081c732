#!/usr/bin/env node
// The executable behind `ipallocator` and `kubectl-ipallocator` (package.json "bin").
import { basename } from 'node:path';
import process from 'node:process';
import { run } from './main.ts';

// A reader that stops early (`ipallocator map … | head`) no longer wants the output: what is left
// of it goes nowhere, without Node's stack trace for the failed write, and the command still ends
// with its own exit code (`check … | head` under pipefail still reports the problems it found).
for (const stream of [process.stdout, process.stderr]) {
  let readerGone = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || readerGone) {
      readerGone = true; // later writes to the closed stream fail too: nothing to report
      return;
    }
    throw e;
  });
}

const invokedAs = basename(process.argv[1] ?? '');
const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  prog: invokedAs.startsWith('kubectl-') ? 'kubectl ipallocator' : 'ipallocator',
});
// The command is done: end now, once the output is written, rather than when the HTTP layer lets
// go of a request that was aborted (undici keeps a connection whose TLS handshake never finished
// until its own connect timeout, 10 s later).
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
process.exit(code);
