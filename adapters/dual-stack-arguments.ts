// What a DualStackAllocator's calls take, read once and checked before anything is written:
// the addresses of allocate and release (an array of one or two, at most one per family, or for
// release what allocate returned, as it came), and allocateNext's owner and families. Each
// refusal says what was given and what to pass instead: an array with a field besides its
// addresses, an answer with a field it never has or one that says other than its `ips`, a
// String object or a typed array, the families given where the owner goes. Each throws
// InvalidArgumentError (InvalidAddressError for an address's text), so nothing is taken or
// released when one fails.
import { canonicalOf, type Family, parseAddrInto } from './address.ts';
import { InvalidAddressError, InvalidArgumentError } from './errors.ts';
import { arrayLength, checkIPFamily, didYouMean, memberName, readElements, readMember, unreadableInput } from './input.ts';
import { inElement, quoteInput, quoteText } from './quote.ts';
import type { IPFamily } from './types.ts';

/** Both families, in the order allocateNext takes them by default. @internal */
export const BOTH: readonly IPFamily[] = Object.freeze(['IPv4', 'IPv6']);

/** The addresses of a call: canonical text, and the family of each, in the caller's order. @internal */
export interface CallAddresses {
  canonical: string[];
  families: IPFamily[];
}

/**
 * allocate's `ips`, read once: an array of one or two addresses, at most one per family, and no
 * field besides them. Throws InvalidArgumentError / InvalidAddressError.
 * @internal
 */
export function allocateAddresses(ips: unknown): CallAddresses {
  const length = arrayLength(ips, 'ips');
  if (length === undefined) throw notAnArray(ips);
  checkArrayFields(ips as object, length, 'ips', 'allocate'); // an array: arrayLength measured it
  return familiesOf(ips, length, 'ips');
}

/**
 * release's `ips`, read once: an array as allocate takes it, or what allocate returned (an object
 * whose `ips` is that array, with no field the answer has not, and whose `IPv4`, `IPv6` and
 * `families` agree with its `ips`). Throws InvalidArgumentError / InvalidAddressError.
 * @internal
 */
export function releaseAddresses(ips: unknown): CallAddresses {
  if (typeof ips !== 'object' || ips === null) {
    const hint = typeof ips === 'string' ? `: pass an array of addresses, such as [${quoteInput(ips)}]` : '';
    throw new InvalidArgumentError(`release needs the addresses (an array, or what allocate returned), got ${quoteInput(ips)}${hint}`);
  }
  let length = arrayLength(ips, 'ips');
  let list: unknown = ips;
  let what = 'ips';
  if (length !== undefined) checkArrayFields(ips, length, what, 'release');
  else {
    checkAnswerFields(ips);
    list = readMember(ips, 'ips', 'ips'); // what allocate returned
    what = 'ips.ips';
    length = arrayLength(list, what);
    if (length === undefined) {
      throw new InvalidArgumentError(
        `release needs the addresses: an array, or what allocate returned (an object whose ips is an array), got ips ${quoteInput(list)}`,
      );
    }
    checkArrayFields(list as object, length, what, 'release');
  }
  const addresses = familiesOf(list, length, what);
  if (list !== ips) checkAnswerAgrees(ips, addresses.canonical, addresses.families);
  return addresses;
}

/** The fields of what allocate and allocateNext return (DualStackIPs): release takes no others. */
const ANSWER_FIELDS: readonly string[] = ['ips', 'families', 'IPv4', 'IPv6'];

/** What release's refusals of an object it was given end with. */
const AS_IT_CAME = 'pass what allocate returned as it came, or an array of the addresses';

/**
 * InvalidArgumentError naming the first own field of `given`, release's object argument, that
 * what allocate returns has not (unless it is undefined, as an options object's), before its
 * `ips` is read: `{ ips, ipv6 }` would otherwise release `ips` and ignore the rest in silence.
 * An object with elements and no array (a String object, a typed array) is refused as that.
 */
function checkAnswerFields(given: object): void {
  let keys: string[];
  try {
    keys = Object.keys(given);
  } catch (e) {
    throw unreadableInput('ips', e); // a revoked Proxy
  }
  for (const key of keys) {
    if (ANSWER_FIELDS.includes(key) || readMember(given, key, 'ips') === undefined) continue;
    // the first key listed when it has elements (an object lists its indices first): an array-like
    // (a String object, a typed array), which is no answer with a field "0" — unless it has an ips
    if (key === '0' && readMember(given, 'ips', 'ips') === undefined) {
      throw new InvalidArgumentError(
        `release needs the addresses: an array, or what allocate returned; got ${quoteInput(given)}, which has elements but is no array`,
      );
    }
    // the field of that name in another case first: `ipv6` is nearer to `ips`, and to `IPv4`, by edits
    const sameName = ANSWER_FIELDS.find((field) => field.toLowerCase() === key.toLowerCase());
    const hint = sameName === undefined ? didYouMean(key, ANSWER_FIELDS) : ` (did you mean "${sameName}"?)`;
    throw new InvalidArgumentError(
      `release: ips has no field ${quoteInput(key)}${hint}; what allocate returns has ips, families, IPv4 and IPv6`,
    );
  }
}

/**
 * InvalidArgumentError naming the first own field of `given`, an array of `length` elements that
 * `method` was given (`what`: `ips`, or `ips.ips` in an answer given to release), that is no
 * element (unless it is undefined): an array is the addresses alone, and
 * `Object.assign([a], { IPv6: b })` would otherwise allocate or release `a` and ignore `b` in
 * silence, as an object mixing two answers would (checkAnswerFields).
 */
function checkArrayFields(given: object, length: number, what: string, method: 'allocate' | 'release'): void {
  // an array of more than two is refused for its length (familiesOf) without listing its keys,
  // which for a huge array would take seconds
  if (length > 2) return;
  let keys: string[];
  try {
    keys = Object.keys(given);
  } catch (e) {
    throw unreadableInput(what, e); // a revoked Proxy's ownKeys
  }
  for (const key of keys) {
    if (isIndexBelow(key, length) || readMember(given, key, what) === undefined) continue;
    const or = method === 'release' ? ', or what allocate returned as it came' : '';
    throw new InvalidArgumentError(
      `${method}: ${what} is an array with a field ${quoteInput(key)} besides its addresses: pass an array of the addresses alone${or}`,
    );
  }
}

/** Whether `key` is the name of an element of an array of `length` elements: "0", "1", … */
function isIndexBelow(key: string, length: number): boolean {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key;
}

/**
 * InvalidArgumentError naming the field of `given`, release's object argument, that says other
 * than its `ips` (whose addresses are `canonical`, of `families`): an `IPv4` or `IPv6` that is
 * not the address of that family in `ips` (in any spelling), or names one `ips` lacks; `families`
 * that are not theirs, in order. Each is read once; one left undefined says nothing. Only `ips`
 * is released, so an object mixing two answers, or an answer and an address edited in, would
 * release other addresses than it names.
 */
function checkAnswerAgrees(given: object, canonical: readonly string[], families: readonly IPFamily[]): void {
  for (const family of BOTH) {
    const said = readMember(given, family, 'ips');
    if (said === undefined) continue;
    const i = families.indexOf(family);
    if (i >= 0 && canonicalAnswer(said, family) === canonical[i]) continue;
    const holds = i >= 0 ? `holds ${canonical[i]}` : `holds no ${family} address`;
    throw new InvalidArgumentError(`release: ips.${family} is ${quoteInput(said)}, but ips.ips ${holds}: ${AS_IT_CAME}`);
  }
  const said = readMember(given, 'families', 'ips');
  if (said === undefined) return;
  const length = arrayLength(said, 'ips.families');
  const listed = length === undefined ? undefined : readElements(said, length, 'ips.families');
  if (listed?.length === families.length && listed.every((f, i) => f === families[i])) return;
  const shown = listed === undefined ? quoteInput(said) : `[${listed.map((f) => quoteInput(f)).join(', ')}]`;
  throw new InvalidArgumentError(
    `release: ips.families is ${shown}, but the addresses of ips.ips are ${families.join(', ')} in that order: ${AS_IT_CAME}`,
  );
}

/** `families` read once and checked: one or two IP families, different ones. @internal */
export function checkFamilies(families: unknown): IPFamily[] {
  const length = arrayLength(families, 'families');
  if (length === undefined || length < 1 || length > 2) {
    throw new InvalidArgumentError(`families must list one or two IP families, got ${quoteInput(families)}`);
  }
  const given = readElements(families, length, 'families');
  for (const f of given) checkIPFamily(f);
  if (given.length === 2 && given[0] === given[1]) {
    throw new InvalidArgumentError(`families must differ, got ${quoteInput(given[0])} twice`);
  }
  return given as IPFamily[];
}

/**
 * The canonical text and family of each address of `ips` (named `what`, its arrayLength
 * `length`), read once: what is parsed is what is allocated. Throws InvalidAddressError /
 * InvalidArgumentError.
 */
function familiesOf(ips: unknown, length: number | undefined, what: string): CallAddresses {
  if (length === undefined || length < 1 || length > 2) {
    throw new InvalidArgumentError(`a Service has one or two ClusterIPs, got ${quoteInput(ips)}`);
  }
  const given = readElements(ips, length, what);
  const canonical: string[] = [];
  const families: IPFamily[] = [];
  for (let i = 0; i < given.length; i++) {
    const ip = given[i];
    let family: Family;
    try {
      family = parseAddrInto(ip, WORDS);
    } catch (e) {
      // which element: `ParseAddr(undefined): expected a string` alone does not say (a hole)
      if (e instanceof InvalidAddressError) throw new InvalidAddressError(e.input, inElement(e.reason, memberName(what, i)));
      throw e;
    }
    families.push(family === 4 ? 'IPv4' : 'IPv6');
    canonical.push(canonicalOf(ip as string, family, WORDS)); // a string: parseAddrInto took it
  }
  if (families.length === 2 && families[0] === families[1]) {
    throw new InvalidArgumentError(
      `at most one address per family, got two ${families[0]} addresses: ${quoteText(given[0] as string)} and ${quoteText(given[1] as string)}`,
    );
  }
  return { canonical, families };
}

/**
 * allocate's refusal of `ips`, which is no array, with what to pass instead: for one address as
 * text, an array holding it; for an object with an `ips` (what allocate or allocateNext
 * returned), its `.ips`.
 */
function notAnArray(ips: unknown): InvalidArgumentError {
  let hint = '';
  if (typeof ips === 'string') hint = `: pass an array of addresses, such as [${quoteInput(ips)}]`;
  else if (typeof ips === 'object' && ips !== null && readMember(ips, 'ips', 'ips') !== undefined) {
    hint = ': to allocate the addresses of what allocate or allocateNext returned, pass its .ips';
  }
  return new InvalidArgumentError(`a Service has one or two ClusterIPs, got ${quoteInput(ips)}${hint}`);
}

/**
 * InvalidArgumentError when allocateNext's first argument, the owner, is an IP family or an
 * array, which no owner is: the families, most likely, given first.
 * @internal
 */
export function checkNotFamilies(given: unknown): void {
  let isArray: boolean;
  try {
    isArray = Array.isArray(given);
  } catch {
    return; // a revoked Proxy: checkParentRef refuses it
  }
  if (!isArray && given !== 'IPv4' && given !== 'IPv6') return;
  const example = isArray ? 'families' : `[${quoteInput(given)}]`;
  throw new InvalidArgumentError(
    `allocateNext: its first argument is the owner (a ParentRef, or null for none), got ${quoteInput(given)}; the families are its second argument: allocateNext(null, ${example})`,
  );
}

/** familiesOf's parse: the words of one address at a time, read at once by canonicalOf. */
const WORDS = new Uint32Array(4);

/**
 * The canonical text of an allocator's allocateNext answer (record names are canonical, and so
 * are the pair's answers), or null when it is not an address of `family`.
 * @internal
 */
export function canonicalAnswer(answer: unknown, family: IPFamily): string | null {
  if (typeof answer !== 'string') return null;
  let parsed: number;
  try {
    parsed = parseAddrInto(answer, WORDS);
  } catch {
    return null;
  }
  if (parsed !== (family === 'IPv4' ? 4 : 6)) return null;
  return canonicalOf(answer, parsed, WORDS);
}
