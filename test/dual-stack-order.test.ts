// Two DualStackAllocator calls that want the same addresses, or the last free ones, in opposite
// family orders ([IPv4, IPv6] and [IPv6, IPv4]). Taken in the caller's order, each could take its
// first family, fail on the other's, and give its own back: both lose, and two callers that retry
// can go on losing together. The pair takes the families in one order whatever the caller gives,
// so exactly one wins. Every order in which the store can answer the calls is played
// (exploreOrders), so the interleaving where both take their first family is among them.
import { describe, expect, it } from 'vitest';
import { exploreOrders, GatedStore } from './doubles/gated-store.ts';
import { DualStackAllocator, type DualStackIPs } from '../adapters/dual-stack.ts';
import { Allocator } from '../adapters/allocator.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ErrAllocated, ErrFull } from '../adapters/errors.ts';
import { seededRandom } from '../adapters/random.ts';
import type { IPFamily } from '../adapters/types.ts';

/** A pair of Allocators over one GatedStore; `taken` records are in the store before they start. */
function gatedPair(v4: string, v6: string, taken: string[] = []) {
  const store = new GatedStore();
  for (const name of taken) {
    store.inner.createSync({ name, labels: allocatorLabels(name.includes(':') ? 'IPv6' : 'IPv4'), parentRef: null });
  }
  const pair = new DualStackAllocator(
    new Allocator(v4, { store, random: seededRandom(1) }),
    new Allocator(v6, { store, random: seededRandom(2) }),
  );
  return { store, state: { store, pair } };
}

/** The one winner among `outcomes` (the other call rejected with ErrAllocated or ErrFull), checked. */
function oneWinner(
  outcomes: PromiseSettledResult<unknown>[],
  lost: new () => Error,
  order: string[],
): { index: number; value: DualStackIPs } {
  const won = outcomes.flatMap((o, index) => (o.status === 'fulfilled' ? [{ index, value: o.value as DualStackIPs }] : []));
  const reasons = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
  expect({ order, won: won.length, reasons }).toEqual({ order, won: 1, reasons: [expect.any(lost)] });
  return won[0]!;
}

describe('DualStackAllocator: two calls in opposite family orders', () => {
  const OPPOSITE: IPFamily[][] = [
    ['IPv4', 'IPv6'],
    ['IPv6', 'IPv4'],
  ];

  it('allocate of the same two addresses: exactly one wins, whatever order the store answers in; the loser gets ErrAllocated', async () => {
    const asked = [
      ['10.0.0.5', 'fd00::5'],
      ['fd00::5', '10.0.0.5'],
    ];
    const played = await exploreOrders(
      () => gatedPair('10.0.0.0/24', 'fd00::/120'),
      ({ pair }) => asked.map((ips) => pair.allocate(ips)),
      async ({ store, pair }, order, outcomes) => {
        const { index, value } = oneWinner(outcomes, ErrAllocated, order);
        // the winner's answer lists the addresses in the order it gave them
        expect(value.ips).toEqual(asked[index]);
        expect(value.families).toEqual(OPPOSITE[index]);
        expect(value).toMatchObject({ IPv4: '10.0.0.5', IPv6: 'fd00::5' });
        expect(new Set(store.inner.records().map((r) => r.name))).toEqual(new Set(['10.0.0.5', 'fd00::5']));
        pair.destroy();
      },
    );
    expect(played).toBeGreaterThan(1);
  });

  it('allocateNext for the last free address of each family: exactly one wins; the loser gets ErrFull', async () => {
    // 10.0.0.0/30 holds 10.0.0.1 and 10.0.0.2, the first taken; fd00::/127 holds fd00::1 alone
    await exploreOrders(
      () => gatedPair('10.0.0.0/30', 'fd00::/127', ['10.0.0.1']),
      ({ pair }) => OPPOSITE.map((families) => pair.allocateNext(undefined, families)),
      async ({ store, pair }, order, outcomes) => {
        const { index, value } = oneWinner(outcomes, ErrFull, order);
        expect(value.families).toEqual(OPPOSITE[index]);
        expect(value.ips).toEqual(OPPOSITE[index]!.map((f) => (f === 'IPv4' ? '10.0.0.2' : 'fd00::1')));
        expect(new Set(store.inner.records().map((r) => r.name))).toEqual(new Set(['10.0.0.1', '10.0.0.2', 'fd00::1']));
        pair.destroy();
      },
    );
  });
});
