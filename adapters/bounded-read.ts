// The one bounded read of a file named on a command line, in the environment or in a kubeconfig
// (a kubeconfig, a user's token-file, a Range snapshot): Node only, imported by ipallocator/kubernetes and the command line, never by
// the runtime-neutral entry points.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** How much one readSync asks for: large enough that a bound of 128 MiB is a hundred-odd calls. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Opened without blocking: opening a named pipe (FIFO) for reading otherwise waits until
 * something opens it for writing, for ever when nothing does, before fstat can say what it is.
 * O_NONBLOCK is absent on Windows, where opening a file does not wait.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** How long a pipe is waited for when nothing has written to it yet (`--kubeconfig <(…)` writes at once). */
const PIPE_WAIT_MS = 5000;

/** Blocks the thread for `ms` (the reads here are synchronous; a pipe's writer runs elsewhere). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A file's text as UTF-8, read once and at most `maxBytes`: a file holding more throws
 * `tooLarge()`, one whose size says so before any of it is read. A regular file or a pipe is
 * read (`--kubeconfig <(vault read …)`); anything else throws `notAFile(what)`, `what` saying
 * what it is ("a character device", "a directory", …: notRegularFile), as a device such as
 * /dev/zero has no end. A named pipe nothing writes to within PIPE_WAIT_MS throws
 * `notAFile("a named pipe (FIFO) nothing wrote to within 5 s")` instead of waiting for ever.
 * Other failures (ENOENT, EACCES) are Node's, naming the file.
 * @internal
 */
export function readFileBounded(path: string, maxBytes: number, tooLarge: () => Error, notAFile: (what: string) => Error): string {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const stats = fstatSync(fd);
    const pipe = stats.isFIFO();
    if (!stats.isFile() && !pipe) throw notAFile(notRegularFile(stats));
    if (stats.size > maxBytes) throw tooLarge();
    // the size is not trusted alone (a file may grow while it is read): the count read is checked as it grows
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, maxBytes + 1));
    // Opened without blocking, a pipe reads as ended (0) while no writer has it open and fails
    // with EAGAIN while its writer has written nothing more yet: both are waited out, the first
    // only until a writer shows up or PIPE_WAIT_MS have passed.
    const deadline = Date.now() + PIPE_WAIT_MS;
    let writer = false;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch (e) {
        if (!pipe || (e as { code?: unknown }).code !== 'EAGAIN') throw e;
        writer = true;
        pause(5);
        continue;
      }
      if (n === 0) {
        if (!pipe || writer) break;
        if (Date.now() > deadline) throw notAFile(`a named pipe (FIFO) nothing wrote to within ${PIPE_WAIT_MS / 1000} s`);
        pause(5);
        continue;
      }
      writer = true;
      total += n;
      if (total > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, for a message: "a directory", "a named pipe (FIFO)", … @internal */
export function notRegularFile(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}
