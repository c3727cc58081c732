// The lists of `status` and `check` are in address order (IPv4 before IPv6, numerically; a name
// that is no address last, as text), each address parsed once for the sort, not once per
// comparison: with 10^5 findings that was millions of parses, seconds of a run. The parses are
// counted through the one parser (adapters/address.ts parseAddrInto).
import { describe, expect, it, vi } from 'vitest';
import * as address from '../adapters/address.ts';
import type { ListedIPAddress } from '../cli/listing.ts';
import { findProblems } from '../cli/check.ts';
import { summarize } from '../cli/status.ts';
import { seededRandom } from '../adapters/random.ts';
import { CONTROLLER, IP_FAMILY, MANAGED_BY } from './cli-helpers.ts';

vi.mock('../adapters/address.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../adapters/address.ts')>();
  return { ...original, parseAddrInto: vi.fn(original.parseAddrInto) };
});

const N = 2_000;

/** N IPAddresses of the allocator, parent Services gone, in shuffled order: IPv4 and IPv6 in 10.200.0.0/16 and fd00:200::/112, and a few names that are no address. */
function shuffledListing(): ListedIPAddress[] {
  const rnd = seededRandom(7);
  const names: string[] = [];
  for (let i = 0; i < N; i++) {
    const n = rnd.nextU32() % 65_536;
    names.push(i % 10 === 0 ? `fd00:200::${n.toString(16)}` : i % 97 === 0 ? `not-an-ip-${n}` : `10.200.${n >>> 8}.${n & 255}`);
  }
  return [...new Set(names)].map((name) => ({
    name,
    labels: { [IP_FAMILY]: name.includes(':') ? 'IPv6' : 'IPv4', [MANAGED_BY]: CONTROLLER },
    parentRef: { group: '', resource: 'services', namespace: 'default', name: `gone-${name}` },
    creationTimestamp: '2020-01-01T00:00:00Z',
  }));
}

/** Address order, with a slow, obvious comparison: the family, then the address as a bigint; no address last, by text. */
function addressOrder(names: readonly string[]): string[] {
  const key = (name: string): [number, bigint] | undefined => {
    const words = new Uint32Array(4);
    let family: number;
    try {
      family = address.parseAddrInto(name, words);
    } catch {
      return undefined;
    }
    return [family, [...words].reduce((v, w) => (v << 32n) | BigInt(w), 0n)];
  };
  return [...names].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    if (x === undefined || y === undefined) return x === y ? (a < b ? -1 : a > b ? 1 : 0) : x === undefined ? 1 : -1;
    return x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
  });
}

describe('status and check sort their lists by address, each address parsed once for it', () => {
  it('status: IPAddresses outside every ServiceCIDR, and names that are no address', () => {
    const listed = shuffledListing();
    const parse = vi.mocked(address.parseAddrInto);
    parse.mockClear();
    const report = summarize({ context: 'c', server: 'https://c' }, [], listed);
    // the listing read (a parse or two per name), then the sort: not one per comparison
    expect(parse.mock.calls.length).toBeLessThanOrEqual(4 * listed.length);
    const outside = report.outside.addresses.map((a) => a.ip);
    expect(outside.length).toBeGreaterThan(N / 2);
    expect(outside).toEqual(addressOrder(outside));
    const notAllocations = report.notAllocations.addresses.map((a) => a.ip);
    expect(notAllocations.length).toBeGreaterThan(0);
    expect(notAllocations).toEqual(addressOrder(notAllocations));
  });

  it('check: its findings', () => {
    const listed = shuffledListing();
    const parse = vi.mocked(address.parseAddrInto);
    parse.mockClear();
    const { findings } = findProblems({ ipAddresses: listed, services: [], serviceCIDRs: [] }, { now: Date.now(), graceMs: 60_000 });
    expect(parse.mock.calls.length).toBeLessThanOrEqual(4 * listed.length);
    const ips = findings.map((f) => f.ip);
    expect(ips.length).toBe(listed.length);
    expect(ips).toEqual(addressOrder(ips));
  });
});
