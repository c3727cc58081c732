// How `console.log(x)` and `util.inspect(x)` show the public objects: a line of what a user asks
// them (`Range { cidr: '10.0.0.0/16', used: 3, free: 65531n }`), not the internals that hold it
// (the prefix's words, the index's handle, the strategy's tables: about 90 lines for a Range).
// Node calls a method under Symbol.for('nodejs.util.inspect.custom') with (depth, options,
// inspect); Deno's console calls the same method with the same arguments. Each class declares the
// method and names what it shows; this module makes the text. It runs only when something is
// inspected: nothing on any call path.
import { ErrDestroyed } from './errors.ts';
import { unboundCall } from './input.ts';

/** The key Node's util.inspect (so console.log) and Deno's console look for. */
export const INSPECT: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;

/** How a message names the method under INSPECT (unboundCall). */
const INSPECT_MEMBER = "[Symbol.for('nodejs.util.inspect.custom')]";

/** What Node and Deno pass as the options of an inspection: those read here. */
export interface InspectOptions {
  readonly depth?: number | null;
  readonly stylize?: (text: string, style: string) => string;
}

/**
 * The text of `self` (an instance of `own`, named `className`, or of a subclass, named as its
 * constructor is) showing
 * `fixed()`, the fields it always has, and `live()`, those read from it now. An object destroyed or
 * closed (live() throws ErrDestroyed) shows its fixed fields and `destroyed: true`; another error
 * of live() (a subclass's override) shows as `unreadable: message`: an inspection of an object
 * never throws. The method called without its object (`range[INSPECT].call(undefined)`, `self`
 * no `own`) throws unboundCall's InvalidArgumentError, as the other methods do, before either
 * is read. Nested past the depth, it is `[Range]`, as Node shows a plain object there. `inspect`
 * is the runtime's own (util.inspect, Deno.inspect), which colours and indents the fields as it
 * does any object; without it (the method called by hand) the fields are written plainly.
 * @internal
 */
export function inspection(
  self: unknown,
  own: abstract new (...args: never[]) => unknown,
  className: string,
  fixed: () => Readonly<Record<string, unknown>>,
  live: () => Readonly<Record<string, unknown>>,
  depth: number,
  options: InspectOptions | undefined,
  inspect: ((value: unknown, options?: object) => string) | undefined,
): string {
  if (!isOf(self, own)) throw unboundCall(self, className, INSPECT_MEMBER);
  const name = constructorName(self, own) ?? className;
  if (typeof depth === 'number' && depth < 0) {
    const text = `[${name}]`;
    return typeof options?.stylize === 'function' ? options.stylize(text, 'special') : text;
  }
  const always = fixed();
  let shown: Record<string, unknown>;
  try {
    shown = { ...always, ...live() };
  } catch (e) {
    shown = {
      ...always,
      ...(e instanceof ErrDestroyed ? { destroyed: true } : { unreadable: e instanceof Error ? e.message : String(e) }),
    };
  }
  if (typeof inspect !== 'function') return `${name} ${plain(shown)}`;
  // `depth` is what is left at this object (options.depth is the whole inspection's); the fields
  // are this object's own level, so they are shown with that depth, as a plain object's would be:
  // `depth - 1` showed `Range [Object]` at depth 0 (util.inspect(range, { depth: 0 }), '%s')
  return `${name} ${inspect(shown, { ...options, depth: typeof depth === 'number' ? depth : options?.depth })}`;
}

/**
 * Whether `self` is an object of `own` (an instance, a subclass's, one made from it with
 * Object.create, a Proxy of one). A Proxy whose getPrototypeOf trap throws is taken as one: it is
 * shown as far as it can be read.
 */
function isOf(self: unknown, own: abstract new (...args: never[]) => unknown): boolean {
  try {
    return self instanceof own;
  } catch {
    return true;
  }
}

/**
 * The name of a subclass of `own` that `self` is an instance of, or undefined for `own` itself
 * (its name is the caller's literal: a minifier renames the class, `Range.name` is then 'A') and
 * when there is none to read.
 */
function constructorName(self: unknown, own: unknown): string | undefined {
  try {
    const made = (Object.getPrototypeOf(self) as { constructor?: { name?: unknown } } | null)?.constructor;
    if (made === own) return undefined;
    const name = made?.name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined; // a Proxy whose getPrototypeOf trap throws
  }
}

/** `{ cidr: '10.0.0.0/16', used: 3 }` without a runtime's inspect: strings quoted, bigints with n, arrays and objects nested. */
function plain(v: unknown): string {
  if (typeof v === 'string') return `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[ ${v.map(plain).join(', ')} ]`;
  if (typeof v === 'object' && v !== null) {
    const own = (v as { [INSPECT]?: unknown })[INSPECT];
    if (typeof own === 'function') return String(own.call(v, 0, {}, undefined)); // an allocator of a pair
    const fields = Object.entries(v).map(([k, x]) => `${k}: ${plain(x)}`);
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  return String(v);
}
