import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Family } from '../adapters/address.ts';
import { Prefix } from '../adapters/geometry.ts';
import { type Held, PrefixTable } from '../adapters/prefix-table.ts';

/** Addresses near a few bases, so that the prefixes drawn nest and overlap often. */
const word = fc.oneof(fc.constantFrom(0, 1, 0x0a000000, 0x0a010200, 0xfd000000, 0xffffffff), fc.nat({ max: 0xffffffff }));
const address = fc.tuple(word, word, word, word);
/** IPv6 words, or IPv4 ([0, 0, 0, v4]) with a length of up to 32. */
const prefixOf = (family: Family) =>
  fc
    .tuple(address, fc.nat({ max: family === 4 ? 32 : 128 }))
    .map(([w, bits]) => Prefix.from(family, family === 4 ? [0, 0, 0, w[3]] : w, bits));

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
            const table = new PrefixTable<number>();
            let held: Held<number>[] = prefixes.map((p, i) => table.add(p, i));
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

  it('lists the shortest prefix first', () => {
    const table = new PrefixTable<string>();
    for (const cidr of ['10.1.2.0/24', '10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/25']) table.add(Prefix.parse(cidr), cidr);
    expect(table.containing(4, [0, 0, 0, 0x0a010205]).map((h) => h.value)).toEqual([
      '10.0.0.0/8',
      '10.1.0.0/16',
      '10.1.2.0/24',
      '10.1.2.0/25',
    ]);
  });
});
