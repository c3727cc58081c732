// A kubeconfig's token-files, read before client-node parses the kubeconfig: client-node reads
// each as it parses, whole, synchronously and relative to the working directory. Here each is
// read once and bounded (a device, a directory, a named pipe nothing writes to, a file over 1 MiB
// are refused), a relative one from the kubeconfig's folder as kubectl reads it, and every failure
// is TokenFileError naming the file and the user, never the content. config.ts loadKubeconfigText
// hands the tokens read to client-node as the users' tokens.
import { isAbsolute, join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { readFileBounded } from '../bounded-read.ts';
import { notTextKind } from './user-checks.ts';

/**
 * The most a token-file may hold: 1 MiB. A token is a few KiB (a service account's JWT, an OIDC
 * token with its groups), and a request whose headers pass 1 MiB is refused by the API server
 * (Go's default MaxHeaderBytes); a large file named by mistake would otherwise be read whole
 * into memory and sent.
 */
export const TOKEN_FILE_MAX_BYTES = 1024 * 1024;

/**
 * A kubeconfig user's token-file that cannot be read, or is not: it holds more than
 * TOKEN_FILE_MAX_BYTES, or is no regular file (a device such as /dev/zero, a directory, a named
 * pipe nothing writes to). Its message names the token-file and the user, never the content.
 */
export class TokenFileError extends Error {
  override name = 'TokenFileError';
  constructor(
    /** The token-file's path; undefined when it is no text. */
    readonly path: string | undefined,
    readonly user: string,
    /** Why, as the end of a sentence naming the file: "is not read: it is a directory, not a regular file". */
    reason: string,
    /** The key the kubeconfig names it by: client-node's `token-file`, or kubectl's `tokenFile`. */
    field: TokenFileKey = 'token-file',
  ) {
    super(`the ${field} ${path === undefined ? '' : `${JSON.stringify(path)} `}of user ${JSON.stringify(user)} ${reason}`);
  }
}

/**
 * A token-file's text, read once and at most TOKEN_FILE_MAX_BYTES (readFileBounded): a device
 * has no end, and a named pipe nothing writes to is waited for 5 s, not for ever — client-node
 * reads it synchronously, and the event loop, every timer of the caller's among them, would stop
 * with it. Every failure is TokenFileError naming the file and `user`.
 */
function readTokenFile(path: string, user: string, field: TokenFileKey): string {
  try {
    return readFileBounded(
      path,
      TOKEN_FILE_MAX_BYTES,
      () => new TokenFileError(path, user, 'is not read: it holds more than 1 MiB (a token is a few KiB)', field),
      (what) => new TokenFileError(path, user, `is not read: it is ${what}, not a regular file`, field),
    );
  } catch (e) {
    if (e instanceof TokenFileError) throw e;
    // Node's ENOENT, EACCES: their message names the path, not the user
    throw new TokenFileError(path, user, `cannot be read (${e instanceof Error ? e.message : String(e)})`, field);
  }
}

/**
 * The keys a kubeconfig user names its token file by: kubectl's own, `tokenFile` (client-go's
 * clientcmd v1 AuthInfo), which client-node does not read, and client-node's `token-file`, which
 * kubectl does not read. kubectl's is read first when a user has both.
 */
const TOKEN_FILE_KEYS = ['tokenFile', 'token-file'] as const;
type TokenFileKey = (typeof TOKEN_FILE_KEYS)[number];

/**
 * The token-files of a kubeconfig's users read here, before client-node parses the text — named
 * `token-file` or, as kubectl names it, `tokenFile` (TOKEN_FILE_KEYS) —: the
 * text, as JSON (which is YAML), without the token-file of each user whose token client-node
 * would read from one (a user with a non-empty token keeps it, as client-node keeps it), and the
 * tokens read, by the user's index in the file's list. A relative token-file is read from
 * `folder`. Undefined when no user names a token-file, or the text is not one YAML mapping
 * (client-node's parse then says what is wrong). Parsed as client-node parses it (js-yaml,
 * through loadAllYaml). An alias repeats a node without repeating its text, and JSON writes each
 * repeat out: a text whose aliases would write more nodes than it has characters (no kubeconfig
 * repeats that much; a crafted one repeats exponentially) is refused.
 */
export function readTokenFiles(text: string, folder: string): { text: string; tokens: Map<number, string> } | undefined {
  if (!TOKEN_FILE_KEYS.some((key) => text.includes(key))) return undefined;
  let docs: unknown[];
  try {
    docs = loadAllYaml(text);
  } catch {
    return undefined;
  }
  const doc = docs.length === 1 ? docs[0] : undefined;
  const users = (doc as { users?: unknown } | undefined)?.users;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(users)) return undefined;
  const tokens = new Map<number, string>();
  const copy = users.map((entry: unknown, i) => {
    const user = (entry as { user?: unknown } | null)?.user as Record<string, unknown> | null | undefined;
    if (typeof user !== 'object' || user === null) return entry;
    const field = TOKEN_FILE_KEYS.find((key) => user[key]);
    // client-node reads the file only when the token is empty (config_types' findToken); kubectl
    // likewise ("if both token and tokenFile are present, token takes precedence")
    if (field === undefined || user['token']) return entry;
    const tokenFile = user[field];
    const name = (entry as { name?: unknown }).name;
    // client-node would read a number as a file descriptor (1: the process's own stdout)
    if (typeof tokenFile !== 'string') {
      throw new TokenFileError(undefined, String(name ?? ''), `is ${notTextKind(tokenFile)}, not text, and is not read`, field);
    }
    tokens.set(i, readTokenFile(isAbsolute(tokenFile) ? tokenFile : join(folder, tokenFile), String(name ?? ''), field));
    const { 'token-file': _read, tokenFile: _kubectls, ...rest } = user;
    return { ...(entry as object), user: rest };
  });
  if (tokens.size === 0) return undefined;
  let nodes = 0;
  const json = JSON.stringify({ ...doc, users: copy }, (_key, value: unknown) => {
    if (++nodes > text.length) {
      throw new Error('its YAML aliases repeat more of it than a kubeconfig holds (a crafted file)');
    }
    return value;
  });
  return { text: json, tokens };
}
