// records.ts: the owner check every allocator call makes, and the record check a store makes at
// its door (upstream pkg/apis/networking/validation ValidateIPAddress with the strict IsValidIP).
import { describe, expect, it } from 'vitest';
import { checkParentRef, hasAllocatorLabels, labelsFor, parseRecordName, validateRecord, writeLabelsFor } from '../adapters/records.ts';
import { formatAddr, formatIPv6, isCanonical } from '../adapters/address.ts';
import { InvalidArgumentError, InvalidRecordError } from '../adapters/errors.ts';
import { seededRandom } from '../adapters/random.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { Allocator } from '../adapters/index.ts';
import { labelProblems } from '../adapters/label-rules.ts';

const labels6 = allocatorLabels('IPv6');

/** The InvalidRecordError validateRecord throws for `name`, or undefined when it accepts it. */
function refusal(name: string): InvalidRecordError | undefined {
  try {
    validateRecord({ name, labels: labels6, parentRef: null });
    return undefined;
  } catch (e) {
    if (!(e instanceof InvalidRecordError)) throw e;
    return e;
  }
}

describe('checkParentRef: an owner has the shape of upstream ParentReference', () => {
  it.each([
    // Regression: these ended without the example an owner's other refusals give
    [
      'text (a Service named, not its reference)',
      'web',
      /^owner: Invalid value: "web": must be an object \{group\?, resource, namespace\?, name\}, e\.g\. \{ group: '', resource: 'services', namespace: 'default', name: 'web' \}$/,
    ],
    ['a number', 42, /owner: Invalid value: 42 \(number\)/],
    ['a symbol', Symbol('svc'), /owner: Invalid value: Symbol\(svc\) \(symbol\)/],
    ['an array', ['services', 'web'], /owner: Invalid value: an array of 2 values/],
    ['a Date', new Date(0), /^owner: Invalid value: a Date: only an owner's own enumerable fields are read/],
    // Regression: these said "a value of type object: must be an object {…}", then named no kind
    [
      'a Map',
      new Map([['resource', 'services']]),
      /^owner: Invalid value: a Map: only an owner's own enumerable fields are read, and it has none: resource and name are required; an owner is \{group\?, resource, namespace\?, name\}, e\.g\. \{ group: '', resource: 'services', namespace: 'default', name: 'web' \}$/,
    ],
    [
      'an owner made with Object.create(fields)',
      Object.create({ group: '', resource: 'services', namespace: 'default', name: 'web' }),
      /^owner: Invalid value: an object whose prototype is not Object\.prototype: only an owner's own enumerable fields are read, and it has none: its group, resource, namespace and name are inherited, as from Object\.create or a class's getters, or not enumerable; an owner is \{group\?, resource, namespace\?, name\}, e\.g\. \{ group: '', resource: 'services', namespace: 'default', name: 'web' \}$/,
    ],
    [
      'an instance whose fields are getters of its class',
      new (class Svc {
        get resource() {
          return 'services';
        }
        get name() {
          return 'web';
        }
      })(),
      /^owner: Invalid value: an instance of Svc: only an owner's own enumerable fields are read, and it has none: its resource and name are inherited/,
    ],
    [
      'an instance with only a name getter',
      new (class Named {
        get name() {
          return 'web';
        }
      })(),
      /and it has none: its name is inherited, as from Object\.create or a class's getters, or not enumerable, and resource is required; an owner is /,
    ],
    [
      'an owner with a field of its own and the required ones inherited',
      Object.create({ resource: 'services', name: 'web' }, { namespace: { value: 'default', enumerable: true } }),
      /^owner\.resource: Required value; owner\.name: Required value; only an owner's own enumerable fields are read: its resource and name are inherited/,
    ],
    // Regression: inherited optional fields were dropped without a word, the record then naming
    // another parent (no namespace, or the core group)
    [
      'an owner whose namespace and group are inherited',
      Object.assign(Object.create({ group: 'apps', namespace: 'prod' }), { resource: 'services', name: 'web' }),
      /^only an owner's own enumerable fields are read: its group and namespace are inherited, as from Object\.create or a class's getters, or not enumerable; an owner is /,
    ],
    [
      'an instance of a class with a namespace getter',
      new (class ServiceRef {
        resource = 'services';
        name = 'web';
        get namespace() {
          return 'prod';
        }
      })(),
      /^only an owner's own enumerable fields are read: its namespace is inherited/,
    ],
    ['no resource', { name: 'web' }, /owner\.resource: Required value/],
    [
      'a namespace and a name only, the shape and an example said after',
      { namespace: 'default', name: 'web' },
      /^owner\.resource: Required value; an owner is \{group\?, resource, namespace\?, name\}, e\.g\. \{ group: '', resource: 'services', namespace: 'default', name: 'web' \}$/,
    ],
    ['an empty name', { resource: 'services', name: '' }, /owner\.name: Required value/],
    ['a number as name', { resource: 'services', name: 5 }, /owner\.name: Invalid value: 5 \(number\): must be a string/],
    ['a null namespace', { resource: 'services', namespace: null, name: 'web' }, /owner\.namespace: Invalid value: null: must be a string/],
    ['an unknown field', { resource: 'services', name: 'web', uid: '1234' }, /owner\.uid: Unknown field/],
    ['a name with a slash', { resource: 'services', name: 'a/b' }, /owner\.name: Invalid value: "a\/b": may not contain '\/'/],
    ['a name that is ..', { resource: 'services', name: '..' }, /owner\.name: Invalid value: "\.\.": may not be '\.\.'/],
    ['a group with upper case', { group: 'Apps', resource: 'services', name: 'web' }, /owner\.group: Invalid value: "Apps"/],
  ])('refuses %s with InvalidArgumentError quoting what is wrong', (_, owner, message) => {
    expect(() => checkParentRef(owner)).toThrow(InvalidArgumentError);
    expect(() => checkParentRef(owner)).toThrow(message);
  });

  // upstream IsDNS1123Subdomain: the length is its own problem, named first, and both when both hold
  const SUBDOMAIN =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  it.each([
    ['valid characters, too long', 'x'.repeat(254), ['must be no more than 253 characters']],
    ['the longest', 'x'.repeat(253), []],
    ['too long and upper case', 'X'.repeat(254), ['must be no more than 253 characters', SUBDOMAIN]],
    ['upper case', 'Apps', [SUBDOMAIN]],
  ])('an owner whose group is %s: the owner check and a store door say what upstream says', (_, group, problems) => {
    const owner = { group, resource: 'services', name: 'web' };
    const said = (f: () => unknown): string => {
      try {
        f();
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const fromOwner = said(() => checkParentRef(owner));
    const fromDoor = said(() => validateRecord({ name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: owner }));
    for (const message of [fromOwner, fromDoor]) {
      const found = [...message.matchAll(/group: Invalid value: (?:"[^"]*"(?:… \(\d+ characters\))?): ([^;]*)/g)].map((m) => m[1]);
      expect(found).toEqual(problems);
    }
  });

  it('names every problem at once', () => {
    expect(() => checkParentRef({ resource: '', name: 7, extra: true })).toThrow(
      /owner\.extra: Unknown field; owner\.resource: Required value; owner\.name: Invalid value: 7 \(number\): must be a string/,
    );
  });

  it('returns a frozen copy of a valid owner, and null for no owner', () => {
    const full = { group: '', resource: 'services', namespace: 'default', name: 'web' };
    const short = { resource: 'services', name: 'web' };
    const grouped = { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'ns-1', name: 'gw.1' };
    for (const owner of [full, short, grouped]) {
      const checked = checkParentRef(owner);
      expect(checked).toEqual(owner);
      expect(checked).not.toBe(owner);
      expect(Object.isFrozen(checked)).toBe(true);
    }
    expect(checkParentRef(undefined)).toBeNull();
    expect(checkParentRef(null)).toBeNull();
  });

  it('what is checked is what is stored: fields that are not enumerable do not count, undefined ones are left out, the caller’s object is never frozen', () => {
    const hidden = Object.defineProperties({}, { resource: { value: 'services' }, name: { value: 'web' } });
    expect(() => checkParentRef(hidden)).toThrow(
      /^owner\.resource: Required value; owner\.name: Required value; only an owner's own enumerable fields are read: its resource and name are inherited, as from Object\.create or a class's getters, or not enumerable; an owner is \{group\?, resource, namespace\?, name\}, e\.g\. \{ group: '', resource: 'services', namespace: 'default', name: 'web' \}$/,
    );
    expect(Object.isFrozen(hidden)).toBe(false);
    const sparse = { resource: 'services', namespace: undefined, name: 'web', uid: undefined };
    expect(checkParentRef(sparse)).toEqual({ resource: 'services', name: 'web' });
    expect(Object.isFrozen(sparse)).toBe(false);
  });

  it('an instance of a class is read by its own fields (the ParentRef type allows one)', () => {
    class ServiceRef {
      readonly resource = 'services';
      constructor(
        readonly namespace: string,
        readonly name: string,
      ) {}
    }
    expect(checkParentRef(new ServiceRef('default', 'web'))).toEqual({ resource: 'services', namespace: 'default', name: 'web' });
  });
});

describe('checkParentRef: an owner read from JSON with a "__proto__" key', () => {
  it.each([
    ['a string', '{"resource":"services","name":"web","__proto__":"x"}'],
    ['an object', '{"resource":"services","name":"web","__proto__":{"namespace":"default"}}'],
  ])('refuses the key as an unknown field when it holds %s, as a store refuses the same parentRef', (_, json) => {
    // Regression: the copy assigned the key, which set the copy's prototype (or did nothing):
    // the unknown field was dropped in silence, or the owner refused as not a plain object
    expect(() => checkParentRef(JSON.parse(json))).toThrow(/^owner\.__proto__: Unknown field; an owner is /);
    const store = new MemoryStore();
    expect(() => store.createSync({ name: '10.0.0.1', labels: {}, parentRef: JSON.parse(json) } as never)).toThrow(
      'spec.parentRef.__proto__: Unknown field',
    );
    store.close();
  });
});

// Regression: the copy of an owner assigned its fields (all but "__proto__"), so a key that
// Object.prototype gives a setter ran the setter and was dropped from the copy (an unknown field
// accepted in silence), and one it holds read-only (Object.freeze(Object.prototype)) threw from
// the copy ("owner could not be read"), where the check names the key as an unknown field.
describe('checkParentRef: a key Object.prototype gives a setter or holds read-only', () => {
  it.each([
    ['a setter', { set() {}, configurable: true }],
    ['a read-only value', { value: 'inherited', writable: false, configurable: true }],
  ] as const)('is refused as an unknown field when Object.prototype has %s for it', (_, descriptor) => {
    Object.defineProperty(Object.prototype, 'zone', descriptor);
    try {
      expect(() => checkParentRef({ resource: 'services', name: 'web', zone: 'a' })).toThrow(/^owner\.zone: Unknown field; an owner is /);
    } finally {
      delete (Object.prototype as { zone?: unknown }).zone;
    }
  });

  it('a symbol key Object.prototype gives a setter for is refused as an unknown field too', () => {
    const zone = Symbol('zone');
    Object.defineProperty(Object.prototype, zone, { set() {}, configurable: true });
    try {
      expect(() => checkParentRef({ resource: 'services', name: 'web', [zone]: 'a' })).toThrow(
        /^owner\[Symbol\(zone\)\]: Unknown field; an owner is /,
      );
    } finally {
      delete (Object.prototype as { [zone]?: unknown })[zone];
    }
  });
});

describe('validateRecord: labels are what kube-apiserver takes as labels (ValidateLabels)', () => {
  const own = (labels: Record<string, unknown>) => ({
    name: '10.0.0.1',
    labels: { ...allocatorLabels('IPv4'), ...labels },
    parentRef: null,
  });
  const NAME_PART =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  const VALUE =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  const PREFIX =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  it.each([
    ['a key with a space and a "!"', { 'bad key!': 'x' }, [`metadata.labels: Invalid value: "bad key!": ${NAME_PART}`]],
    ['a key ending in "-"', { 'team-': 'x' }, [`metadata.labels: Invalid value: "team-": ${NAME_PART}`]],
    [
      'an empty key',
      { '': 'x' },
      ['metadata.labels: Invalid value: "": name part must be non-empty', `metadata.labels: Invalid value: "": ${NAME_PART}`],
    ],
    [
      'a key whose name part has 64 characters',
      { ['k'.repeat(64)]: 'x' },
      [`metadata.labels: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`],
    ],
    ['a key with an upper-case prefix', { 'Example.com/team': 'x' }, [`metadata.labels: Invalid value: "Example.com/team": ${PREFIX}`]],
    ['a key with an empty prefix', { '/team': 'x' }, ['metadata.labels: Invalid value: "/team": prefix part must be non-empty']],
    [
      'a key with two "/"',
      { 'a/b/c': 'x' },
      [/^metadata\.labels: Invalid value: "a\/b\/c": a valid label key must consist of .* with an optional DNS subdomain prefix and '\/'/],
    ],
    [
      'a value of 64 characters',
      { team: 'x'.repeat(64) },
      [`metadata.labels["team"]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`],
    ],
    ['a value with a space', { team: 'has space' }, [`metadata.labels["team"]: Invalid value: "has space": ${VALUE}`]],
    ['a value starting with "-"', { team: '-a' }, [`metadata.labels["team"]: Invalid value: "-a": ${VALUE}`]],
    [
      'a bad key and a bad value, and a bad key with a value that is no string',
      { 'a b': 'c d', 'e f': 7 },
      [
        `metadata.labels: Invalid value: "a b": ${NAME_PART}`,
        `metadata.labels["a b"]: Invalid value: "c d": ${VALUE}`,
        `metadata.labels: Invalid value: "e f": ${NAME_PART}`,
        'metadata.labels["e f"]: Invalid value: 7 (number): must be a string',
      ],
    ],
  ])('refuses %s, naming each problem as the API server does', (_, labels, causes) => {
    let err: InvalidRecordError | undefined;
    try {
      validateRecord(own(labels));
    } catch (e) {
      err = e as InvalidRecordError;
    }
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect(err!.causes).toHaveLength(causes.length);
    causes.forEach((c, i) => (typeof c === 'string' ? expect(err!.causes[i]).toBe(c) : expect(err!.causes[i]).toMatch(c)));
  });

  it.each([
    ['a prefixed key', { 'example.com/team': 'web' }],
    ['a key of 63 characters with a prefix of 253', { [`${'a.'.repeat(126)}b/${'k'.repeat(63)}`]: 'x' }],
    ['a value of 63 characters', { team: 'x'.repeat(63) }],
    ['an empty value', { team: '' }],
    ['"-", "_" and "." inside key and value', { 'my_team.name-1': 'a_b.c-d' }],
  ])('accepts %s', (_, labels) => {
    expect(() => validateRecord(own(labels))).not.toThrow();
  });

  it('refuses a symbol key, which a store would otherwise keep; one that is not enumerable is left out, as a store leaves it', () => {
    // Regression: validateRecord read the string keys only, and MemoryStore kept the symbol in the record's labels
    const labels = { team: 'web', [Symbol('team\u202e')]: 'web' };
    const record = { name: '10.0.0.1', labels, parentRef: null };
    const cause = "metadata.labels[Symbol(team\\u202e)]: Invalid value: a label's key must be a string";
    expect(() => validateRecord(record)).toThrow(cause);
    const store = new MemoryStore();
    expect(() => store.createSync(record as never)).toThrow(cause);
    const hidden = { team: 'web' };
    Object.defineProperty(hidden, Symbol('hidden'), { value: 'web', enumerable: false });
    expect(() => validateRecord({ ...record, labels: hidden })).not.toThrow();
    expect(store.createSync({ ...record, labels: hidden } as never).labels).toEqual({ team: 'web' });
    expect(Object.getOwnPropertySymbols(store.records()[0]!.labels)).toEqual([]);
    store.close();
  });

  it('the allocators’ own label sets, which stores take without checking them again, pass the same rule', () => {
    for (const family of ['IPv4', 'IPv6'] as const) {
      for (const [key, value] of Object.entries(allocatorLabels(family))) expect(labelProblems(key, value)).toEqual([]);
    }
  });
});

describe('validateRecord: a parentRef is read as a store copies it', () => {
  it('fields that are not its own enumerable ones are missing, as MemoryStore.createSync finds them', () => {
    // Regression: validateRecord read them and passed the record the store then refused
    const ref = { group: '', namespace: 'default' };
    Object.defineProperty(ref, 'resource', { value: 'services', enumerable: false });
    Object.defineProperty(ref, 'name', { value: 'web', enumerable: false });
    const record = { name: '10.0.0.1', labels: {}, parentRef: ref };
    const required = /spec\.parentRef\.resource: Required value; spec\.parentRef\.name: Required value/;
    expect(() => validateRecord(record)).toThrow(InvalidRecordError);
    expect(() => validateRecord(record)).toThrow(required);
    const store = new MemoryStore();
    expect(() => store.createSync(record as never)).toThrow(required);
    store.close();
  });

  it('a symbol key that is not enumerable is left out, as MemoryStore.createSync leaves it out; an enumerable one is refused', () => {
    // Regression: validateRecord refused a parentRef for a hidden symbol the store's copy drops
    const ref = { resource: 'services', name: 'web' };
    Object.defineProperty(ref, Symbol('hidden'), { value: 1, enumerable: false });
    const record = { name: '10.0.0.1', labels: {}, parentRef: ref };
    expect(() => validateRecord(record)).not.toThrow();
    const store = new MemoryStore();
    expect(() => store.createSync(record as never)).not.toThrow();
    const shown = { name: '10.0.0.2', labels: {}, parentRef: { ...ref, [Symbol('shown')]: 1 } };
    expect(() => validateRecord(shown)).toThrow('spec.parentRef[Symbol(shown)]: Unknown field');
    expect(() => store.createSync(shown as never)).toThrow('spec.parentRef[Symbol(shown)]: Unknown field');
    store.close();
  });

  it('an unknown key is named with its unseen characters escaped, a string or a symbol', () => {
    // Regression: a right-to-left override in the key reached the message raw
    const ref = { resource: 'services', name: 'web', 'uid\u202e': '1', [Symbol('x\u202e')]: 1 };
    expect(() => validateRecord({ name: '10.0.0.1', labels: {}, parentRef: ref })).toThrow(
      'spec.parentRef["uid\\u202e"]: Unknown field; spec.parentRef[Symbol(x\\u202e)]: Unknown field',
    );
    expect(() => checkParentRef(ref)).toThrow('owner["uid\\u202e"]: Unknown field; owner[Symbol(x\\u202e)]: Unknown field');
  });

  it('an unknown key of any length is quoted cut to its first 64 characters, a plain name or a symbol, as long text is everywhere', async () => {
    // Regression: a key that reads as a plain name, and a symbol's description, went into the
    // message whole: an owner from a request body with a key of a million letters made an error
    // message of a million characters, where an address of that length is quoted in 64
    const long = 'k'.repeat(1_000_000);
    const alloc = new Allocator('10.0.0.0/24');
    const refused = await alloc.allocateNext({ resource: 'services', name: 'web', [long]: 1 } as never).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message.length).toBeLessThan(300);
    expect((refused as Error).message).toMatch(/^owner\["k{64}"… \(1,000,000 characters\)\]: Unknown field; an owner is /);
    expect(alloc.used()).toBe(0);
    alloc.destroy();
    const ref = { resource: 'services', name: 'web', [Symbol(long)]: 1 };
    expect(() => validateRecord({ name: '10.0.0.1', labels: {}, parentRef: ref })).toThrow(
      `spec.parentRef[Symbol(${'k'.repeat(64)}… (1,000,000 characters))]: Unknown field`,
    );
  });
});

describe('validateRecord: labels and a parentRef that are objects but not plain ones', () => {
  class Owner {
    resource = 'services';
    name = 'web';
  }
  class Labels {
    team = 'web';
  }
  it.each([
    ['a parentRef that is an instance of a class', { parentRef: new Owner() }, 'spec.parentRef: Invalid value: an instance of Owner:'],
    ['a parentRef that is a Map', { parentRef: new Map([['name', 'web']]) }, 'spec.parentRef: Invalid value: a Map:'],
    ['labels that are an instance of a class', { labels: new Labels() }, 'metadata.labels: Invalid value: an instance of Labels:'],
    ['labels that are a Map', { labels: new Map([['team', 'web']]) }, 'metadata.labels: Invalid value: a Map:'],
    [
      'labels made with Object.create(base)',
      { labels: Object.create({ team: 'web' }) },
      'metadata.labels: Invalid value: an object whose prototype is not Object.prototype:',
    ],
  ])('refuses %s, saying it is not a plain object (not "must be an object" of an object)', (_, fields, start) => {
    // Regression: these said "a value of type object: must be an object …", of an object. A store
    // keeps what is not a plain object as given, for this check to refuse: it is not copied.
    const record = { name: '10.0.0.1', labels: {}, parentRef: null, ...fields };
    const store = new MemoryStore();
    for (const check of [() => validateRecord(record), () => store.createSync(record as never)]) {
      let err: InvalidRecordError | undefined;
      try {
        check();
      } catch (e) {
        err = e as InvalidRecordError;
      }
      expect(err).toBeInstanceOf(InvalidRecordError);
      expect(err!.causes).toHaveLength(1);
      expect(err!.causes[0]!.startsWith(start)).toBe(true);
      expect(err!.causes[0]).toContain(': must be a plain object ');
      expect(err!.causes[0]).not.toContain('must be an object');
    }
    store.close();
  });
});

describe('validateRecord: the name is an address in canonical form', () => {
  it('accepts exactly the text formatIPv6 writes, for random addresses with zero runs of every length', () => {
    const random = seededRandom(20261202);
    const word = (): number => {
      const r = random.nextU32() % 4;
      if (r === 0) return 0;
      if (r === 1) return random.nextU32() & 0xffff; // a zero upper group
      if (r === 2) return ((random.nextU32() & 0xffff) << 16) >>> 0; // a zero lower group
      return random.nextU32();
    };
    let checked = 0;
    // 4,000 draws cover each of the 256 masks of zero groups many times over
    for (let i = 0; i < 4_000; i++) {
      const w = [word(), word(), word(), word()];
      const text = formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!);
      const mapped = w[0] === 0 && w[1] === 0 && w[2] === 0xffff;
      const r = refusal(text);
      if (mapped) expect(r?.message, text).toMatch(/IPv4-mapped/);
      else expect(r, text).toBeUndefined();
      // and each non-canonical spelling of the same address is refused, naming the canonical text
      for (const other of respellings(w)) {
        if (other === text) continue;
        const e = refusal(other);
        expect(e, other).toBeInstanceOf(InvalidRecordError);
        if (!mapped && e!.message.includes('canonical form')) expect(e!.message).toContain(JSON.stringify(text));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(4_000);
  });

  it.each([
    ['::', true],
    ['::1', true],
    ['1::', true],
    ['2001:db8::', true],
    ['2001:db8:0:1:2:3:4:5', true], // a single zero group is written 0
    ['1:0:0:2::3', true], // the longer run is compressed
    ['1::2:0:0:3:4', true], // equal runs: the leftmost
    ['1:0:0:2::3:4', false],
    ['1:0:0:2:0:0:0:3', false], // the longest run (three) must be the one compressed
    ['2001:db8::1:2:3:4:5', false], // :: for a single group
    [':1', false],
    ['1:', false],
    [':::', false],
    ['1:::2', false],
    ['1::2::3', false],
    ['::0:1', false], // a zero group next to the compressed run
    ['0::1', false],
    ['01::1', false],
    ['1:2:3:4:5:6:7:8:9', false],
    ['::1.2.3.4', false], // canonical text never embeds a dotted quad: ::102:304
    ['::ffff:0:0', false], // IPv4-mapped
    ['10.0.0.1', true],
    ['10.0.0.01', false],
    ['255.255.255.255', true],
    ['0.0.0.0', true],
  ])('%s → accepted: %s', (name, ok) => {
    expect(refusal(name) === undefined).toBe(ok);
  });
});

describe('validateRecord: a name the library has just formatted', () => {
  it('is accepted, and so is an equal string built elsewhere', () => {
    const name = formatIPv6(0xfd000000, 0, 0x12, 0x3400);
    expect(refusal(name)).toBeUndefined();
    expect(refusal(['fd00:0:0:0:0:12:0', '3400'].join(':'))).toBeDefined(); // same address, not canonical
    formatIPv6(0xfd000000, 0, 0x12, 0x3400);
    expect(refusal(`fd00::12:0:${'3400'}`)).toBeUndefined();
  });

  it('an IPv4-mapped address formatted as IPv6 is still refused', () => {
    const mapped = formatIPv6(0, 0, 0xffff, 0x0a000001);
    expect(mapped).toBe('::ffff:a00:1');
    expect(refusal(mapped)?.message).toMatch(/IPv4-mapped/);
    // words out of u32 range are written mod 2^32: the same mapped text, still refused
    expect(formatIPv6(2 ** 32, -(2 ** 32), 0xffff + 2 ** 32, 0x0a000001)).toBe(mapped);
    expect(refusal(mapped)?.message).toMatch(/IPv4-mapped/);
    // a word whose value changes each time it is read: what was written decides
    let reads = 0;
    const shifty = { valueOf: () => (reads++ < 2 ? 0 : 1) } as unknown as number;
    expect(formatAddr(6, [shifty, 0, 0xffff, 0x0a000001])).toBe(mapped);
    expect(refusal(mapped)?.message).toMatch(/IPv4-mapped/);
  });
});

describe('validateRecord: a name the library has just found canonical (isCanonical)', () => {
  it('an IPv4-mapped text that isCanonical compares equal as IPv6 is still refused', () => {
    const mapped = '::ffff:a00:1';
    const words = [0, 0, 0xffff, 0x0a000001];
    expect(isCanonical(mapped, 6, words)).toBe(true); // the plain-IPv6 spelling of those words
    expect(refusal(mapped)?.message).toMatch(/IPv4-mapped/);
    // a word whose value changes each time it is read: the groups compared decide
    let reads = 0;
    const shifty = { valueOf: () => (reads++ < 2 ? 0 : 1) } as unknown as number;
    expect(isCanonical(mapped, 6, [shifty, 0, 0xffff, 0x0a000001])).toBe(true);
    expect(refusal(mapped)?.message).toMatch(/IPv4-mapped/);
  });

  it('a text found not canonical is not remembered, and what was remembered stays canonical', () => {
    const good = 'fd00::12:0:3400';
    expect(isCanonical(good, 6, [0xfd000000, 0, 0x12, 0x3400])).toBe(true);
    expect(isCanonical('FD00::12:0:3400', 6, [0xfd000000, 0, 0x12, 0x3400])).toBe(false);
    expect(isCanonical('fd00::1', 6, [0xfd000000, 0, 0x12, 0x3400])).toBe(false); // words of another address
    expect(refusal('FD00::12:0:3400')).toBeDefined();
    expect(refusal(good)).toBeUndefined();
  });
});

describe('parseRecordName: the same name read by several allocators in turn', () => {
  it('answers each name with its own family and words, whatever was read before', () => {
    const names: [string, number, number[]][] = [
      ['10.0.0.1', 4, [0, 0, 0, 0x0a000001]],
      ['fd00::1', 6, [0xfd000000, 0, 0, 1]],
      ['::ffff:10.0.0.1', 6, [0, 0, 0xffff, 0x0a000001]],
      ['not-an-address', 0, []],
      ['10.0.0.2', 4, [0, 0, 0, 0x0a000002]],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [name, family, words] of names) {
        for (let reader = 0; reader < 3; reader++) {
          const out = new Uint32Array(4).fill(7);
          expect(parseRecordName(name, out), name).toBe(family);
          if (family !== 0) expect([...out], name).toEqual(words);
        }
      }
    }
  });
});

/** Spellings of the 128-bit address `w` other than the canonical one. */
function respellings(w: number[]): string[] {
  const groups: number[] = [];
  for (const x of w) groups.push(x >>> 16, x & 0xffff);
  const hex = groups.map((g) => g.toString(16));
  const out = [
    hex.join(':'), // uncompressed
    groups.map((g) => g.toString(16).padStart(4, '0')).join(':'), // leading zeros
    formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!).toUpperCase(),
  ];
  // compress every run of zeros, not only the canonical one (single groups included)
  for (let i = 0; i < 8; i++) {
    if (groups[i] !== 0) continue;
    for (let j = i + 1; j <= 8 && groups[j - 1] === 0; j++) out.push(`${hex.slice(0, i).join(':')}::${hex.slice(j).join(':')}`);
  }
  return out;
}

describe('hasAllocatorLabels: both allocator labels of the family, however the label set was made', () => {
  const record = (labels: unknown) => ({ name: '10.0.0.1', labels, parentRef: null }) as never;
  it.each([
    ['the set a store keeps, IPv4', labelsFor('IPv4'), true, false],
    ['the set a store keeps, IPv6', labelsFor('IPv6'), false, true],
    ['the set an allocator writes, IPv4', writeLabelsFor('IPv4'), true, false],
    ['a copy of the IPv6 set', { ...labelsFor('IPv6') }, false, true],
    ['allocatorLabels(IPv4), a fresh object', allocatorLabels('IPv4'), true, false],
    ['the family label only', { 'ipaddress.kubernetes.io/ip-family': 'IPv4' }, false, false],
    ['no labels', undefined, false, false],
  ])('%s', (_, labels, v4, v6) => {
    expect(hasAllocatorLabels(record(labels), 'IPv4')).toBe(v4);
    expect(hasAllocatorLabels(record(labels), 'IPv6')).toBe(v6);
  });
});
