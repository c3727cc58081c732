// Why a file could not be opened, read or written, in words: the one wording of fs's failures for
// every file the package reads or writes at an operator's word — a kubeconfig and the certificate,
// key and snapshot files it or a command line names, and the file the command line writes. fs's
// own message (`EACCES: permission denied, open '/home/dev/.kube/config'`) is the system call's,
// written for a programmer; a message here names the file itself, then says why in a few words
// with the code last, which is what a search or a bug report needs.
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { quoteText } from './quote.ts';

/** fs's error codes for a file that cannot be opened, read or written, in a few words. */
const FS_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'its name is too long',
  ENXIO: 'no such device or address (a socket, or a device without its driver)',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file would grow past the largest size allowed',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EIO: 'an input/output error',
  EBUSY: 'the file is busy',
  ETXTBSY: 'the file is busy',
};

/**
 * Why fs failed on a file, as the end of a sentence that names the file:
 * `permission denied (EACCES)`; for ENOTDIR the part of the path that is no directory, when it
 * can be found (`"/srv/kube", a part of its path, is not a directory (ENOTDIR)`). A code without
 * words above is said with fs's own description, without the path it quotes
 * (`operation canceled (ECANCELED)`), or by itself; a NUL in the path, which Node refuses before
 * any system call, as `a file name cannot hold a NUL character (\x00) (ERR_INVALID_ARG_VALUE)`;
 * any other failure that is no system error with its message, without the value it quotes
 * (`Received …`: the path the sentence names), the code last. Undefined when `e` carries no code
 * (no fs failure).
 * @internal
 */
export function fsFailure(e: unknown): string | undefined {
  const { code, message, path } = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown; path?: unknown };
  if (typeof code !== 'string' || code === '') return undefined;
  if (code === 'ENOTDIR' && typeof path === 'string') {
    const part = notADirectoryOf(path);
    if (part !== undefined) return `${quoteText(part)}, a part of its path, is not a directory (ENOTDIR)`;
  }
  if (Object.hasOwn(FS_FAILURES, code)) return `${FS_FAILURES[code]} (${code})`;
  if (typeof message !== 'string' || message === '') return code;
  // a system error's message: "ECANCELED: operation canceled, read" or "…, open '/path'"
  const prefix = `${code}: `;
  if (!message.startsWith(prefix)) {
    // no system error: Node refused the path before any call. Its message quotes the path
    // ("… without null bytes. Received '/a\x00b'"), which the sentence names already.
    if (/\bnull bytes\b/.test(message)) return `a file name cannot hold a NUL character (\\x00) (${code})`;
    return `${message.replace(/\.? Received [\s\S]*$/, '')} (${code})`;
  }
  const described = /^([^,']+)(?:,|$)/.exec(message.slice(prefix.length))?.[1]?.trim();
  return described ? `${described} (${code})` : code;
}

/**
 * The part of `path` that exists and is no directory (ENOTDIR's cause), looked for from the file
 * up; undefined when the first part that exists is a directory (the path changed since).
 */
function notADirectoryOf(path: string): string | undefined {
  for (let part = dirname(path); ; part = dirname(part)) {
    try {
      const stats = statSync(part, { throwIfNoEntry: false });
      if (stats !== undefined) return stats.isDirectory() ? undefined : part;
    } catch {
      // ENOTDIR again: the part is further up
    }
    if (dirname(part) === part) return undefined;
  }
}
