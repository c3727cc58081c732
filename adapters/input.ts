// Reading and checking the caller's input: options objects, members and array elements read once
// each (a getter or Proxy trap that throws is named by its path, `options.store`, `ips[3]`),
// the IP family and setReady's argument, and the "did you mean" guess for a misspelled name.
// What is wrong is an InvalidArgumentError (errors.ts) quoting the value as quote.ts shows it.

import { IPAllocatorError, InvalidArgumentError } from './errors.ts';
import { cutText, quoteInput, showUnseen, symbolText } from './quote.ts';

/**
 * Whether an options argument is an object of the language's own that keeps its contents
 * elsewhere than in properties (a Map's entries, a Promise's value, a Date): read as options it
 * would have none, and each allocator would silently get a store of its own.
 */
function isBuiltInContainer(o: object): boolean {
  if (typeof (o as { then?: unknown }).then === 'function') return true; // a missing await
  return Object.prototype.toString.call(o) !== '[object Object]';
}

/**
 * InvalidArgumentError unless `family` is "IPv4" or "IPv6" (`what` names it in the message); a
 * spelling that differs only in case is named, as "did you mean".
 * @internal
 */
export function checkIPFamily(family: unknown, what = 'family'): asserts family is 'IPv4' | 'IPv6' {
  if (family === 'IPv4' || family === 'IPv6') return;
  const near = typeof family === 'string' ? ['IPv4', 'IPv6'].find((f) => f.toLowerCase() === family.toLowerCase()) : undefined;
  throw new InvalidArgumentError(
    `${what} must be "IPv4" or "IPv6", got ${quoteInput(family)}${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
  );
}

/** setReady's argument: true or false, else InvalidArgumentError (isReady() answers a boolean). @internal */
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
 * @internal
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
    // a store passed bare where its options go (`new Allocator(cidr, store)`, which TypeScript
    // refuses but JavaScript does not) would be refused for its own fields, named as options
    if (given === 'options' && looksLikeStore(options)) {
      throw new InvalidArgumentError(
        `${what} options must be an object whose properties are the options, got a store (create, delete, get and a cache): ${
          Object.hasOwn(known, 'store') ? 'pass it as { store }' : `${what} takes no store among its options`
        }`,
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
    throw new InvalidArgumentError(
      `${subject} has no option ${quoteInput(key)}${didYouMean(key, names)}; its options: ${names.join(', ')}`,
    );
  }
  const read: Record<string, unknown> = {};
  for (const key of names) read[key] = readMember(options, key, given);
  return read as T;
}

/** A Store's shape (adapters/store.ts): create, delete and get functions, and a cache. */
function looksLikeStore(o: object): boolean {
  const s = o as { create?: unknown; delete?: unknown; get?: unknown; cache?: unknown };
  return typeof s.create === 'function' && typeof s.delete === 'function' && typeof s.get === 'function' && typeof s.cache === 'object';
}

/** Makes the error a module answers bad input with, from its message (InvalidArgumentError's by default). @internal */
export type RefuseInput = (message: string) => IPAllocatorError;

const invalidArgument: RefuseInput = (message) => new InvalidArgumentError(message);

/**
 * The error for input that threw when read — a revoked Proxy, a getter or Proxy trap that throws:
 * InvalidArgumentError naming `what` (`options.store`, `owner`, `ips[3]`: see readMember for how)
 * and what the read threw, which is its `cause`; `refuse` makes another class where a module
 * answers bad input with its own (a store's InvalidRecordError). One of our own errors passes
 * unchanged: a getter that called back into this package got that answer (ErrDestroyed from a
 * destroyed allocator).
 * @internal
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
 * @internal
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
 * @internal
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
 * @internal
 */
export function readElements(list: unknown, length: number, what: string): unknown[] {
  const copy: unknown[] = [];
  for (let i = 0; i < length; i++) copy.push(readMember(list as object, i, what));
  return copy;
}

/** True for `{}`-like objects: not arrays, dates, maps or class instances. @internal */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `base.key` for a key that is a plain name, else `base["key"]` (quoted, whatever it holds) or `base[Symbol(…)]`, `base[3]`. @internal */
export function memberName(base: string, key: string | symbol | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (typeof key === 'symbol') return `${base}[${symbolText(key)}]`;
  // a plain name is written as is only while quoteInput would not cut it
  return key.length <= 64 && /^[A-Za-z_$][\w$]*$/.test(key) ? `${base}.${key}` : `${base}[${quoteInput(key)}]`;
}

/** Whether `thrown` is one of our errors; false for a thrown revoked Proxy (instanceof would throw on it). */
function isOurs(thrown: unknown): thrown is IPAllocatorError {
  try {
    return thrown instanceof IPAllocatorError;
  } catch {
    return false;
  }
}

/** `TypeError: message` for an Error, else the value as quoteInput names it; never throws, whatever was thrown. @internal */
export function thrownText(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const text = `${String(thrown.name)}: ${String(thrown.message)}`;
      return showUnseen(text.length > 200 ? `${cutText(text, 200)}…` : text);
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
 * @internal
 */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  return typed === '' ? undefined : names.find((name) => isNear(typed, name));
}

/**
 * ` (did you mean "name"?)` when `typed` is text that looks like a misspelling of one of `names`
 * (nearestName): an option's value (a policy, a strategy, an index kind) or an option's name;
 * else the empty string. For the end of the message that refuses it.
 * @internal
 */
export function didYouMean(typed: unknown, names: readonly string[]): string {
  const near = typeof typed === 'string' ? nearestName(typed, names) : undefined;
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
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

/**
 * What a public method of `type` (a class named `className`) throws or rejects with once it has
 * failed: `error` as it came when the method ran on an object of the class (an instance, a
 * subclass's, or one made from it with Object.create), else InvalidArgumentError — the method
 * was called without its object: taken off it (`const { release } = allocator`) or passed as a
 * function (`ips.map(allocator.release)`, `setTimeout(allocator.destroy)`), where `this` is
 * undefined or some other object. Such a call fails at its first read of `this`, so a method
 * asks here only on its failing path, and a call on its object pays nothing for the check.
 * @internal
 */
export function unboundOr(
  error: unknown,
  self: unknown,
  type: abstract new (...args: never[]) => object,
  className: string,
  method: string,
): unknown {
  let bound: boolean;
  try {
    bound = self instanceof type;
  } catch {
    bound = false; // a Proxy whose getPrototypeOf trap throws: no object of the class to call on
  }
  return bound ? error : unboundCall(self, className, method);
}

/**
 * InvalidArgumentError for `className.method()` called without its object (`self`: what `this`
 * was), saying how to call it. unboundOr's, and the check of a method that reads nothing of
 * `this` before it could fail (a dry-run view's no-ops).
 * @internal
 */
export function unboundCall(self: unknown, className: string, method: string): InvalidArgumentError {
  const object = objectNamed(className);
  const member = method.startsWith('[') ? method : `.${method}`; // a symbol's, '[Symbol.dispose]', in brackets
  return new InvalidArgumentError(
    `${className}${member}() was called without its ${className} (this was ${quoteInput(self)}): call it on the object, ${object}${member}(…); where a function is passed (a callback, a method taken off the object), pass an arrow function, (…) => ${object}${member}(…)`,
  );
}

/**
 * InvalidArgumentError for the getter `className.getter` read without its object (`self`: what
 * `this` was: `Object.getOwnPropertyDescriptor(Range.prototype, 'indexKind').get.call(other)`,
 * or a Proxy whose get trap passes another receiver), as unboundCall says it of a method: the
 * typed error a method gives, not the TypeError of the getter's first read of a field.
 * @internal
 */
export function unboundRead(self: unknown, className: string, getter: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `${className}.${getter} was read without its ${className} (this was ${quoteInput(self)}): read it on the object, ${objectNamed(className)}.${getter}`,
  );
}

/** How a message names an object of `className` in code: `range` for Range, `metaAllocator`. */
function objectNamed(className: string): string {
  return className.charAt(0).toLowerCase() + className.slice(1);
}

/**
 * The class a static factory (`Allocator.create`, `Range.fromSnapshot`) was called on, when it
 * is `base` or a subclass of it, so that it makes what `new` on that class would; else (called
 * without its class: `const { create } = Allocator`) `base`.
 * @internal
 */
export function classCalledOn<C extends abstract new (...args: never[]) => object>(self: unknown, base: C): C {
  return typeof self === 'function' && (self === base || self.prototype instanceof base) ? (self as C) : base;
}
