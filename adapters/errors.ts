// Typed errors. The upstream sentinels keep their exact upstream messages
// (pkg/registry/core/service/ipallocator/interfaces.go); input errors quote the input and say
// what is wrong, in the style of Go's net/netip.
//
// All errors extend IPAllocatorError, so `instanceof IPAllocatorError` separates our errors from
// the store errors that pass through unchanged. Every class has a stable `code` (a static on the
// class, copied onto each instance), so code that cannot share the class object (another copy
// of the package, a log pipeline, a worker) can still tell the errors apart:
//
//   if (e.code === ErrFull.code) { ... }      // e.code === "ERR_RANGE_FULL"
//
// The checks of caller input that throw these classes live in input.ts, which imports this module;
// the quoting both use is quote.ts's, which imports neither, so no module here imports input.ts.

import { inElement, quoteInput, quoteText } from './quote.ts';

/**
 * A promise that rejects with `error` one microtask from now; the allocators' promise-returning
 * methods reject through it, so `await allocator.allocateNext()` receives the error as thrown.
 * A rejection nobody handles is still reported as unhandled.
 * @internal
 */
export function rejectSoon(error: unknown): Promise<never> {
  // Why one microtask late: `await allocator.allocateNext()` attaches its handler in the same
  // turn, while a promise that is already rejected when it is returned costs Node its
  // unhandled-rejection bookkeeping (≈ 0.7 µs: a rejected allocateNext on a full range 1.8 →
  // 1.1 µs, Node 20). Why reject() rather than `await undefined; throw error` in an async
  // function: a throw makes V8 look up where it was thrown (≈ 0.1 µs), which nobody reads.
  return new Promise((_, reject) => {
    SETTLED.then(() => reject(error));
  });
}

const SETTLED: Promise<void> = Promise.resolve();

/**
 * Throws `error` from a microtask: an error no caller can be handed (a store watcher's, a report
 * callback's, a late destroy's) surfaces as an uncaught exception instead of vanishing, and
 * fails nothing of the call that met it.
 * @internal
 */
export function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/** Where nameErrorClasses keeps a class's name: a key of its own on the class, not inherited by your subclasses. */
const ERROR_NAME: unique symbol = Symbol('ipallocator error name');
interface Named {
  readonly [ERROR_NAME]: string;
}

/**
 * Gives each of these error classes its name as text, for `error.name` and the first line of its
 * `stack` (`ErrFull: range is full`). Read from the class itself, the name is whatever a bundler's
 * minifier renamed it to (`M: range is full`); object keys it keeps. A subclass of your own, not
 * named here, is named by its class (new.target.name).
 * @internal
 */
export function nameErrorClasses(classes: Readonly<Record<string, abstract new (...args: never[]) => IPAllocatorError>>): void {
  for (const [name, type] of Object.entries(classes)) {
    Object.defineProperty(type, ERROR_NAME, { value: name });
    // `static readonly code` is read-only in the typings only: at run time an assignment
    // (ErrFull.code = 'x') would change the code of every later error of the class. It is refused;
    // a class of yours extending one of these that assigns its own code (TypeScript before class
    // fields compiles `static code = …` to an assignment) gets it as its own. The value is read
    // first: a class without a code of its own (UnusableProxyError) has the one it inherits.
    const code: unknown = (type as unknown as { code: unknown }).code;
    Object.defineProperty(type, 'code', {
      get: () => code,
      set(this: unknown, value: unknown) {
        if (this === type) throw new TypeError(`${name}.code is read-only (${String(code)})`);
        Object.defineProperty(this, 'code', { value, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: false,
    });
  }
}

/**
 * The `code` of every IPAllocatorError class of the package, `ipallocator/kubernetes`'s included
 * (KubernetesApiError is none: its `code` is the HTTP status): what `error.code` is typed as once
 * `instanceof IPAllocatorError` holds, so that a switch over it or a comparison with a misspelt
 * code does not compile. Each class's own `code` is its literal
 * (`ErrFull.code` is `'ERR_RANGE_FULL'`); a subclass of your own keeps the code of the class it
 * extends, unless it declares one (`static code = …`): plain JavaScript takes any value there, so
 * at run time the `code` of your own errors may be outside this union. Codes are added in minor
 * versions, with the classes that carry them: a switch should keep a `default` branch.
 */
export type IPAllocatorErrorCode =
  | 'ERR_IPALLOCATOR'
  | 'ERR_RANGE_FULL'
  | 'ERR_ALLOCATED'
  | 'ERR_NOT_IN_RANGE'
  | 'ERR_NOT_READY'
  | 'ERR_MISMATCHED_NETWORK'
  | 'ERR_DESTROYED'
  | 'ERR_INVALID_ADDRESS'
  | 'ERR_INVALID_CIDR'
  | 'ERR_INVALID_RANGE'
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_OUT_OF_MEMORY'
  | 'ERR_INVALID_RECORD'
  | 'ERR_ALREADY_EXISTS'
  | 'ERR_NOT_FOUND'
  | 'ERR_STILL_ALLOCATED'
  | 'ERR_SYNC_TIMEOUT'
  | 'ERR_SYNC_DENIED'
  | 'ERR_SYNC_BLOCKED'
  | 'ERR_KUBECONFIG_CREDENTIAL';

export class IPAllocatorError extends Error {
  /** The stable code of this class; every instance carries it as `error.code`. */
  static readonly code: IPAllocatorErrorCode = 'ERR_IPALLOCATOR';
  /**
   * Stable across versions: the class's static `code`, one of IPAllocatorErrorCode for every
   * error of this package (a subclass of yours that declares a code of its own carries that one).
   */
  readonly code: IPAllocatorErrorCode;

  /**
   * `captureStack: false` is for the expected outcomes (ErrFull, ErrAllocated, ErrNotReady,
   * ErrNotInRange, ErrMismatchedNetwork, ErrDestroyed): like upstream's sentinel values they
   * carry no stack trace — they are answers, not faults — and their `stack` is the one line a
   * trace would start with (`ErrFull: range is full`). Where `Error` is frozen (SES lockdown(),
   * node --frozen-intrinsics) they carry the usual trace.
   */
  constructor(message: string, captureStack = true) {
    // Why no trace: capturing one is most of the cost of an Error in V8 (about 1.8 µs, where the
    // allocator answers "range is full" from a counter in tens of nanoseconds). V8 skips the
    // capture outright only when `Error.stackTraceLimit` is not a number (with 0 it still builds
    // an empty trace); `stack` is then set to the first line a trace would have: ≈ 250 instead
    // of ≈ 340 ns per error (Node 20). Where `Error` is frozen the limit cannot be changed.
    const limit = Error.stackTraceLimit;
    let skipped = false;
    if (!captureStack) {
      try {
        (Error as { stackTraceLimit: unknown }).stackTraceLimit = undefined;
        skipped = true;
      } catch {
        // frozen intrinsics (SES lockdown(), node --frozen-intrinsics): made with the usual trace
      }
    }
    super(message);
    if (skipped) Error.stackTraceLimit = limit;
    this.name = Object.hasOwn(new.target, ERROR_NAME) ? (new.target as unknown as Named)[ERROR_NAME] : new.target.name;
    this.code = (new.target as unknown as { code: IPAllocatorErrorCode }).code;
    // V8 gives the error an own, non-enumerable `stack` either way: this keeps it so
    if (skipped) this.stack = `${this.name}: ${message}`;
  }

  /**
   * What `JSON.stringify` writes for the error, for a log line: its `name`, `message` and `code`,
   * then its own fields (`ip` and `validRange` of ErrNotInRange, `causes` of InvalidRecordError,
   * …, and any you set on it), then its `cause` when it has one; never its `stack`. A value JSON
   * cannot hold as it is (a bigint, a symbol, a function, NaN, an object of a class) is written as
   * the message quotes it (`5n`, `a Map`); an error (a `cause`, a `lastError`) as its name,
   * message and code; a field whose reading throws, as one that does. It never throws.
   */
  toJSON(this: object): { name: string; message: string; code: IPAllocatorErrorCode; cause?: unknown } & Record<string, unknown>;
  toJSON(this: IPAllocatorError): { name: string; message: string; code: IPAllocatorErrorCode; cause?: unknown } & Record<string, unknown> {
    return errorJSON(this);
  }
}

/**
 * What an error's toJSON writes (IPAllocatorError's, KubernetesApiError's): its `name`, `message`
 * and `code` first, then its own enumerable fields, then its `cause` when it has one, never its
 * `stack`; each value as JSON can hold it (jsonValue). It never throws.
 * @internal
 */
export function errorJSON<Code>(
  error: Error & { readonly code: Code },
): { name: string; message: string; code: Code; cause?: unknown } & Record<string, unknown> {
  const json: ReturnType<typeof errorJSON<Code>> = {
    name: error.name,
    message: error.message,
    code: error.code,
  };
  for (const key of Object.keys(error)) {
    if (key === 'name' || key === 'message' || key === 'code' || key === 'stack' || key === 'cause') continue;
    json[key] = jsonField(error, key, 0);
  }
  if (Object.hasOwn(error, 'cause')) json.cause = jsonField(error, 'cause', 0);
  return json;
}

/** How deep toJSON writes arrays and plain objects inside a field; deeper ones are described. */
const JSON_DEPTH = 4;

/** The field `key` of `o` as toJSON writes it (jsonValue), or its reading's failure described. */
function jsonField(o: object, key: string, depth: number): unknown {
  let value: unknown;
  try {
    value = (o as Record<string, unknown>)[key];
  } catch {
    return 'a value that throws when read';
  }
  return jsonValue(value, depth);
}

/**
 * `value` as JSON holds it: text, booleans, null, finite numbers and undefined (left out) as they
 * are; an error as its name, message and code; an array or a plain object field by field, down
 * to JSON_DEPTH (a loop of objects ends there); anything else described as quoteInput does.
 */
function jsonValue(value: unknown, depth: number): unknown {
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : quoteInput(value);
  if (typeof value !== 'object' || depth >= JSON_DEPTH) return quoteInput(value);
  try {
    if (value instanceof Error) {
      const code: unknown = (value as { code?: unknown }).code;
      const kept = typeof code === 'string' || typeof code === 'number' ? { code } : {};
      return { name: String(value.name), message: String(value.message), ...kept };
    }
    if (Array.isArray(value)) return value.map((v) => jsonValue(v, depth + 1));
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return quoteInput(value);
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) fields[key] = jsonField(value, key, depth + 1);
    return fields;
  } catch {
    return quoteInput(value); // a Proxy whose traps throw, or a revoked one
  }
}

/**
 * `range is full`: AllocateNext found no free address — among those its strategy sees, which
 * `why` (appended as `range is full: why`) says when that is not the whole range.
 */
export class ErrFull extends IPAllocatorError {
  static override readonly code = 'ERR_RANGE_FULL' as const;
  declare readonly code: 'ERR_RANGE_FULL';
  constructor(why?: string) {
    super(why === undefined ? 'range is full' : `range is full: ${why}`, false);
  }
}

/** `provided IP is already allocated`: Allocate of an address that is taken. */
export class ErrAllocated extends IPAllocatorError {
  static override readonly code = 'ERR_ALLOCATED' as const;
  declare readonly code: 'ERR_ALLOCATED';
  constructor() {
    super('provided IP is already allocated', false);
  }
}

/**
 * `the provided network does not match the current range`, followed by which address or
 * snapshot did not match, in parentheses (upstream's text says neither).
 */
export class ErrMismatchedNetwork extends IPAllocatorError {
  static override readonly code = 'ERR_MISMATCHED_NETWORK' as const;
  declare readonly code: 'ERR_MISMATCHED_NETWORK';
  /** `detail`: what did not match, said after upstream's text. */
  constructor(detail?: string) {
    super(`the provided network does not match the current range${detail === undefined ? '' : ` (${detail})`}`, false);
  }
}

/**
 * `allocator not ready`, followed by why (upstream's text says not): the allocator is disabled
 * (setReady(false)) or its store has not synced; a MetaAllocator's ranges or ServiceCIDRs are not
 * ready yet. `why` is one of NOT_READY_WHY's.
 */
export class ErrNotReady extends IPAllocatorError {
  static override readonly code = 'ERR_NOT_READY' as const;
  declare readonly code: 'ERR_NOT_READY';
  constructor(why?: string) {
    super(why === undefined ? 'allocator not ready' : `allocator not ready: ${why}`, false);
  }
}

/** Why an allocator answers ErrNotReady, as its message says it: what to wait for. @internal */
export const NOT_READY_WHY = Object.freeze({
  storeNotSynced:
    "its store's cache has not synced yet (a KubernetesStore's waitForSync() resolves when it has, or rejects saying why it cannot)",
  storeUnsynced:
    "its store's cache had synced, then stopped being synced while it searched (allocations go on once its hasSynced() answers true again)",
  switchedOff: 'setReady(false) holds it',
  serviceCIDRsNotSynced: "the ServiceCIDRs have not synced yet (a KubernetesServiceCIDRs' waitForSync() resolves when they have)",
  noRangeReady: 'no range is ready (a ServiceCIDR without its Ready condition yet, or being deleted, or a store that has not synced)',
});

/**
 * The address is outside [first, last] of the range (or of the other family). Where it is one
 * element of a batch (a Range's loadMany), the message ends naming it, as `(ips[3])`.
 */
export class ErrNotInRange extends IPAllocatorError {
  static override readonly code = 'ERR_NOT_IN_RANGE' as const;
  declare readonly code: 'ERR_NOT_IN_RANGE';
  readonly ip: string;
  /** The range's CIDR. */
  readonly validRange: string;
  /**
   * `detail`: what of `validRange` is valid when not all of it is, said after it in the message;
   * `element`: which element of the caller's array the address is (`ips[3]`, see inElement).
   */
  constructor(ip: string, validRange: string, detail?: string, element?: string) {
    const message = `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${validRange}${detail === undefined ? '' : ` (${detail})`}`;
    super(element === undefined ? message : inElement(message, element), false);
    this.ip = ip;
    this.validRange = validRange;
  }
}

/** Malformed or ambiguous address text (or not a string). Message: `ParseAddr("…"): reason`. */
export class InvalidAddressError extends IPAllocatorError {
  static override readonly code = 'ERR_INVALID_ADDRESS' as const;
  declare readonly code: 'ERR_INVALID_ADDRESS';
  readonly input: unknown;
  readonly reason: string;
  constructor(input: unknown, reason: string) {
    super(`ParseAddr(${quoteInput(input)}): ${reason}`);
    this.input = input;
    this.reason = reason;
  }
}

/** Malformed or ambiguous CIDR text (or not a string). Message: `ParsePrefix("…"): reason`. */
export class InvalidCIDRError extends IPAllocatorError {
  static override readonly code = 'ERR_INVALID_CIDR' as const;
  declare readonly code: 'ERR_INVALID_CIDR';
  readonly input: unknown;
  readonly reason: string;
  constructor(input: unknown, reason: string) {
    super(`ParsePrefix(${quoteInput(input)}): ${reason}`);
    this.input = input;
    this.reason = reason;
  }
}

/**
 * A well-formed CIDR an allocator cannot serve, e.g. `shortest allowed prefix length for service
 * CIDR is 64, got 48`. Where upstream's own text names neither the range nor the cause
 * (`invalid address []`, for a range without a first address), the message is that text followed
 * by `reason` in parentheses, so it still reads as kube-apiserver logs it.
 */
export class InvalidRangeError extends IPAllocatorError {
  static override readonly code = 'ERR_INVALID_RANGE' as const;
  declare readonly code: 'ERR_INVALID_RANGE';
  /** What is wrong with the range and what to give instead: the message without upstream's bare text in front. */
  readonly reason: string;
  /** `upstreamText`: upstream's message, when it says nothing `reason` says (the message then leads with it). */
  constructor(reason: string, upstreamText?: string) {
    super(upstreamText === undefined ? reason : `${upstreamText} (${reason})`);
    this.reason = reason;
  }
}

/** A wrong argument other than address text: a negative count, a non-function callback, … */
export class InvalidArgumentError extends IPAllocatorError {
  static override readonly code = 'ERR_INVALID_ARGUMENT' as const;
  declare readonly code: 'ERR_INVALID_ARGUMENT';
}

/**
 * Why the WebAssembly core could not get the memory an operation needed (OutOfMemoryError's
 * `reason`, against its `requested` and `free`):
 * - `limit`: the free memory below the limit (the cap set with setMemoryLimit, or WebAssembly's
 *   own 4 GiB) adds up to less than `requested`: raise the cap, or destroy() what you no longer need;
 * - `fragmented`: it adds up to `requested`, but when the operation failed no free piece held the
 *   block it could not get (a block is one aligned piece; memory held for blocks under 4 KiB
 *   serves those only; the message names the block, the largest free piece and what was held for
 *   small blocks then): raising the cap gives the block room past what is in use; destroying
 *   indexes frees pieces that merge;
 * - `host`: the host (the JavaScript engine, the operating system) refused to grow the memory,
 *   below the limit.
 */
export type MemoryShortage = 'limit' | 'fragmented' | 'host';

/**
 * What OutOfMemoryError reports of the memory when an operation of the core failed (creating an
 * index, marking or freeing an address, loading a batch), measured once the operation had given
 * back what it took; each field undefined when not known. Its addresses are as they were, and a
 * sparse index that grew for a Range's loadMany or allocateMany merges the nodes it split, left
 * mostly empty, and gives their memory back.
 */
export interface OutOfMemoryDetails {
  /**
   * Bytes the operation needed: the blocks it had taken before one could not be had (given back
   * since) plus that block — for a new index, all of its blocks. Blocks are powers of two of at
   * least 16 bytes. Never less than the block that failed. For a load into a sparse index that
   * stopped part-way (a warm start or rebuild of an Allocator's index; a Range's restore,
   * fromSnapshot, loadMany, allocateMany), an estimate of the whole load, which the message calls
   * one: what the load reached, plus, for each address it had not loaded, what the index held per
   * address loaded (20 bytes at least), and never less than 20 bytes (the most a sparse index
   * holds one in) for every address of the load, less what the load grew a live index into and
   * kept (in use already), so that a cap raised by `requested - free` (rounded up to
   * 64 KiB, as setMemoryLimit takes it) should let the same call through: it errs high, many
   * times over for runs of neighbouring addresses.
   */
  readonly requested?: number | undefined;
  /** Why it could not get it. */
  readonly reason?: MemoryShortage | undefined;
  /** The limit in bytes, as memoryLimit().limit reports it: the cap, or 4 GiB when none is set. */
  readonly limit?: number | undefined;
  /**
   * Bytes free below the limit, added up: free blocks and room to grow. `free + inUse` is the
   * limit less the core's own bookkeeping: 192 KiB, and 4 KiB more for each 8 MiB of memory past
   * the first 120 MiB in which blocks under 4 KiB were ever cut (0 and 0 under a limit below it).
   */
  readonly free?: number | undefined;
  /** Bytes in use by live indexes (memoryLimit().inUse), at the same moment as `free`. */
  readonly inUse?: number | undefined;
}

/**
 * The WebAssembly core could not get more memory: the cap set with setMemoryLimit (or
 * WebAssembly's own 4 GiB) was in the way, the free memory was in pieces too small, or the host
 * refused to grow it. The fields say which, and how much was asked for, so that code can act
 * without reading the message; the message says the same, with what to do.
 */
export class OutOfMemoryError extends IPAllocatorError implements OutOfMemoryDetails {
  static override readonly code = 'ERR_OUT_OF_MEMORY' as const;
  declare readonly code: 'ERR_OUT_OF_MEMORY';
  readonly requested: number | undefined;
  readonly reason: MemoryShortage | undefined;
  readonly limit: number | undefined;
  readonly free: number | undefined;
  readonly inUse: number | undefined;
  /** `what` ran out, said after `out of memory: `; `details` from the core (or from the error this one reports on). */
  constructor(what: string, details: OutOfMemoryDetails = {}) {
    super(`out of memory: ${what}`);
    this.requested = details.requested;
    this.reason = details.reason;
    this.limit = details.limit;
    this.free = details.free;
    this.inUse = details.inUse;
  }
}

/**
 * A store's error's name as its message quotes it, with the space after it: a store in plain
 * JavaScript may build the error with no name (nothing then) or with one that is not text.
 */
function quotedName(name: unknown): string {
  if (name === undefined) return '';
  return `${typeof name === 'string' ? quoteText(name) : quoteInput(name)} `;
}

/** A store's answer to creating a name that exists (HTTP 409 AlreadyExists in Kubernetes). */
export class AlreadyExistsError extends IPAllocatorError {
  static override readonly code = 'ERR_ALREADY_EXISTS' as const;
  declare readonly code: 'ERR_ALREADY_EXISTS';
  readonly resourceName: string;
  constructor(name: string) {
    super(`ipaddresses.networking.k8s.io ${quotedName(name)}already exists`); // %q, as upstream's
    this.resourceName = name;
  }
}

/**
 * Whether a store's error is AlreadyExistsError — of this copy of the package or of another one
 * (a store built against its own copy): recognised by class or by code.
 * @internal
 */
export function isAlreadyExists(e: unknown): boolean {
  return isErrorOf(e, AlreadyExistsError);
}

/** A store's answer to deleting or reading a name that does not exist (HTTP 404 NotFound). */
export class NotFoundError extends IPAllocatorError {
  static override readonly code = 'ERR_NOT_FOUND' as const;
  declare readonly code: 'ERR_NOT_FOUND';
  readonly resourceName: string;
  constructor(name: string) {
    super(`ipaddresses.networking.k8s.io ${quotedName(name)}not found`); // %q, as upstream's
    this.resourceName = name;
  }
}

/** Whether a store's error is NotFoundError, of this copy of the package or another (by code). @internal */
export function isNotFound(e: unknown): boolean {
  return isErrorOf(e, NotFoundError);
}

/**
 * Whether `e` is an error of `kind`, of this copy of the package or another (known by its
 * `code`). Never throws: the value is someone else's (a store's rejection, what an allocator of
 * your own threw), and one that cannot be inspected — a revoked Proxy, on which instanceof
 * throws, or a `code` getter that throws — is not `kind`, so the caller passes it on as it came.
 */
function isErrorOf(e: unknown, kind: (abstract new (...args: never[]) => IPAllocatorError) & { readonly code: string }): boolean {
  try {
    return e instanceof kind || (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === kind.code);
  } catch {
    return false;
  }
}

/**
 * `… has been destroyed`: a method of an allocator, Range or store was called after its
 * destroy()/close(). Final: nothing of that object works again; create a new one.
 */
export class ErrDestroyed extends IPAllocatorError {
  static override readonly code = 'ERR_DESTROYED' as const;
  declare readonly code: 'ERR_DESTROYED';
  /** What was destroyed, e.g. `Allocator 10.96.0.0/12`. */
  readonly target: string;
  /**
   * `state`: how it was ended, after its name: `has been destroyed` (the default), `has been
   * closed` for a store or a ServiceCIDR source after close(), or `is being destroyed (…)` for an allocator whose
   * owner ends its searches before destroying it.
   */
  constructor(target: string, state?: string) {
    super(`${target} ${state ?? 'has been destroyed'}`, false);
    this.target = target;
  }
}

/** Whether `e` is ErrDestroyed, of this copy of the package or another (by code). @internal */
export function isDestroyed(e: unknown): boolean {
  return isErrorOf(e, ErrDestroyed);
}

/** Whether `e` is ErrAllocated, of this copy of the package or another (by code; upstream errors.Is). @internal */
export function isAllocated(e: unknown): boolean {
  return isErrorOf(e, ErrAllocated);
}

/**
 * A record a store refuses as the API server would (HTTP 422 Invalid): a name that is not an
 * address in canonical form, labels that are not strings, a parentRef of the wrong shape.
 * Nothing is stored.
 */
export class InvalidRecordError extends IPAllocatorError {
  static override readonly code = 'ERR_INVALID_RECORD' as const;
  declare readonly code: 'ERR_INVALID_RECORD';
  /** The record's name as given (any type), for quoting. */
  readonly resourceName: unknown;
  /** Each problem found, e.g. `spec.parentRef.name: Required value`. */
  readonly causes: readonly string[];
  constructor(name: unknown, causes: readonly string[]) {
    // causes that are no array (a store in plain JavaScript passing one text): that one cause
    const list: readonly string[] = Array.isArray(causes) ? causes : causes === undefined ? [] : [String(causes)];
    super(`IPAddress ${quoteInput(name)} is invalid${list.length === 0 ? '' : `: ${list.join('; ')}`}`);
    this.resourceName = name;
    this.causes = list;
  }
}

nameErrorClasses({
  IPAllocatorError,
  ErrFull,
  ErrAllocated,
  ErrMismatchedNetwork,
  ErrNotReady,
  ErrNotInRange,
  InvalidAddressError,
  InvalidCIDRError,
  InvalidRangeError,
  InvalidArgumentError,
  OutOfMemoryError,
  AlreadyExistsError,
  NotFoundError,
  ErrDestroyed,
  InvalidRecordError,
});
