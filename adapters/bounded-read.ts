// The one bounded read of a file named on a command line or in the environment (a kubeconfig,
// a Range snapshot): Node only, imported by ipallocator/kubernetes and the command line, never by
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

/**
 * A file's text as UTF-8, read once and at most `maxBytes`: a file holding more throws
 * `tooLarge()`, one whose size says so before any of it is read. Only a regular file is read:
 * anything else throws `notAFile(what)`, `what` saying what it is ("a named pipe (FIFO)", "a
 * character device", …: notRegularFile) — a pipe may have nothing to read, ever, and a device
 * such as /dev/zero no end. Other failures (ENOENT, EACCES) are Node's, naming the file.
 */
export function readFileBounded(path: string, maxBytes: number, tooLarge: () => Error, notAFile: (what: string) => Error): string {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notAFile(notRegularFile(stats));
    if (stats.size > maxBytes) throw tooLarge();
    // the size is not trusted alone (a file may grow while it is read): the count read is checked as it grows
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, maxBytes + 1));
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, for a message: "a directory", "a named pipe (FIFO)", … */
export function notRegularFile(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}
