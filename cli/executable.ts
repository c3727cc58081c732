// What the executables behind `ipallocator` (bin.ts) and `kubectl-ipallocator` (kubectl-bin.ts)
// do: run() with the process's streams and signals, then end the process with its exit code.
import process from 'node:process';
// main.ts loads no WebAssembly: help and the version answer without it (node --jitless), and a
// command that needs it says so in one line (main.ts loadCore)
import { run } from './main.ts';
import { STOP_SIGNALS, type StopSignal } from './errors.ts';

// Output that cannot be written never ends in a stack trace. A reader that stops early
// (`ipallocator map … | head`) no longer wants it: what is left goes nowhere, and the command
// keeps its own exit code (`check … | head` under pipefail still reports the problems it found).
// Any other failure to write the output (a full disk) is an error: one line, exit 2. Node reports
// a failed write as an error event on the stream, Deno by throwing from write(): both come here.
let outputFailed: Error | undefined;
const broken = new Set<NodeJS.WriteStream>();
function writeFailed(stream: NodeJS.WriteStream, e: unknown): void {
  if (broken.has(stream)) return; // later writes to the broken stream fail too: said once
  broken.add(stream);
  const readerGone = (e as { code?: unknown }).code === 'EPIPE' || (e as { name?: unknown }).name === 'BrokenPipe';
  if (!readerGone && stream === process.stdout) outputFailed = e instanceof Error ? e : new Error(String(e));
}
/** The stream as run() writes to it, with a failed write reported to writeFailed. */
function guarded(stream: NodeJS.WriteStream): { write(text: string): boolean; readonly isTTY: boolean } {
  stream.on('error', (e) => writeFailed(stream, e));
  return {
    get isTTY() {
      return stream.isTTY === true;
    },
    write(text: string) {
      if (broken.has(stream)) return false;
      try {
        return stream.write(text);
      } catch (e) {
        writeFailed(stream, e);
        return false;
      }
    },
  };
}

// Ctrl-C, SIGTERM (a kill, a Job past its deadline, `timeout`) or SIGHUP while check --fix deletes:
// the first stops it after the leak under way, so that its report names what was deleted; with the
// listeners gone, a second ends the process as that signal always does.
function onInterrupt(stop: (signal: StopSignal) => void): () => void {
  const listeners = new Map<StopSignal, () => void>();
  const release = () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
  for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) {
    const listener = () => {
      release();
      stop(signal);
    };
    listeners.set(signal, listener);
    process.on(signal, listener);
  }
  return release;
}

/** Runs the command named `prog` in its messages ('ipallocator', 'kubectl ipallocator') on process.argv, then exits. */
export async function runExecutable(prog: string): Promise<never> {
  const stdout = guarded(process.stdout);
  const stderr = guarded(process.stderr);
  const code = await run(process.argv.slice(2), { stdout, stderr, stdin: process.stdin, prog, onInterrupt });
  // The command is done: end now, once the output is written, rather than when the HTTP layer lets
  // go of a request that was aborted (undici keeps a connection whose TLS handshake never finished
  // until its own connect timeout, 10 s later).
  await flushed(process.stdout);
  if (outputFailed !== undefined) stderr.write(`${prog}: cannot write the output: ${outputFailed.message}\n`);
  await flushed(process.stderr);
  process.exit(outputFailed !== undefined ? 2 : code);
}

/** Resolves once what was written to `stream` has gone (or could not go). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (broken.has(stream)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    try {
      stream.write('', () => resolve());
    } catch {
      resolve();
    }
  });
}
