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

/** Characters a reader cannot see or tell apart: controls, format characters (zero-width space, BOM, soft hyphen), separators other than the plain space, and code points without a glyph. */
const UNSEEN = /[\p{C}\p{Z}]/gu;

/**
 * `text` in double quotes with every character a reader could not see escaped, as Go's
 * strconv.Quote (%q) does: "10.0.0.1\u200b", not a quote that looks like "10.0.0.1".
 */
export function quoteText(text: string): string {
  return showUnseen(JSON.stringify(text));
}

/**
 * `text` with every character a reader could not see written as an escape (`\u200b`, `\u001b`,
 * `\u000a`): for showing text from elsewhere on a terminal, where a control character could
 * move the cursor, recolour or clear the screen, or start a line that looks like ours.
 */
export function showUnseen(text: string): string {
  return text.replace(UNSEEN, (c) => {
    if (c === ' ') return c;
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/**
 * `message` about one element of the caller's array, named after it as memberName names it:
 * `ParseAddr("10.0.0.x"): unexpected character (ips[3])`. The one wording of which element a
 * batch refused (malformed text, an address outside the range): the way to find it in a long
 * listing.
 */
export function inElement(message: string, element: string): string {
  return `${message} (${element})`;
}

/** Shortens an input for quoting in a message: strings are quoted (quoteText), long ones cut. */
export function quoteInput(input: unknown): string {
  if (typeof input === 'string') {
    if (input.length > 64) return `${quoteText(input.slice(0, 64))}… (${input.length} characters)`;
    return quoteText(input);
  }
  if (input === null || input === undefined) return String(input);
  if (typeof input === 'bigint') return `${input}n`;
  if (typeof input === 'object') return objectKind(input);
  if (typeof input === 'function') return functionName(input as (...args: never[]) => unknown);
  // a symbol's description is text from elsewhere: escaped as a string's is
  return `${showUnseen(String(input))} (${typeof input})`;
}

/** An array by its length, a thenable as a promise, any other object by its class (classOf). */
function objectKind(o: object): string {
  try {
    if (Array.isArray(o)) return `an array of ${o.length} value${o.length === 1 ? '' : 's'}`;
    if (typeof (o as { then?: unknown }).then === 'function') return 'a Promise (a missing await?)';
    return classOf(o);
  } catch {
    // a Proxy whose traps throw, or a revoked one: the refusal must not throw the input's own error
  }
  return 'a value of type object';
}

/**
 * An object by its class: `a Map`, `an instance of Owner`, `an object whose prototype is not
 * Object.prototype`, or, for a plain object, `a value of type object` — read from property
 * descriptors, so no getter of the caller's runs. A Proxy whose trap throws throws here, as its
 * other reads do, for the caller to name the field it was reading.
 */
export function classOf(o: object): string {
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto === Object.prototype || proto === null) return 'a value of type object';
  const ctor: unknown =
    typeof proto === 'object' && proto !== null ? Object.getOwnPropertyDescriptor(proto, 'constructor')?.value : undefined;
  const name: unknown = typeof ctor === 'function' ? Object.getOwnPropertyDescriptor(ctor, 'name')?.value : undefined;
  if (typeof name !== 'string' || name === '') return 'an object whose prototype is not Object.prototype';
  const shown = showUnseen(name.slice(0, 64));
  // 'an' before a vowel sound: an Error, an Int8Array; a URL, a Uint8Array (said "you")
  return BUILT_IN_KINDS.has(name) ? `${/^[AEIO]/.test(name) ? 'an' : 'a'} ${shown}` : `an instance of ${shown}`;
}

/** Classes named by their name alone (`a Map`, not `an instance of Map`). */
const BUILT_IN_KINDS = new Set(
  `Map Set WeakMap WeakSet WeakRef Date RegExp Promise Error URL Number String Boolean ArrayBuffer
   SharedArrayBuffer DataView Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array
   Int32Array Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array`.split(/\s+/),
);

/**
 * Whether an options argument is an object of the language's own that keeps its contents
 * elsewhere than in properties (a Map's entries, a Promise's value, a Date): read as options it
 * would have none, and each allocator would silently get a store of its own.
 */
function isBuiltInContainer(o: object): boolean {
  if (typeof (o as { then?: unknown }).then === 'function') return true; // a missing await
  return Object.prototype.toString.call(o) !== '[object Object]';
}

/** A function by its name, not its source (which String() gives: a whole class, for `MemoryStore` without `new`). */
function functionName(f: (...args: never[]) => unknown): string {
  let name = '';
  let isClass = false;
  try {
    const own = f.name;
    if (typeof own === 'string' && own !== '') name = quoteText(own.slice(0, 64));
    isClass = /^class\b/.test(Function.prototype.toString.call(f));
  } catch {
    // a Proxy of a function whose traps throw, or a revoked one: no name or source to read
  }
  if (isClass) return `the class ${name} (a missing \`new\`?)`;
  return name === '' ? 'a function' : `the function ${name}`;
}

/**
 * A promise that rejects with `error` one microtask from now; the allocators' promise-returning
 * methods reject through it, so `await allocator.allocateNext()` receives the error as thrown.
 * A rejection nobody handles is still reported as unhandled.
 */
export async function rejectSoon(error: unknown): Promise<never> {
  // Why one microtask late: `await allocator.allocateNext()` attaches its handler in the same
  // turn, while a promise that is already rejected when it is returned costs Node its
  // unhandled-rejection bookkeeping (≈ 0.7 µs: a rejected allocateNext on a full range 1.8 →
  // 1.1 µs, Node 20).
  await undefined;
  throw error;
}

export class IPAllocatorError extends Error {
  /** The stable code of this class; every instance carries it as `error.code`. */
  static readonly code: string = 'ERR_IPALLOCATOR';
  /** Stable across versions: the class's static `code`. */
  readonly code: string;

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
    this.name = new.target.name;
    this.code = (new.target as unknown as { code: string }).code;
    // V8 gives the error an own, non-enumerable `stack` either way: this keeps it so
    if (skipped) this.stack = `${this.name}: ${message}`;
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

/** `allocator not ready`: the allocator is disabled or its store has not synced. */
export class ErrNotReady extends IPAllocatorError {
  static override readonly code = 'ERR_NOT_READY' as const;
  declare readonly code: 'ERR_NOT_READY';
  constructor() {
    super('allocator not ready', false);
  }
}

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
 * Why the WebAssembly core could not get a block of memory (OutOfMemoryError's `reason`):
 * - `limit`: the free memory below the limit (the cap set with setMemoryLimit, or WebAssembly's
 *   own 4 GiB) adds up to less than the block: raise the cap, or destroy() what you no longer need;
 * - `fragmented`: it adds up to the block, but no free piece of it holds the block (a block is one
 *   aligned piece; memory held for blocks under 4 KiB serves those only): raising the cap gives
 *   the block room past what is in use; destroying indexes frees pieces that merge;
 * - `host`: the host (the JavaScript engine, the operating system) refused to grow the memory,
 *   below the limit.
 */
export type MemoryShortage = 'limit' | 'fragmented' | 'host';

/** What OutOfMemoryError reports of the memory when the core failed; each field undefined when not known. */
export interface OutOfMemoryDetails {
  /** Bytes of the block the core asked for and could not get. */
  readonly requested?: number | undefined;
  /** Why it could not get it. */
  readonly reason?: MemoryShortage | undefined;
  /** The limit in bytes, as memoryLimit().limit reports it: the cap, or 4 GiB when none is set. */
  readonly limit?: number | undefined;
  /** Bytes free below the limit when it failed, added up: free blocks and room to grow. */
  readonly free?: number | undefined;
  /** Bytes in use by live indexes (memoryLimit().inUse) when it was reported. */
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

/** A store's answer to creating a name that exists (HTTP 409 AlreadyExists in Kubernetes). */
export class AlreadyExistsError extends IPAllocatorError {
  static override readonly code = 'ERR_ALREADY_EXISTS' as const;
  declare readonly code: 'ERR_ALREADY_EXISTS';
  readonly resourceName: string;
  constructor(name: string) {
    super(`ipaddresses.networking.k8s.io "${name}" already exists`);
    this.resourceName = name;
  }
}

/**
 * Whether a store's error is AlreadyExistsError — of this copy of the package or of another one
 * (a store built against its own copy): recognised by class or by code.
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
    super(`ipaddresses.networking.k8s.io "${name}" not found`);
    this.resourceName = name;
  }
}

/** Whether a store's error is NotFoundError, of this copy of the package or another (by code). */
export function isNotFound(e: unknown): boolean {
  return isErrorOf(e, NotFoundError);
}

/**
 * Whether `e` is an error of `kind`, of this copy of the package or another (known by its
 * `code`). Never throws: the value is someone else's (a store's rejection, what an allocator of
 * your own threw), and one that cannot be inspected — a revoked Proxy, on which instanceof
 * throws, or a `code` getter that throws — is not `kind`, so the caller passes it on as it came.
 */
function isErrorOf(e: unknown, kind: typeof IPAllocatorError): boolean {
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
  constructor(target: string) {
    super(`${target} has been destroyed`, false);
    this.target = target;
  }
}

/** Whether `e` is ErrDestroyed, of this copy of the package or another (by code). */
export function isDestroyed(e: unknown): boolean {
  return isErrorOf(e, ErrDestroyed);
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
    super(`IPAddress ${quoteInput(name)} is invalid: ${causes.join('; ')}`);
    this.resourceName = name;
    this.causes = causes;
  }
}

/**
 * InvalidArgumentError unless `family` is "IPv4" or "IPv6" (`what` names it in the message); a
 * spelling that differs only in case is named, as "did you mean".
 */
export function checkIPFamily(family: unknown, what = 'family'): asserts family is 'IPv4' | 'IPv6' {
  if (family === 'IPv4' || family === 'IPv6') return;
  const near = typeof family === 'string' ? ['IPv4', 'IPv6'].find((f) => f.toLowerCase() === family.toLowerCase()) : undefined;
  throw new InvalidArgumentError(
    `${what} must be "IPv4" or "IPv6", got ${quoteInput(family)}${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
  );
}

/** setReady's argument: true or false, else InvalidArgumentError (isReady() answers a boolean). */
export function checkReady(ready: unknown): boolean {
  if (typeof ready !== 'boolean') throw new InvalidArgumentError(`setReady needs true or false, got ${quoteInput(ready)}`);
  return ready;
}

/**
 * The options argument of a constructor or function, read once: a new object holding the value
 * of each option in `known` (`{}` when `options` is omitted), which the caller reads from then on,
 * so what was checked is what is used. Anything but an object (null, a number, an array) is a
 * caller's mistake: InvalidArgumentError naming `what` and quoting the value; so is an own key
 * that is not in `known` (unless its value is undefined), named with the options there are, and
 * an object whose reading throws (unreadableInput).
 *
 * `given` is the path to the object from the caller's argument, as readMember names input:
 * `options` (the default), or `options.backoff` for an object of options inside the options, so
 * that a getter that throws is `options.backoff.initialMs`, not `options.initialMs`.
 */
export function optionsObject<T extends object>(
  options: T | undefined,
  what: string,
  known: Readonly<Record<keyof T, true>>,
  given = 'options',
): T {
  if (options === undefined) return {} as T;
  const names = Object.keys(known);
  // an object inside the options is named by its path (`KubernetesStore: options.backoff …`)
  const subject = given === 'options' ? what : `${what}: ${given}`;
  let keys: string[];
  try {
    if (typeof options !== 'object' || options === null || Array.isArray(options) || isBuiltInContainer(options)) {
      throw new InvalidArgumentError(
        `${subject}${given === 'options' ? ' options' : ''} must be an object whose properties are the options, got ${quoteInput(options)}`,
      );
    }
    // inherited keys too, as the options are read through the prototype (Object.create(defaults)):
    // a misspelled key there must be refused as one of the object's own
    keys = [];
    for (const key in options) keys.push(key);
  } catch (e) {
    throw unreadableInput(given, e); // a revoked Proxy
  }
  // A misspelled option would otherwise be ignored in silence: `{ stroe: shared }` gives each
  // allocator a store of its own, and two replicas then hand out the same address.
  for (const key of keys) {
    if (Object.hasOwn(known, key) || readMember(options, key, given) === undefined) continue;
    const near = nearestName(key, names);
    throw new InvalidArgumentError(
      `${subject} has no option ${quoteInput(key)}${near === undefined ? '' : ` (did you mean "${near}"?)`}; its options: ${names.join(', ')}`,
    );
  }
  const read: Record<string, unknown> = {};
  for (const key of names) read[key] = readMember(options, key, given);
  return read as T;
}

/** Makes the error a module answers bad input with, from its message (InvalidArgumentError's by default). */
export type RefuseInput = (message: string) => IPAllocatorError;

const invalidArgument: RefuseInput = (message) => new InvalidArgumentError(message);

/**
 * The error for input that threw when read — a revoked Proxy, a getter or Proxy trap that throws:
 * InvalidArgumentError naming `what` (`options.store`, `owner`, `ips[3]`: see readMember for how)
 * and what the read threw, which is its `cause`; `refuse` makes another class where a module
 * answers bad input with its own (a store's InvalidRecordError). One of our own errors passes
 * unchanged: a getter that called back into this package got that answer (ErrDestroyed from a
 * destroyed allocator).
 */
export function unreadableInput(what: string, thrown: unknown, refuse: RefuseInput = invalidArgument): IPAllocatorError {
  if (isOurs(thrown)) return thrown;
  const error = refuse(`${what} could not be read: it threw ${thrownText(thrown)}`);
  Object.defineProperty(error, 'cause', { value: thrown, writable: true, configurable: true });
  return error;
}

/**
 * `o[key]` of the caller's input `base` (`options`, `owner`, `snapshot`), the one read of it: a
 * read that throws (a revoked Proxy, a getter or Proxy trap that throws) is InvalidArgumentError
 * naming `base.key` (unreadableInput).
 *
 * How input is named, here and in every unreadableInput: by the path a caller writes to it from
 * the argument they passed, starting with the parameter's documented name — `options.store`,
 * `options.store.sync.createSync`, `options.metrics.getSingleMetric`, `owner.name`, `ips[1]`,
 * `snapshot.data`, `knownOwners[0].name` — as the other messages about the same values name them
 * (`options.store must be a Store …`), so one value has one name. The call is left out: the error
 * is thrown by it, so the caller knows which. Objects of the Kubernetes API are named by their
 * fields instead, as the API server's validation and our other messages about them name them: a
 * ServiceCIDR's `spec.cidrs`, a record's `metadata.labels` and `spec.parentRef` (a store's
 * InvalidRecordError).
 */
export function readMember(o: object, key: string | symbol | number, base: string): unknown {
  try {
    return (o as Record<string | symbol | number, unknown>)[key];
  } catch (e) {
    throw unreadableInput(memberName(base, key), e);
  }
}

/**
 * The length of the caller's array `list`, read once, or undefined when `list` is not an array;
 * `what` names it in messages (`ips`, `spec.cidrs`). Its elements are then read by index, each
 * once, with readMember(list, i, what) or readElements: by index, not through an iterator the
 * caller may have replaced, and once, because a Proxy's answers may change from one read to the
 * next and what was checked must be what is used. A read that throws (a revoked Proxy) is
 * unreadableInput(what); a length that is not a whole number ≥ 0 (a Proxy's) is
 * InvalidArgumentError.
 */
export function arrayLength(list: unknown, what: string): number | undefined {
  let isArray: boolean;
  try {
    isArray = Array.isArray(list);
  } catch (e) {
    throw unreadableInput(what, e); // a revoked Proxy
  }
  if (!isArray) return undefined;
  const length = readMember(list as object, 'length', what);
  // 2^32 − 1 is the longest an array can be: a Proxy answering more would be read for ever
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > 0xffffffff) {
    throw new InvalidArgumentError(`${what} must be an array, got one whose length is ${quoteInput(length)}`);
  }
  return length;
}

/**
 * A copy of the first `length` elements of the caller's array `list` (its arrayLength, checked
 * by the caller against what it accepts), each read once by index, a hole as undefined.
 */
export function readElements(list: unknown, length: number, what: string): unknown[] {
  const copy: unknown[] = [];
  for (let i = 0; i < length; i++) copy.push(readMember(list as object, i, what));
  return copy;
}

/** True for `{}`-like objects: not arrays, dates, maps or class instances. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `base.key` for a key that is a plain name, else `base["key"]` (quoted, whatever it holds) or `base[Symbol(…)]`, `base[3]`. */
export function memberName(base: string, key: string | symbol | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (typeof key === 'symbol') return `${base}[${showUnseen(String(key))}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${base}.${key}` : `${base}[${quoteInput(key)}]`;
}

/** Whether `thrown` is one of our errors; false for a thrown revoked Proxy (instanceof would throw on it). */
function isOurs(thrown: unknown): thrown is IPAllocatorError {
  try {
    return thrown instanceof IPAllocatorError;
  } catch {
    return false;
  }
}

/** `TypeError: message` for an Error, else the value as quoteInput names it; never throws, whatever was thrown. */
function thrownText(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const text = `${String(thrown.name)}: ${String(thrown.message)}`;
      return showUnseen(text.length > 200 ? `${text.slice(0, 200)}…` : text);
    }
  } catch {
    // a thrown Proxy, or an Error whose name or message getter throws: named by type below
  }
  return quoteInput(thrown);
}

/**
 * The first of `names` that `typed` looks like a misspelling of (isNear), for a "did you mean";
 * undefined when none is, or nothing was typed. The one home of that guess: option names of
 * the library's functions and the command line's commands and flags alike.
 */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  return typed === '' ? undefined : names.find((name) => isNear(typed, name));
}

/** Whether `typed` looks like a misspelling of `name`: the same ignoring case, or at most two edits apart. */
function isNear(typed: string, name: string): boolean {
  const a = typed.toLowerCase();
  const b = name.toLowerCase();
  if (a.startsWith(b) || b.startsWith(a)) return true; // index / indexKind, requestTimeoutMs / requestTimeout
  if (Math.abs(a.length - b.length) > 2) return false;
  // Levenshtein distance, two rows
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    prev = row;
  }
  return prev[b.length]! <= 2;
}
