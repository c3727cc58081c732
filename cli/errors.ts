// The command line's one error type. Everything the command expects to go wrong (a bad flag, an
// unreachable server, a missing permission, a malformed snapshot file) becomes a CliError: main
// prints its message, without a stack trace, and exits with its code.
import { fsFailure } from '../adapters/fs-failure.ts';
import { quoteText } from '../adapters/quote.ts';

/**
 * Exit codes: 0 clean, 1 `check` found something, 2 usage, connection or API error, 128 + the
 * signal's number when `check --fix` was stopped by a signal (STOP_SIGNALS): the code a shell
 * gives a command that signal ended (130 for Ctrl-C).
 */
export const EXIT_CLEAN = 0;
export const EXIT_FOUND = 1;
export const EXIT_ERROR = 2;

/**
 * The signals that stop `check --fix` after the leaks under way, so that its report still names
 * what was deleted: Ctrl-C, a `kill` or a Job's deadline, a closed terminal. Each with what
 * `stoppedBy` says and the exit code (128 + the signal's number).
 */
export const STOP_SIGNALS = {
  SIGINT: { stoppedBy: 'interrupted (Ctrl-C)', said: 'Interrupted', exitCode: 130 },
  SIGTERM: { stoppedBy: 'terminated (SIGTERM)', said: 'Terminated (SIGTERM)', exitCode: 143 },
  SIGHUP: { stoppedBy: 'hung up (SIGHUP)', said: 'Hung up (SIGHUP)', exitCode: 129 },
} as const;

export type StopSignal = keyof typeof STOP_SIGNALS;

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = EXIT_ERROR) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A bad command line: printed with a pointer to --help. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_ERROR);
    this.name = 'UsageError';
  }
}

/**
 * A failure every further request to the cluster would meet too: no answer (unreachable, timed
 * out, malformed, or not sent), or the credentials or the permission refused (401, or a 403 on a
 * listing).
 * `check --fix` stops at the first one instead of meeting it once per leak.
 */
export class ClusterError extends CliError {
  constructor(message: string) {
    super(message, EXIT_ERROR);
    this.name = 'ClusterError';
  }
}

/**
 * The identity may not list a resource (403 on a listing): a ClusterError, which a command that
 * can do without that listing (`map`, with the ServiceCIDRs) catches to say what it could not tell.
 */
export class ListForbiddenError extends ClusterError {
  constructor(message: string) {
    super(message);
    this.name = 'ListForbiddenError';
  }
}

/**
 * The identity may not make one request about one object (403 on a request that names it). RBAC
 * grants per object (`resourceNames`) and per namespace (a Role), so a request about another
 * object may still be allowed: `check --fix` reports the object and goes on with the others.
 */
export class ObjectForbiddenError extends CliError {
  /**
   * @param refused for an object of a cluster-scoped resource (an IPAddress), the request refused
   * (`delete ipaddresses.networking.k8s.io`) and who needs which RBAC rule for it: the same refusal
   * for object after object is then most likely one for them all, which `check --fix` stops at
   * (kube-apiserver's message reads alike either way). Undefined for a namespaced object (a
   * Service), whose refusal may be one for its namespace only.
   */
  constructor(
    message: string,
    readonly refused?: { readonly request: string; readonly rule: string },
  ) {
    super(message, EXIT_ERROR);
    this.name = 'ObjectForbiddenError';
  }
}

/**
 * A file an option names that cannot be opened, said in words naming the option, never in fs's
 * (`ENOENT: no such file or directory, open 'x'`): one that does not exist as a missing file of
 * $KUBECONFIG is said (`the file --snapshot names does not exist: "x"`), any other failure with
 * why (adapters/fs-failure.ts): `cannot read the file --snapshot names ("x"): permission denied (EACCES)`;
 * a failure that is no fs failure (no code) with its message.
 */
export function unreadableFile(option: string, path: string, e: unknown): CliError {
  const why = fsFailure(e);
  if (why === undefined) {
    return new CliError(`cannot read the file ${option} names (${quoteText(path)}): ${e instanceof Error ? e.message : String(e)}`);
  }
  if ((e as { code?: unknown }).code === 'ENOENT') return new CliError(`the file ${option} names does not exist: ${quoteText(path)}`);
  return new CliError(`cannot read the file ${option} names (${quoteText(path)}): ${why}`);
}
