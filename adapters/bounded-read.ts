// The one bounded read of a file named on a command line or in the environment (a kubeconfig,
// a Range snapshot): Node only, imported by ipallocator/kubernetes and the command line, never by
// the runtime-neutral entry points.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** How much one readSync asks for: large enough that a bound of 128 MiB is a hundred-odd calls. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * A file's text as UTF-8, read once (a pipe has nothing left for a second read) and at most
 * `maxBytes`: a file holding more throws `tooLarge()`. A regular file whose size says so is
 * refused before any of it is read; the size alone is not trusted, as a device or a pipe reports
 * 0 and may never end (/dev/zero, `yes |`), so the count read is checked as it grows. Other
 * failures (ENOENT, EISDIR) are Node's, naming the file.
 */
export function readFileBounded(path: string, maxBytes: number, tooLarge: () => Error): string {
  const fd = openSync(path, 'r');
  try {
    if (fstatSync(fd).size > maxBytes) throw tooLarge();
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
