// Typed errors. The upstream sentinels keep their exact upstream messages
// (pkg/registry/core/service/ipallocator/interfaces.go); input errors quote the input and say
// what is wrong, in the style of Go's net/netip.
//
// All errors extend IPAllocatorError, so `instanceof IPAllocatorError` separates our errors from
// the store errors that pass through unchanged.

/** Shortens an input for quoting in a message: strings are JSON-quoted, long ones cut. */
export function quoteInput(input: unknown): string {
  if (typeof input === 'string') {
    if (input.length > 64) return `${JSON.stringify(input.slice(0, 64))}… (${input.length} characters)`;
    return JSON.stringify(input);
  }
  if (input === null) return 'null';
  if (typeof input === 'bigint') return `${input}n`;
  if (typeof input === 'object') return `a value of type ${Array.isArray(input) ? 'array' : 'object'}`;
  return `${String(input)} (${typeof input})`;
}

export class IPAllocatorError extends Error {
  /**
   * `captureStack: false` is for the expected outcomes (ErrFull, ErrAllocated, ErrNotReady,
   * ErrNotInRange, ErrMismatchedNetwork): like upstream's sentinel values they carry no stack
   * trace, because capturing one is most of the cost of an Error in V8 (measured ≈ 3.5 µs, where
   * the allocator answers "range is full" from a counter in tens of nanoseconds).
   */
  constructor(message: string, captureStack = true) {
    if (captureStack) {
      super(message);
    } else {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        super(message);
      } finally {
        Error.stackTraceLimit = limit;
      }
    }
    this.name = new.target.name;
  }
}

/** `range is full`: AllocateNext found no free address. */
export class ErrFull extends IPAllocatorError {
  constructor() {
    super('range is full', false);
  }
}

/** `provided IP is already allocated`: Allocate of an address that is taken. */
export class ErrAllocated extends IPAllocatorError {
  constructor() {
    super('provided IP is already allocated', false);
  }
}

/** `the provided network does not match the current range`. */
export class ErrMismatchedNetwork extends IPAllocatorError {
  constructor() {
    super('the provided network does not match the current range', false);
  }
}

/** `allocator not ready`: the allocator is disabled or its store has not synced. */
export class ErrNotReady extends IPAllocatorError {
  constructor() {
    super('allocator not ready', false);
  }
}

/** The address is outside [first, last] of the range (or of the other family). */
export class ErrNotInRange extends IPAllocatorError {
  readonly ip: string;
  readonly validRange: string;
  constructor(ip: string, validRange: string) {
    super(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${validRange}`, false);
    this.ip = ip;
    this.validRange = validRange;
  }
}

/** Malformed or ambiguous address text (or not a string). Message: `ParseAddr("…"): reason`. */
export class InvalidAddressError extends IPAllocatorError {
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
  readonly input: unknown;
  readonly reason: string;
  constructor(input: unknown, reason: string) {
    super(`ParsePrefix(${quoteInput(input)}): ${reason}`);
    this.input = input;
    this.reason = reason;
  }
}

/** A well-formed CIDR an allocator cannot serve, e.g. `shortest allowed prefix length for service CIDR is 64, got 48`. */
export class InvalidRangeError extends IPAllocatorError {}

/** A wrong argument other than address text: a negative count, a non-function callback, … */
export class InvalidArgumentError extends IPAllocatorError {}

/** The WebAssembly core could not get more memory (host refused, or the cap was reached). */
export class OutOfMemoryError extends IPAllocatorError {
  constructor(what: string) {
    super(`out of memory: ${what}`);
  }
}

/** A store's answer to creating a name that exists (HTTP 409 AlreadyExists in Kubernetes). */
export class AlreadyExistsError extends IPAllocatorError {
  readonly resourceName: string;
  constructor(name: string) {
    super(`ipaddresses.networking.k8s.io "${name}" already exists`);
    this.resourceName = name;
  }
}

/** A store's answer to deleting or reading a name that does not exist (HTTP 404 NotFound). */
export class NotFoundError extends IPAllocatorError {
  readonly resourceName: string;
  constructor(name: string) {
    super(`ipaddresses.networking.k8s.io "${name}" not found`);
    this.resourceName = name;
  }
}
