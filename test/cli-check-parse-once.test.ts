// `check` reads each ClusterIP once: parsed (as the repair loop reads it) and written as its
// IPAddress name once, for every rule that asks which Services hold an address. Parsing and
// formatting each ClusterIP three times was most of a run at 10^5 IPAddresses. Counted through
// the one parser and formatter (adapters/address.ts parseAddrInto, formatAddr).
import { describe, expect, it, vi } from 'vitest';
import * as address from '../adapters/address.ts';
import type { ServiceCIDRRecord } from '../adapters/kubernetes/service-cidrs.ts';
import type { ListedIPAddress, ServiceRecord } from '../cli/listing.ts';
import { findProblems } from '../cli/check.ts';
import { CONTROLLER, IP_FAMILY, MANAGED_BY } from './cli-helpers.ts';

vi.mock('../adapters/address.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../adapters/address.ts')>();
  return { ...original, parseAddrInto: vi.fn(original.parseAddrInto), formatAddr: vi.fn(original.formatAddr) };
});

const N = 500;
const serviceCIDRs: ServiceCIDRRecord[] = [
  { name: 'kubernetes', cidrs: ['10.96.0.0/16', 'fd00:96::/112'], labels: {}, deletionTimestamp: null },
];
const options = { now: Date.parse('2026-01-01T00:00:00Z'), graceMs: 60_000 };

/** N dual-stack Services, each holding its two addresses, and their IPAddresses, as kube-apiserver leaves them. */
function healthyCluster(): { ipAddresses: ListedIPAddress[]; services: ServiceRecord[] } {
  const services: ServiceRecord[] = [];
  const ipAddresses: ListedIPAddress[] = [];
  for (let i = 1; i <= N; i++) {
    const name = `svc-${i}`;
    const clusterIPs = [`10.96.${i >> 8}.${i & 255}`, `fd00:96::${i.toString(16)}`];
    services.push({ namespace: 'default', name, clusterIPs });
    for (const ip of clusterIPs) {
      ipAddresses.push({
        name: ip,
        uid: `uid-${ip}`,
        labels: { [IP_FAMILY]: ip.includes(':') ? 'IPv6' : 'IPv4', [MANAGED_BY]: CONTROLLER },
        parentRef: { group: '', resource: 'services', namespace: 'default', name },
        creationTimestamp: '2020-01-01T00:00:00Z',
      });
    }
  }
  return { ipAddresses, services };
}

describe('check reads each ClusterIP once', () => {
  it('parses and formats each ClusterIP of a healthy cluster once, and finds nothing', () => {
    const parse = vi.mocked(address.parseAddrInto);
    const format = vi.mocked(address.formatAddr);
    // what reading the ServiceCIDRs alone costs, whatever it is
    parse.mockClear();
    format.mockClear();
    findProblems({ ipAddresses: [], services: [], serviceCIDRs }, options);
    const [parsedForRanges, formattedForRanges] = [parse.mock.calls.length, format.mock.calls.length];

    const { ipAddresses, services } = healthyCluster();
    parse.mockClear();
    format.mockClear();
    const { findings, pending } = findProblems({ ipAddresses, services, serviceCIDRs }, options);
    expect(findings).toEqual([]);
    expect(pending).toEqual([]);
    expect(parse.mock.calls.length - parsedForRanges).toBe(2 * N);
    expect(format.mock.calls.length - formattedForRanges).toBe(2 * N);
  });
});
