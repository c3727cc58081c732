import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { Family } from '../adapters/address.ts';
import { Prefix } from '../adapters/geometry.ts';
import { PrefixTable } from '../adapters/prefix-table.ts';
import { exposeGc } from './helpers.ts';

/** An entry of the tests' tables: a number held under a prefix. */
interface Held<T> {
  readonly prefix: Prefix;
  readonly value: T;
}

/** Holds `value` under `prefix` in `table`; returns the entry. */
function hold<T>(table: PrefixTable<Held<T>>, prefix: Prefix, value: T): Held<T> {
  const held = { prefix, value };
  table.add(held);
  return held;
}

/** Addresses near a few bases, so that the prefixes drawn nest and overlap often. */
const word = fc.oneof(fc.constantFrom(0, 1, 0x0a000000, 0x0a010200, 0xfd000000, 0xffffffff), fc.nat({ max: 0xffffffff }));
const address = fc.tuple(word, word, word, word);
/**
 * IPv6 words, or IPv4 ([0, 0, 0, v4]) with a length of up to 32. Half the lengths are a few common
 * ones (word boundaries among them), so that prefixes often share a level and the Maps on the way
 * to their buckets: a delete must then leave the other prefixes' paths in place.
 */
const length = (family: Family) =>
  fc.oneof(fc.constantFrom(...(family === 4 ? [0, 8, 24, 32] : [0, 32, 64, 96, 112, 128])), fc.nat({ max: family === 4 ? 32 : 128 }));
const prefixOf = (family: Family) =>
  fc.tuple(address, length(family)).map(([w, bits]) => Prefix.from(family, family === 4 ? [0, 0, 0, w[3]] : w, bits));

describe('PrefixTable', () => {
  it.each([4, 6] as const)(
    'containing() finds the values of exactly the IPv%s prefixes containing an address, as they are added and deleted',
    (family) => {
      fc.assert(
        fc.property(
          fc.array(prefixOf(family), { minLength: 1, maxLength: 40 }),
          fc.array(fc.nat(), { maxLength: 20 }),
          fc.array(address, { minLength: 1, maxLength: 20 }),
          (prefixes, deletions, probes) => {
            const table = new PrefixTable<Held<number>>();
            let held: Held<number>[] = prefixes.map((p, i) => hold(table, p, i));
            for (const d of deletions) {
              if (held.length === 0) break;
              const gone = held[d % held.length]!;
              expect(table.delete(gone)).toBe(true);
              expect(table.delete(gone)).toBe(false); // deleted already
              held = held.filter((h) => h !== gone);
            }
            const candidates = [...probes, ...held.map((h) => [...h.prefix.network]), ...held.map((h) => [...h.prefix.broadcast])];
            for (const c of candidates) {
              const w = family === 4 ? [0, 0, 0, c[3]!] : c;
              const want = held.filter((h) => h.prefix.contains(family, w)).map((h) => h.value);
              const got = table.containing(family, w).map((h) => h.value);
              expect(got.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
              expect(table.containing(family === 4 ? 6 : 4, w)).toEqual([]); // the other family: none
            }
            expect(
              table
                .all()
                .map((h) => h.value)
                .sort((a, b) => a - b),
            ).toEqual(held.map((h) => h.value).sort((a, b) => a - b));
          },
        ),
        { numRuns: 200 },
      );
    },
  );

  it('holds prefixes of both families side by side: an address finds those of its own family only, whatever the lengths they share', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(prefixOf(4), prefixOf(6)), { minLength: 1, maxLength: 40 }),
        fc.array(address, { minLength: 1, maxLength: 20 }),
        (prefixes, probes) => {
          const table = new PrefixTable<Held<number>>();
          const held = prefixes.map((p, i) => hold(table, p, i));
          const candidates = [...probes, ...held.map((h) => [...h.prefix.network]), ...held.map((h) => [...h.prefix.broadcast])];
          for (const c of candidates) {
            for (const family of [4, 6] as const) {
              const w = family === 4 ? [0, 0, 0, c[3]!] : c;
              const want = held.filter((h) => h.prefix.contains(family, w)).map((h) => h.value);
              const got = table.containing(family, w).map((h) => h.value);
              expect(got.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each([4, 6] as const)(
    'containing() answers an IPv%s address looked up again as the table stands then: what was added or deleted since the last look-up counts',
    (family) => {
      // few prefixes and few addresses, so that an address is often looked up twice in a row
      // with an add or a delete of a prefix containing it between
      const pool = fc.constantFrom<[number, number, number, number]>(
        [0x0a000000, 0, 0, 0x0a000001],
        [0x0a000000, 1, 0, 0x0a000105],
        [0xfd000000, 0, 7, 0x0a010200],
      );
      const prefix = fc.tuple(pool, length(family)).map(([w, bits]) => Prefix.from(family, family === 4 ? [0, 0, 0, w[3]] : w, bits));
      const step = fc.oneof(fc.record({ add: prefix }), fc.record({ del: fc.nat() }), fc.record({ probe: pool }));
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
          const table = new PrefixTable<Held<number>>();
          let held: Held<number>[] = [];
          for (const [i, s] of steps.entries()) {
            if ('add' in s) held.push(hold(table, s.add, i));
            else if ('del' in s) {
              if (held.length === 0) continue;
              const gone = held[s.del % held.length]!;
              table.delete(gone);
              held = held.filter((h) => h !== gone);
            } else {
              const w = family === 4 ? [0, 0, 0, s.probe[3]] : s.probe;
              const want = held.filter((h) => h.prefix.contains(family, w)).map((h) => h.value);
              for (let twice = 0; twice < 2; twice++) {
                expect([...table.containing(family, w)].map((h) => h.value).sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
              }
            }
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  it('lists the shortest prefix first', () => {
    const table = new PrefixTable<Held<string>>();
    for (const cidr of ['10.1.2.0/24', '10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/25']) hold(table, Prefix.parse(cidr), cidr);
    expect(table.containing(4, [0, 0, 0, 0x0a010205]).map((h) => h.value)).toEqual([
      '10.0.0.0/8',
      '10.1.0.0/16',
      '10.1.2.0/24',
      '10.1.2.0/25',
    ]);
  });

  it('an answer stays as it was when the table changes afterwards (an event delivered while a look-up is walked)', () => {
    const table = new PrefixTable<Held<string>>();
    const a = hold(table, Prefix.parse('10.1.0.0/16'), 'a');
    const w = [0, 0, 0, 0x0a010205];
    const one = table.containing(4, w); // one level holds it
    hold(table, Prefix.parse('10.1.0.0/16'), 'b'); // the same prefix: its bucket
    hold(table, Prefix.parse('10.1.2.0/24'), 'c');
    const three = table.containing(4, w); // two levels
    table.delete(a);
    hold(table, Prefix.parse('10.0.0.0/8'), 'd');
    expect([one.map((h) => h.value), three.map((h) => h.value)]).toEqual([['a'], ['a', 'b', 'c']]);
    expect(table.containing(4, w).map((h) => h.value)).toEqual(['d', 'b', 'c']);
  });

  it('lookUps counts the look-ups that walked the table: the same address again is answered from the memo until an add or delete', () => {
    const table = new PrefixTable<Held<string>>();
    const a = hold(table, Prefix.parse('10.1.0.0/16'), 'a');
    const w = [0, 0, 0, 0x0a010205];
    const walks: number[] = [];
    const lookUp = (v: number) => {
      table.containing(4, [0, 0, 0, v]);
      walks.push(table.lookUps);
    };
    lookUp(w[3]!);
    lookUp(w[3]!); // memo
    lookUp(0x0a010206); // another address
    lookUp(0x0a010206); // memo
    table.containing(6, w); // another family, the same words
    walks.push(table.lookUps);
    hold(table, Prefix.parse('10.1.2.0/24'), 'b');
    lookUp(0x0a010206); // the table changed since
    table.delete(a);
    lookUp(0x0a010206);
    lookUp(0x0a010206); // memo
    expect(walks).toEqual([1, 1, 2, 2, 3, 4, 5, 5]);
  });
});

describe('PrefixTable keys', () => {
  it('IPv6 prefixes crafted to share a 32-bit key of their words do not share a bucket: a look-up finds one prefix per length and reads none', () => {
    // The key once was a3 ^ imul(a2, C2) ^ imul(a1, C1) ^ imul(a0, C0): for any a1, the a0 that
    // gives the same key is (K ^ imul(a1, C1)) · C0⁻¹ mod 2^32, so any number of /64s could share it.
    const C0 = 0x27d4eb2f;
    const C1 = 0xc2b2ae35;
    let inverse = C0; // Newton's iteration for the inverse of an odd number mod 2^32
    for (let i = 0; i < 5; i++) inverse = Math.imul(inverse, 2 - Math.imul(C0, inverse));
    const K = 0x12345678;
    const table = new PrefixTable<Held<number>>();
    const prefixes: Prefix[] = [];
    for (let a1 = 0; a1 < 64; a1++) {
      const a0 = Math.imul(K ^ Math.imul(a1, C1), inverse) >>> 0;
      const p = Prefix.from(6, [a0, a1, 0, 0], 64);
      prefixes.push(p);
      hold(table, p, a1);
    }
    const contains = vi.spyOn(Prefix.prototype, 'contains');
    try {
      for (const [i, p] of prefixes.entries()) {
        contains.mockClear();
        expect(table.containing(6, [p.network[0]!, p.network[1]!, 7, 9]).map((h) => h.value)).toEqual([i]);
        expect(contains).not.toHaveBeenCalled(); // the key found is the containment
      }
    } finally {
      contains.mockRestore();
    }
  });
});

describe.skipIf(exposeGc() === undefined)('the memo of the last look-up (skipped: this runtime cannot expose gc)', () => {
  it('holds no entry after it was deleted: an entry a look-up found is collected once deleted', async () => {
    const gc = exposeGc()!;
    const table = new PrefixTable<Held<object>>();
    const words = [0, 0, 0, 0x0a000001];
    let ref: WeakRef<object>;
    // in a function of its own, so that no local of this test keeps the value
    (() => {
      const value = {};
      ref = new WeakRef(value);
      const held = hold(table, Prefix.parse('10.0.0.0/24'), value);
      expect(table.containing(4, words)).toEqual([held]);
      table.delete(held);
    })();
    // collected and asked in one task: a deref keeps its target alive to the end of its task
    let collected = false;
    for (let i = 0; i < 20 && !collected; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      gc();
      collected = ref!.deref() === undefined;
    }
    expect(collected).toBe(true);
    expect(table.containing(4, words)).toEqual([]);
  });
});
