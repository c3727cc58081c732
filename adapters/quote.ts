// How a value from elsewhere is shown in a message: text quoted with what a reader could not see
// escaped, any other value named by its kind (`an array of 3 values`, `a Map`, `the class
// MemoryStore`), never by its contents or source. The typed errors (errors.ts) quote their input
// with it, and so do the checks of caller input (input.ts), the command line and the messages
// about answers of the Kubernetes API: one wording everywhere. It imports nothing, so the error
// classes can use it without depending on the input checks, which throw those classes.

/** Characters a reader cannot see or tell apart: controls, format characters (zero-width space, BOM, soft hyphen), separators other than the plain space, and code points without a glyph. */
const UNSEEN = /[\p{C}\p{Z}]/gu;

/** What quoteText escapes: the quote and the backslash, and what UNSEEN names. */
const QUOTED = /["\\]|[\p{C}\p{Z}]/gu;

/** Go's escapes of the ASCII controls that have a letter of their own. */
const LETTER_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/**
 * `text` in double quotes with every character a reader could not see escaped, written as Go's
 * strconv.Quote (%q) writes it: "10.0.0.1\u200b", not a quote that looks like "10.0.0.1"; the
 * ASCII controls as \n, \t, \x00, \x1b, \x7f, code points above U+FFFF as \U000e0001.
 * @internal
 */
export function quoteText(text: string): string {
  // a name from a kubeconfig may be no text at run time (YAML reads `name: 5` as a number)
  if (typeof text !== 'string') return quoteInput(text);
  return `"${text.replace(QUOTED, goEscape)}"`;
}

function goEscape(c: string): string {
  if (c === ' ') return c;
  const letter = LETTER_ESCAPES[c];
  if (letter !== undefined) return letter;
  const cp = c.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp > 0xffff) return `\\U${cp.toString(16).padStart(8, '0')}`;
  return `\\u${cp.toString(16).padStart(4, '0')}`; // a lone surrogate too (Go, given its bytes, writes \x for each)
}

/**
 * `text` with every character a reader could not see written as an escape (`\u200b`, `\u001b`,
 * `\u000a`): for showing text from elsewhere on a terminal, where a control character could
 * move the cursor, recolour or clear the screen, or start a line that looks like ours.
 * @internal
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
 * @internal
 */
export function inElement(message: string, element: string): string {
  return `${message} (${element})`;
}

/**
 * The first `n` UTF-16 units of `text`, or one fewer when the cut would fall between the two
 * halves of a character outside the BMP (an emoji): the half left would be quoted as an escape
 * (`\ud83d`) of a character the text does not hold.
 * @internal
 */
export function cutText(text: string, n: number): string {
  if (text.length <= n) return text;
  const lead = text.charCodeAt(n - 1);
  return text.slice(0, lead >= 0xd800 && lead <= 0xdbff ? n - 1 : n);
}

/**
 * 1234567 → "1,234,567" (numbers, bigints or decimal strings; sizes exceed 2^53): the one way
 * counts and sizes are written in messages. Only the whole part is grouped: a caller's 1234.5678
 * is "1,234.5678", and 2 ** 70, which JavaScript writes 1.1805916207174113e+21, stays so.
 * Addresses, prefix lengths, ports, offsets and versions are not counts: they are written as is.
 * @internal
 */
export function formatCount(n: number | bigint | string): string {
  const s = typeof n === 'string' ? n : n.toString();
  return s.replace(/^-?\d+/, (whole) => whole.replace(/\B(?=(\d{3})+$)/g, ','));
}

/** Shortens an input for quoting in a message: strings are quoted (quoteText), long ones cut. @internal */
export function quoteInput(input: unknown): string {
  if (typeof input === 'string') {
    if (input.length > 64) return `${quoteText(cutText(input, 64))}… (${formatCount(input.length)} characters)`;
    return quoteText(input);
  }
  if (input === null || input === undefined) return String(input);
  if (typeof input === 'bigint') return `${input}n`;
  if (typeof input === 'object') return objectKind(input);
  if (typeof input === 'function') return functionName(input as (...args: never[]) => unknown);
  if (typeof input === 'symbol') return `${symbolText(input)} (symbol)`;
  return `${String(input)} (${typeof input})`;
}

/**
 * `Symbol(description)` with the description's unseen characters escaped, as a string's are, and
 * cut as quoteInput cuts text: `Symbol(zone)`, `Symbol(kkk…… (1,000,000 characters))`.
 * @internal
 */
export function symbolText(symbol: symbol): string {
  const description = symbol.description;
  if (description === undefined) return 'Symbol()';
  if (description.length > 64) return `Symbol(${showUnseen(cutText(description, 64))}… (${formatCount(description.length)} characters))`;
  return `Symbol(${showUnseen(description)})`;
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
 * @internal
 */
export function classOf(o: object): string {
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto === Object.prototype || proto === null) return 'a value of type object';
  const ctor: unknown =
    typeof proto === 'object' && proto !== null ? Object.getOwnPropertyDescriptor(proto, 'constructor')?.value : undefined;
  const name: unknown = typeof ctor === 'function' ? Object.getOwnPropertyDescriptor(ctor, 'name')?.value : undefined;
  if (typeof name !== 'string' || name === '') return 'an object whose prototype is not Object.prototype';
  const shown = showUnseen(cutText(name, 64));
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
 * A function by its name, not its source (which String() gives: a whole class, for `MemoryStore`
 * without `new`). Only a name its source says: an arrow, an anonymous function or class is named
 * by JavaScript after the key or variable it was assigned to (`{ strategy: () => 0 }` is
 * "strategy"), a name that says nothing of the value and reads as if it were a function of that name.
 */
function functionName(f: (...args: never[]) => unknown): string {
  let name = '';
  let isClass = false;
  try {
    const source = Function.prototype.toString.call(f);
    isClass = /^class\b/.test(source);
    const own = f.name;
    const named = NATIVE_SOURCE.test(source) || !ANONYMOUS_SOURCE.test(source);
    if (typeof own === 'string' && own !== '' && named) name = quoteText(cutText(own, 64));
  } catch {
    // a Proxy of a function whose traps throw, or a revoked one: no name or source to read
  }
  if (isClass) return name === '' ? 'a class (a missing `new`?)' : `the class ${name} (a missing \`new\`?)`;
  return name === '' ? 'a function' : `the function ${name}`;
}

/**
 * The source of a function that names none: an arrow (`() => 0`, `x => x`, `async () => 0`), an
 * anonymous function expression (`function () {}`, `function* () {}`) or class (`class {}`,
 * `class extends Base {}`). A built-in, a bound function or a Proxy shows no source (NATIVE_SOURCE),
 * and is named by its name.
 */
const ANONYMOUS_SOURCE =
  /^(?:(?:async\s*)?(?:\(|[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*\s*=>)|(?:async\s+)?function\s*\*?\s*\(|class\s*(?:\{|extends\b))/u;

/** The source a built-in, a bound function or a Proxy of a function shows. */
const NATIVE_SOURCE = /\{\s*\[native code\]\s*\}$/;
