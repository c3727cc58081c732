#!/usr/bin/env node
// The executable behind `ipallocator` and `kubectl-ipallocator` (package.json "bin").
import { basename } from 'node:path';
import process from 'node:process';
import { run } from './main.ts';

// Output that cannot be written never ends in Node's stack trace. A reader that stops early
// (`ipallocator map … | head`) no longer wants it: what is left goes nowhere, and the command
// keeps its own exit code (`check … | head` under pipefail still reports the problems it found).
// Any other failure to write the output (a full disk) is an error: one line, exit 2.
let outputFailed: Error | undefined;
for (const stream of [process.stdout, process.stderr]) {
  let broken = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (broken) return; // later writes to the broken stream fail too: said once
    broken = true;
    if (e.code !== 'EPIPE' && stream === process.stdout) outputFailed = e;
  });
}

const prog = basename(process.argv[1] ?? '').startsWith('kubectl-') ? 'kubectl ipallocator' : 'ipallocator';
const code = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, prog });
// The command is done: end now, once the output is written, rather than when the HTTP layer lets
// go of a request that was aborted (undici keeps a connection whose TLS handshake never finished
// until its own connect timeout, 10 s later).
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
if (outputFailed !== undefined) process.stderr.write(`${prog}: cannot write the output: ${outputFailed.message}\n`);
await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
process.exit(outputFailed !== undefined ? 2 : code);
