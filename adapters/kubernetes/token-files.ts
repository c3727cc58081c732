// A kubeconfig's token-files, taken out of its text before client-node parses it: client-node reads
// each as it parses, whole, synchronously and relative to the working directory, and never again,
// every user's. Here each is read bounded (a device, a directory, a named pipe nothing writes to, a
// file over 1 MiB are refused), a relative one from the kubeconfig's folder as kubectl reads it,
// and every failure is TokenFileError naming the file and the user, never the content. As kubectl,
// only the user in use's is read as the kubeconfig loads (readTokenFileInUse), and none for an
// http:// server; another at its first request, if any. config.ts loadKubeconfigText hands each
// to client-node as the user's token, which is read again from the file as client-go reads it
// (TokenFileSource): a token that rotates (a projected service-account token, one vault-agent
// writes) is picked up by a long-running store.
import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { notRegularFile, readFileBounded } from '../bounded-read.ts';
import { fsFailure } from '../fs-failure.ts';
import { quoteText, showUnseen } from '../quote.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { documentText, notTextKind } from './kubeconfig-shape.ts';
import { isPlainHttp } from './plain-http.ts';

/**
 * The most a token-file may hold: 1 MiB. A token is a few KiB (a service account's JWT, an OIDC
 * token with its groups), and a request whose headers pass 1 MiB is refused by the API server
 * (Go's default MaxHeaderBytes); a large file named by mistake would otherwise be read whole
 * into memory and sent.
 * @internal
 */
export const TOKEN_FILE_MAX_BYTES = 1024 * 1024;

/**
 * A kubeconfig user's token-file that cannot be read, or is not: it holds more than
 * TOKEN_FILE_MAX_BYTES, or is no regular file (a device such as /dev/zero, a directory, a named
 * pipe nothing writes to). Its message names the token-file and the user, never the content.
 * @internal
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
    super(`the ${field} ${path === undefined ? '' : `${quoteText(path)} `}of user ${quoteText(user)} ${reason}`);
  }
}

/**
 * A token-file's token, read once and at most TOKEN_FILE_MAX_BYTES (readFileBounded): a device
 * has no end, and a named pipe nothing writes to is waited for 5 s, not for ever — client-node
 * reads it synchronously, and the event loop, every timer of the caller's among them, would stop
 * with it. Without the whitespace around it, as client-go reads it (strings.TrimSpace): a file
 * written by `echo` ends in a line break, which client-node 1.x's node-fetch would refuse in the
 * header. Every failure is TokenFileError naming the file and `user`.
 */
function readTokenFile(path: string, user: string, field: TokenFileKey): string {
  try {
    return readFileBounded(
      path,
      TOKEN_FILE_MAX_BYTES,
      () => new TokenFileError(path, user, 'is not read: it holds more than 1 MiB (a token is a few KiB)', field),
      (what) => new TokenFileError(path, user, `is not read: it is ${what}, not a regular file`, field),
    ).trim();
  } catch (e) {
    if (e instanceof TokenFileError) throw e;
    throw new TokenFileError(path, user, cannotBeRead(e), field);
  }
}

/**
 * Why a token-file could not be read, as the end of the sentence TokenFileError writes: fs's
 * failure in words (fs-failure.ts), `cannot be read: no such file or directory (ENOENT)`, not fs's
 * message, which names the path again as it is. Anything else is said with its message, what a
 * reader could not see in it escaped.
 */
function cannotBeRead(e: unknown): string {
  const why = fsFailure(e);
  return why === undefined ? `cannot be read (${showUnseen(e instanceof Error ? e.message : String(e))})` : `cannot be read: ${why}`;
}

/**
 * How old a token read from a token-file may be before the file is read again: a minute less
 * 10 s, as client-go's (transport/token_source.go: NewCachedFileTokenSource reads the file for a
 * token that expires a minute after, and its cachingTokenSource reads again 10 s, its leeway,
 * before that). The kubelet rewrites a projected service-account token at 80 % of its lifetime
 * (10 minutes by default): a minute is well inside what is left.
 */
const TOKEN_FILE_REREAD_MS = 60_000 - 10_000;

/**
 * A user's token-file, read again as client-go reads it (transport/token_source.go,
 * NewCachedFileTokenSource): when the token was read TOKEN_FILE_REREAD_MS ago or longer, the next
 * request reads the file again, bounded as the first read (readTokenFile). A read that fails —
 * the file gone or unreadable, no regular file any more, past 1 MiB, or holding only whitespace
 * (client-go: "read empty token from file") — keeps the token read before, as client-go keeps it
 * ("Unable to rotate token"), and says so on the console (console.error, once for each new
 * reason, never with the token); the file is read again at the next request until a read
 * succeeds. A token-file that was a named pipe when the kubeconfig was read is not read again: a
 * pipe's writer gave its token once (`<(vault read …)`), and reading it again would wait for one.
 * The first read is made when the token is first asked for (the loader asks for the user in use's).
 * The time is taken from a monotonic clock (performance.now()), as the informer's waits: a wall
 * clock set back does not keep an old token.
 * @internal
 */
export class TokenFileSource {
  /** The token read; undefined until the file is first read. */
  private token: string | undefined;
  /** When the token was read (performance.now()). */
  private readAt = 0;
  /** The last failure said on the console: the same one is not said again at every request. */
  private said: string | undefined;
  /** Whether the file is read again: it was a regular file when first read (not a pipe). */
  private rereads = false;

  /**
   * The file is not read yet: kubectl reads the token-file of the user in use alone, and none for
   * an http:// server. The loader reads that one at once (readTokenFileInUse); any other, at its
   * first request.
   */
  constructor(
    readonly path: string,
    readonly user: string,
    readonly field: TokenFileKey,
  ) {}

  /**
   * The token to send now: the file's, read the first time (TokenFileError when it cannot be read:
   * there is no token to keep), then the one read before, or the file's read again when that one is
   * old enough.
   */
  current(): string {
    if (this.token === undefined) {
      const token = readTokenFile(this.path, this.user, this.field);
      this.token = token;
      this.readAt = performance.now();
      this.rereads = isRegularFile(this.path);
      return token;
    }
    if (!this.rereads || performance.now() - this.readAt < TOKEN_FILE_REREAD_MS) return this.token;
    try {
      this.token = this.readAgain();
      this.readAt = performance.now();
      this.said = undefined;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== this.said) {
        this.said = why;
        console.error(
          `ipallocator: ${why}; the token read from it before is still sent (as kubectl does), and the file is read again at the next request`,
        );
      }
    }
    return this.token;
  }

  /**
   * The file's token, read again: TokenFileError when it is no regular file now (checked before
   * it is opened: a named pipe put in its place would hold the read for 5 s), cannot be read, or
   * holds only whitespace.
   */
  private readAgain(): string {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(this.path);
    } catch (e) {
      throw new TokenFileError(this.path, this.user, cannotBeRead(e), this.field);
    }
    if (!stats.isFile()) {
      throw new TokenFileError(this.path, this.user, `is not read: it is ${notRegularFile(stats)}, not a regular file`, this.field);
    }
    const token = readTokenFile(this.path, this.user, this.field);
    if (token.trim() === '') {
      throw new TokenFileError(
        this.path,
        this.user,
        'holds nothing, or only whitespace (client-go: "read empty token from file")',
        this.field,
      );
    }
    return token;
  }

  /**
   * Makes `user` (a client-node User, whose `token` client-node reads as each request is
   * authenticated) send this source's token: its `token` becomes a property that asks current().
   * A token set on it afterwards replaces the source, as a plain token.
   */
  attachTo(user: object): void {
    SOURCES.set(user, this);
    Object.defineProperty(user, 'token', {
      get: () => this.current(),
      set(value: unknown) {
        Object.defineProperty(user, 'token', { value, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: true,
    });
  }
}

/** Whether `path` is a regular file now (false when it cannot be told). */
function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The source each user the loader attached one to (TokenFileSource attachTo) reads its token from. */
const SOURCES = new WeakMap<object, TokenFileSource>();

/**
 * Reads now the token-file of the user of the context `contextName` of `kc` (its current-context
 * when undefined or empty), as kubectl reads the one of the user in use as it loads the
 * kubeconfig: TokenFileError when it cannot be read. Nothing for a context whose cluster's server
 * is http://, to which no credentials are sent (plain-http.ts: client-go reads none for it), nor
 * for a user without a token-file, or whose token was set since. The others are read at their
 * first request, if any: a user no context in use names, whose token-file is gone, does not fail
 * the kubeconfig, as with kubectl.
 * @internal
 */
export function readTokenFileInUse(kc: KubeConfig, contextName?: string): void {
  const name = contextName || kc.getCurrentContext();
  const context = name ? kc.getContextObject(name) : null;
  if (!context?.user) return;
  const cluster = context.cluster ? kc.getCluster(context.cluster) : null;
  if (isPlainHttp(cluster?.server)) return;
  const user = kc.getUser(context.user);
  if (user === null || Object.getOwnPropertyDescriptor(user, 'token')?.get === undefined) return;
  SOURCES.get(user)?.current();
}

/**
 * The keys a kubeconfig user names its token file by: kubectl's own, `tokenFile` (client-go's
 * clientcmd v1 AuthInfo), which client-node does not read, and client-node's `token-file`, which
 * kubectl does not read. kubectl's is read first when a user has both.
 * @internal
 */
export const TOKEN_FILE_KEYS = ['tokenFile', 'token-file'] as const;
type TokenFileKey = (typeof TOKEN_FILE_KEYS)[number];

/**
 * The token-files of a kubeconfig's users read here, before client-node parses the text — named
 * `token-file` or, as kubectl names it, `tokenFile` (TOKEN_FILE_KEYS) —: the kubeconfig `doc`
 * (its text parsed as client-node parses it, kubeconfig-shape.ts documentOnce), as JSON (which is
 * YAML), without the token-file of each user whose token client-node would read from one (a user
 * with a non-empty token keeps it, as client-node keeps it), and the token-files read
 * (TokenFileSource), by the user's index in `doc`'s list (the one client-node is given, whose users
 * it builds one for one). A relative token-file is read from
 * `folder`. Undefined when no user names a token-file. The text is written by documentText, which
 * refuses a document whose aliases repeat more than its text (`textLength`) held.
 * @internal
 */
export function readTokenFiles(
  doc: { users: unknown[] },
  textLength: number,
  folder: string,
): { text: string; tokens: Map<number, TokenFileSource> } | undefined {
  const tokens = new Map<number, TokenFileSource>();
  const copy = doc.users.map((entry: unknown, i) => {
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
    tokens.set(i, new TokenFileSource(isAbsolute(tokenFile) ? tokenFile : join(folder, tokenFile), String(name ?? ''), field));
    const { 'token-file': _read, tokenFile: _kubectls, ...rest } = user;
    return { ...(entry as object), user: rest };
  });
  if (tokens.size === 0) return undefined;
  return { text: documentText({ ...doc, users: copy }, textLength), tokens };
}
