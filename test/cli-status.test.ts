// `ipallocator status` end to end: run() against the API-server double over HTTP. The numbers are
// checked against a count made here from the objects the test wrote (IPv4 as integers, IPv6 by
// its last word), not against the command's own arithmetic.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { calculateRangeOffset, Prefix } from '../adapters/geometry.ts';
import { seededRandom } from '../adapters/random.ts';
import type { CheckReport } from '../cli/check.ts';
import { onePerName, render, type StatusReport, summarize, usedPercent } from '../cli/status.ts';
import { CELL_WIDTH } from '../cli/text.ts';
import { Cluster as KubeCluster, PAGE_SIZE } from '../cli/cluster.ts';
import {
  addIPAddress,
  CONTROLLER,
  IP_FAMILY,
  MANAGED_BY,
  addService,
  addServiceCIDR,
  cli,
  controls,
  saidByCli,
  skipReasons,
  startCluster,
  type Cluster,
} from './cli-helpers.ts';
import { writeKubeconfig } from './k8s/kubeconfig.ts';

const v4 = (s: string) => s.split('.').reduce((a, o) => a * 256 + Number(o), 0);
const v4text = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

describe('ipallocator status', () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
  });
  afterEach(async () => {
    await c.close();
  });

  it('reports size, used, free and both bands of every range, matching the IPAddress objects', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24', 'fd00:10:96::/112'], true);
    addServiceCIDR(d, 'extra', ['10.100.0.0/26'], false);
    addServiceCIDR(d, 'plain', ['10.200.0.0/27']);
    const rnd = seededRandom(16);
    const namespaces = ['default', 'kube-system', 'shop', 'shop', 'shop'];
    const written: { ip: string; ns: string }[] = [];
    const put = (ip: string) => {
      if (written.some((w) => w.ip === ip)) return;
      const ns = namespaces[rnd.nextU32() % namespaces.length]!;
      addIPAddress(d, ip, { namespace: ns, name: `svc-${written.length}` });
      written.push({ ip, ns });
    };
    for (let i = 0; i < 60; i++) put(v4text(v4('10.96.0.1') + (rnd.nextU32() % 254)));
    for (let i = 0; i < 20; i++) put(v4text(v4('10.100.0.1') + (rnd.nextU32() % 62)));
    for (let i = 0; i < 15; i++) put(`fd00:10:96::${(1 + (rnd.nextU32() % 0xffff)).toString(16)}`);
    put('10.100.0.0'); // the network address of 10.100.0.0/26: in no range, outside
    put('192.168.7.7'); // outside every ServiceCIDR
    put('10.96.1.1');

    const { code, stdout, stderr } = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatusReport;
    expect(report.schema).toBe('ipallocator/status/v1');
    expect(report.ipAddresses).toBe(written.length);

    // The expected counts, IPv4 as integer ranges (network and broadcast excluded).
    const expectV4 = (cidr: string) => {
      const [net, bits] = cidr.split('/');
      const first = v4(net!) + 1;
      const size = 2 ** (32 - Number(bits)) - 2;
      const offset = Math.min(calculateRangeOffset(cidr), size);
      const offsets = written.map((w) => (w.ip.includes(':') ? -1 : v4(w.ip) - first)).filter((o) => o >= 0 && o < size);
      const st = offsets.filter((o) => o < offset).length;
      return {
        size: String(size),
        used: offsets.length,
        free: String(size - offsets.length),
        staticUsed: st,
        dynamicUsed: offsets.length - st,
        staticSize: String(offset),
      };
    };
    const got = (name: string, cidr: string) => {
      const r = report.serviceCIDRs.find((s) => s.name === name)!.ranges.find((x) => x.cidr === cidr)!;
      return {
        size: r.size,
        used: r.used,
        free: r.free,
        staticUsed: r.staticBand.used,
        dynamicUsed: r.dynamicBand.used,
        staticSize: r.staticBand.size,
      };
    };
    expect(got('kubernetes', '10.96.0.0/24')).toEqual(expectV4('10.96.0.0/24'));
    expect(got('extra', '10.100.0.0/26')).toEqual(expectV4('10.100.0.0/26'));
    expect(got('plain', '10.200.0.0/27')).toEqual({ ...expectV4('10.200.0.0/27'), used: 0 });

    const v6 = written.filter((w) => w.ip.includes(':')).map((w) => parseInt(w.ip.split(':').pop()!, 16) - 1);
    const v6static = v6.filter((o) => o < calculateRangeOffset('fd00:10:96::/112')).length;
    expect(got('kubernetes', 'fd00:10:96::/112')).toEqual({
      size: String(65535),
      used: v6.length,
      free: String(65535 - v6.length),
      staticUsed: v6static,
      dynamicUsed: v6.length - v6static,
      staticSize: String(calculateRangeOffset('fd00:10:96::/112')),
    });

    expect(report.serviceCIDRs.map((s) => [s.name, s.ready, s.deleting])).toEqual([
      ['extra', false, false],
      ['kubernetes', true, false],
      ['plain', null, false],
    ]);
    expect(report.outside.addresses.map((a) => a.ip)).toEqual(['10.96.1.1', '10.100.0.0', '192.168.7.7']);
    // the owners of the addresses counted in a range: not of the three outside every range
    const perNs = new Map<string, number>();
    for (const w of written.filter((w) => !['10.96.1.1', '10.100.0.0', '192.168.7.7'].includes(w.ip)))
      perNs.set(w.ns, (perNs.get(w.ns) ?? 0) + 1);
    expect(new Map(report.owners.map((o) => [o.namespace, o.count]))).toEqual(perNs);
    expect(report.owners.map((o) => o.count)).toEqual([...perNs.values()].sort((a, b) => b - a));
  });

  it('an IPAddress at a range’s network or IPv4 broadcast address is outside, as check finds its ClusterIP out of range; the counts add up', async () => {
    // Regression: status counted 10.96.0.0 and 10.96.0.255 nowhere and said "Every IPAddress is
    // inside a ServiceCIDR", while check reported both ClusterIPs as out-of-range.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24', 'fd00:10:96::/120'], true);
    addServiceCIDR(d, 'wide', ['10.100.0.0/16'], true);
    const held: [ip: string, name: string][] = [
      ['10.96.0.0', 'network'],
      ['10.96.0.255', 'broadcast'],
      ['10.96.0.7', 'inside'],
      ['fd00:10:96::', 'network-v6'],
      ['fd00:10:96::ff', 'all-ones-v6'], // IPv6 has no broadcast: the last address is allocatable
      ['10.100.4.0', 'network-of-nothing'], // the network address of no range: inside 10.100.0.0/16
    ];
    for (const [ip, name] of held) {
      addIPAddress(d, ip, { namespace: 'default', name });
      addService(d, 'default', name, [ip]);
    }
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.outside.addresses.map((a) => a.ip)).toEqual(['10.96.0.0', '10.96.0.255', 'fd00:10:96::']);
    const used = report.serviceCIDRs.flatMap((sc) => sc.ranges.map((r) => [r.cidr, r.used]));
    expect(used).toEqual([
      ['10.96.0.0/24', 1],
      ['fd00:10:96::/120', 1],
      ['10.100.0.0/16', 1],
    ]);
    expect(used.reduce((n, [, u]) => n + Number(u), 0) + report.outside.count).toBe(report.ipAddresses);

    const check = JSON.parse((await cli(['check', '--json', '--kubeconfig', c.kubeconfig])).stdout) as CheckReport;
    expect(check.findings.filter((f) => f.kind === 'out-of-range').map((f) => f.ip)).toEqual(report.outside.addresses.map((a) => a.ip));

    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.stdout).toMatch(/\nOutside every ServiceCIDR: 3 IPAddresses\n {2}10\.96\.0\.0 +default\/network\n/);
    expect(text.stdout).not.toContain('Every IPAddress is inside a ServiceCIDR.');
  });

  // Regression: status counted ::ffff:10.96.0.9 and FD00:10:96::5 as used in their ranges (and
  // 10.96.0.011, not-an-ip as outside), while check found no Service holding them.
  it('an IPAddress named other than an address in canonical form is no allocation, as check reads it: listed apart, counted in no range', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24', 'fd00:10:96::/112'], true);
    const odd: [ip: string, service: string, clusterIP: string][] = [
      ['::ffff:10.96.0.9', 'mapped', '10.96.0.9'],
      ['FD00:10:96::5', 'upper', 'fd00:10:96::5'],
      ['fd00:10:96:0:0:0:0:6', 'long', 'fd00:10:96::6'],
      ['10.96.0.011', 'zeros', '10.96.0.11'],
      ['not-an-ip', 'text', '10.96.0.12'],
    ];
    for (const [ip, name, clusterIP] of odd) {
      addIPAddress(d, ip, { namespace: 'default', name });
      addService(d, 'default', name, [clusterIP]);
    }
    addIPAddress(d, '10.96.0.20', { namespace: 'default', name: 'fine' });
    addService(d, 'default', 'fine', ['10.96.0.20']);

    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.serviceCIDRs[0]!.ranges.map((r) => [r.cidr, r.used])).toEqual([
      ['10.96.0.0/24', 1],
      ['fd00:10:96::/112', 0],
    ]);
    expect(report.outside.count).toBe(0);
    expect(report.notAllocations).toEqual({
      count: 5,
      // by address, as every list of status; text that is no address last
      addresses: [
        { ip: '::ffff:10.96.0.9', owner: 'default/mapped' },
        { ip: 'FD00:10:96::5', owner: 'default/upper' },
        { ip: 'fd00:10:96:0:0:0:0:6', owner: 'default/long' },
        { ip: '10.96.0.011', owner: 'default/zeros' },
        { ip: 'not-an-ip', owner: 'default/text' },
      ],
    });
    expect(1 + report.notAllocations.count).toBe(report.ipAddresses);

    // check: every one of them is no Service's IPAddress, and each Service's address is missing
    const check = JSON.parse((await cli(['check', '--json', '--kubeconfig', c.kubeconfig])).stdout) as CheckReport;
    const wrong = check.findings.filter((f) => f.kind === 'wrong-reference').map((f) => f.ip);
    expect(wrong.sort()).toEqual(report.notAllocations.addresses.map((a) => a.ip).sort());
    for (const f of check.findings.filter((f) => f.kind === 'wrong-reference')) {
      expect(f.message).toContain(
        ' but allocates nothing: its name is no address in canonical form, which kube-apiserver requires of an IPAddress',
      );
    }
    expect(check.findings.filter((f) => f.kind === 'missing').map((f) => f.ip)).toHaveLength(5);

    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.stdout).toMatch(
      /\nNot an allocation \(the name is no address in canonical form, which kube-apiserver requires\): 5 IPAddresses\n {2}::ffff:10\.96\.0\.9 +default\/mapped\n/,
    );
    expect(text.stdout).not.toContain('Every IPAddress is inside a ServiceCIDR.');

    // map counts them nowhere either
    const svg = await cli(['map', '10.96.0.0/24', '--out', '/dev/null', '--kubeconfig', c.kubeconfig]);
    expect(svg.stdout).toMatch(/; 1 of 254 addresses allocated\n$/);
  });

  it('an IPv6 range shorter than /64, which kube-apiserver does not allocate from, counts nothing: its addresses are listed apart, not outside', async () => {
    // Regression: the range showed 2^64 − 1 addresses, and an address
    // past them was neither used nor outside.
    const d = c.double;
    addServiceCIDR(d, 'wide', ['fd00:48::/48'], true);
    addIPAddress(d, 'fd00:48::5', { namespace: 'default', name: 'a' });
    addIPAddress(d, 'fd00:48:0:1::1', { namespace: 'default', name: 'b' });
    const r = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.serviceCIDRs[0]!.ranges[0]).toMatchObject({ cidr: 'fd00:48::/48', family: 'IPv6', size: '0', used: 0 });
    expect(report.serviceCIDRs[0]!.ranges[0]!.error).toBe('not allocatable: shortest allowed prefix length for service CIDR is 64, got 48');
    expect(report.unserved.addresses.map((a) => [a.ip, a.cidr])).toEqual([
      ['fd00:48::5', 'fd00:48::/48'],
      ['fd00:48:0:1::1', 'fd00:48::/48'],
    ]);
    expect(report.outside.count).toBe(0);
  });

  it('an IPAddress in a range the MetaAllocator skips is inside a ServiceCIDR for status as for check: listed apart, never outside; the counts add up', async () => {
    // Regression: status listed ::5 (in ::/80, which every allocator here refuses) as outside every
    // ServiceCIDR, while check found its Service's ClusterIP in range, as kube-apiserver does.
    const d = c.double;
    addServiceCIDR(d, 'mapped', ['::/80'], true);
    addServiceCIDR(d, 'wide', ['fd00:48::/48'], true);
    addServiceCIDR(d, 'served', ['fd00:48::/112', '10.96.0.0/24'], true);
    const held: [ip: string, name: string][] = [
      ['::5', 'in-mapped'],
      ['fd00:48::7', 'in-served-and-wide'], // a served range holds it too: used there, not apart
      ['fd00:48:0:1::1', 'in-wide'],
      ['10.96.0.9', 'in-served'],
      ['10.1.2.3', 'in-none'],
    ];
    for (const [ip, name] of held) {
      addIPAddress(d, ip, { namespace: 'default', name });
      addService(d, 'default', name, [ip]);
    }
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.unserved).toEqual({
      count: 2,
      addresses: [
        { ip: '::5', owner: 'default/in-mapped', serviceCIDR: 'mapped', cidr: '::/80' },
        { ip: 'fd00:48:0:1::1', owner: 'default/in-wide', serviceCIDR: 'wide', cidr: 'fd00:48::/48' },
      ],
    });
    expect(report.outside.addresses.map((a) => a.ip)).toEqual(['10.1.2.3']);
    const used = report.serviceCIDRs.flatMap((sc) => sc.ranges.map((r) => r.used)).reduce((a, b) => a + b, 0);
    expect(used + report.unserved.count + report.outside.count).toBe(report.ipAddresses);

    // check reads the same ranges: out of range is exactly what status lists as outside
    const check = JSON.parse((await cli(['check', '--json', '--kubeconfig', c.kubeconfig])).stdout) as CheckReport;
    expect(check.findings.map((f) => `${f.kind} ${f.ip}`)).toEqual(['out-of-range 10.1.2.3']);

    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.stdout).toContain(
      '\nIn a ServiceCIDR range this tool does not allocate from: 2 IPAddresses\n' +
        '  ::5             ::/80         default/in-mapped\n' +
        '  fd00:48:0:1::1  fd00:48::/48  default/in-wide\n' +
        'Outside every ServiceCIDR: 1 IPAddress\n' +
        '  10.1.2.3  default/in-none\n',
    );
  });

  // Regression: its name was shown with nothing under it, as if the listing had been cut short.
  it('a ServiceCIDR without spec.cidrs (a broken API server) says it has no range, and why', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addServiceCIDR(d, 'missing', ['10.97.0.0/24'], true);
    addServiceCIDR(d, 'empty', ['10.98.0.0/24'], true);
    d.modify('missing', (o) => delete (o.spec as { cidrs?: unknown }).cidrs, 'servicecidrs');
    d.modify('empty', (o) => ((o.spec as { cidrs?: unknown }).cidrs = []), 'servicecidrs');
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const said =
      '  no range: its spec.cidrs is missing or empty, which kube-apiserver refuses (it requires one CIDR, or two of different families)';
    for (const name of ['missing', 'empty']) {
      const at = lines.indexOf(`${name}  ready`);
      expect(lines.slice(at, at + 3)).toEqual([`${name}  ready`, said, '']);
    }
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.serviceCIDRs.map((sc) => [sc.name, sc.ranges.length])).toEqual([
      ['empty', 0],
      ['kubernetes', 1],
      ['missing', 0],
    ]);
  });

  it('a ServiceCIDR listing more CIDRs than a MetaAllocator reads (a broken API server) shows every range not allocatable', async () => {
    // Regression: status showed 65 served /24s under it, while a MetaAllocator refuses the object whole
    const cidrs = Array.from({ length: 65 }, (_, i) => `10.96.${i}.0/24`);
    addServiceCIDR(c.double, 'x', cidrs, true);
    const r = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(0);
    const ranges = (JSON.parse(r.stdout) as StatusReport).serviceCIDRs[0]!.ranges;
    expect(ranges.map((x) => x.cidr)).toEqual(cidrs);
    for (const range of ranges) {
      expect(range).toMatchObject({
        size: '0',
        used: 0,
        error: 'not allocatable: ServiceCIDR.cidrs holds 65 entries; at most 64 are read',
      });
    }
  });

  it("shows every range this package's MetaAllocator skips with the reason it gives, size 0, its addresses listed apart", async () => {
    // Regression: ::/64 (over the IPv4-mapped block ::ffff:0:0/96) showed as "0 of
    // 18,446,744,073,709,551,615 used" and 255.255.255.255/32 as a range of 0 addresses, while
    // every allocator refuses both and a MetaAllocator skips them.
    const d = c.double;
    const listed: [string, string[]][] = [
      ['mapped', ['::/64']],
      ['mapped-95', ['::fffe:0:0/95']],
      ['all-ones-v4', ['255.255.255.255/32']],
      ['all-ones-v6', ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128']],
      ['wide', ['fd00:48::/48']],
      ['no-cidr', ['10.0.0.0/33']],
      ['served', ['10.96.0.0/28', 'fd00:10:96::/112']],
    ];
    for (const [name, cidrs] of listed) addServiceCIDR(d, name, cidrs, true);
    addIPAddress(d, '::5', { namespace: 'default', name: 'in-mapped' });
    addIPAddress(d, '10.96.0.3', { namespace: 'default', name: 'served' });

    const skipped = skipReasons(listed);
    expect([...skipped.keys()].sort()).toEqual(
      listed
        .slice(0, 6)
        .map(([, [cidr]]) => cidr!)
        .sort(),
    );

    const r = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const report = JSON.parse(r.stdout) as StatusReport;
    for (const sc of report.serviceCIDRs) {
      for (const range of sc.ranges) {
        const reason = skipped.get(range.cidr);
        if (reason === undefined) {
          expect(range.error).toBeUndefined();
          expect(range.size).not.toBe('0');
          continue;
        }
        expect(range).toMatchObject({ size: '0', used: 0, free: '0', usedPercent: 0, error: `not allocatable: ${saidByCli(reason)}` });
        expect([range.staticBand.size, range.dynamicBand.size]).toEqual(['0', '0']);
      }
    }
    expect(skipped.get('::/64')).toBe(
      '::/64 overlaps the IPv4-mapped block ::ffff:0:0/96, whose addresses name IPv4 addresses; use an IPv6 range outside it',
    );
    expect(skipped.get('255.255.255.255/32')).toMatch(/^invalid address \[\] \(255\.255\.255\.255\/32 has no usable address/);
    expect(report.unserved.addresses.map((a) => [a.ip, a.cidr])).toEqual([['::5', '::/64']]);
    expect(report.outside.count).toBe(0);

    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.code).toBe(0);
    const row = text.stdout.split('\n').find((l) => l.trimStart().startsWith('::/64'))!;
    expect(row).toMatch(/^\s+::\/64\s+not allocatable: ::\/64 overlaps the IPv4-mapped block/);
    expect(text.stdout).not.toContain('18,446,744,073,709,551,615'); // ::/64's 2^64 − 1, counted before
    // Regression: the reason came after upstream's "invalid address []", which says nothing of
    // the range: what is wrong with it comes first, in the library's words
    for (const [cidr, length] of [
      ['255.255.255.255/32', '/32'],
      ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', '/128'],
    ]) {
      const line = text.stdout.split('\n').find((l) => l.trimStart().startsWith(cidr))!;
      expect(line.replace(/ {2,}/g, '  ')).toBe(
        `  ${cidr}  not allocatable: ${cidr} has no usable address: a ${length} holds only its network address, and the address after it, where the range would start, does not exist; use a shorter prefix`,
      );
      expect(skipped.get(cidr)).toBe(`invalid address [] (${line.split('not allocatable: ')[1]})`); // the library's cause
    }
    expect(text.stdout).not.toContain('invalid address []');
  });

  it('a refused range beside a served one: its reason runs to the end of its line, the served row keeps its columns', async () => {
    // Regression: the reason set the width of the bar column, and the served range's row had its
    // percentage pushed 150 characters to the right
    addServiceCIDR(c.double, 'mixed', ['10.96.0.0/28', 'fd00:48::/48'], true);
    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.find((l) => l.includes('10.96.0.0/28'))).toBe(
      `  10.96.0.0/28  IPv4  ${'░'.repeat(20)}  0.0 %  0 of 14 used, 14 free  static 0/0  dynamic 0/14`,
    );
    expect(lines.find((l) => l.includes('fd00:48::/48'))).toBe(
      '  fd00:48::/48        not allocatable: shortest allowed prefix length for service CIDR is 64, got 48',
    );
  });

  it('prints a bar, the counts and the bands per range, and the strays and owners', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/28'], true);
    for (let i = 1; i <= 7; i++) addIPAddress(d, `10.96.0.${i}`, { namespace: 'default', name: `web-${i}` });
    addIPAddress(d, '10.0.0.9', { namespace: 'legacy', name: 'old' });
    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const range = lines.find((l) => l.includes('10.96.0.0/28'))!;
    expect(range).toMatch(/█{10}░{10}/); // 7 of 14: half the bar
    expect(range).toContain('50.0 %');
    expect(range).toContain('7 of 14 used, 7 free');
    expect(stdout).toContain('kubernetes  ready');
    expect(stdout).toMatch(/Outside every ServiceCIDR: 1 IPAddress\n\s+10\.0\.0\.9\s+legacy\/old/);
    expect(stdout).toMatch(/default\s+7/);
  });

  it('counts among the top owners the addresses the ranges count as used, each once: not those outside, unserved or no allocation', async () => {
    // Regression: the owners counted every IPAddress listed, so another manager's objects in a
    // block no ServiceCIDR holds, a stray outside every range and a malformed name all showed as
    // owners of the Service ranges, and the owners added up to more than the ranges' used counts.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addServiceCIDR(d, 'inner', ['10.96.0.0/25'], true); // overlaps kubernetes: 10.96.0.5 is used in both
    addServiceCIDR(d, 'wide', ['fd00:48::/48'], true); // not allocated from
    addIPAddress(d, '10.96.0.5', { namespace: 'shop', name: 'cart' });
    addIPAddress(d, '10.96.0.200', { namespace: 'shop', name: 'web' });
    addIPAddress(d, '10.96.0.201', null); // no owner: "(none)"
    // another manager's object in a range takes the address, as the used count says: counted
    const gateway = { namespace: 'gw', name: 'edge', group: 'gateway.networking.k8s.io', resource: 'gateways' };
    addIPAddress(d, '10.96.0.202', gateway, { 'ipaddress.kubernetes.io/managed-by': 'gateway.example.com' });
    // another manager's objects in a block no ServiceCIDR holds: not counted
    const pool = { namespace: 'lb', name: 'pool', group: 'lb.example.com', resource: 'pools' };
    for (let i = 1; i <= 3; i++) addIPAddress(d, `192.168.50.${i}`, pool, { 'ipaddress.kubernetes.io/managed-by': 'lb.example.com' });
    addIPAddress(d, '10.99.0.4', { namespace: 'monitoring', name: 'grafana' }); // outside
    addIPAddress(d, 'fd00:48::5', { namespace: 'wide', name: 'x' }); // in a range not allocated from
    addIPAddress(d, '10.96.0.011', { namespace: 'weird', name: 'zeros' }); // no allocation

    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.serviceCIDRs.flatMap((sc) => sc.ranges.map((r) => [r.cidr, r.used]))).toEqual([
      ['10.96.0.0/25', 1],
      ['10.96.0.0/24', 4],
      ['fd00:48::/48', 0],
    ]);
    expect(report.owners).toEqual([
      { namespace: 'shop', count: 2 },
      { namespace: '', count: 1 },
      { namespace: 'gw', count: 1 },
    ]);
    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.stdout).toMatch(/\nTop owners by namespace:\n {2}shop +2\n {2}\(none\) +1\n {2}gw +1\n$/);
  });
  it("lists another manager's IPAddresses outside every ServiceCIDR apart from the allocator's strays, as kube-apiserver's repair loop leaves them alone", async () => {
    // Regression: a load-balancer controller's pool outside every ServiceCIDR was listed under
    // "Outside every ServiceCIDR" with the allocator's own strays, as if to be cleaned up.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.0.5', { namespace: 'shop', name: 'cart' });
    addIPAddress(d, '10.99.0.4', { namespace: 'monitoring', name: 'grafana' }); // the allocator's stray
    const pool = { namespace: 'lb', name: 'pool', group: 'lb.example.com', resource: 'pools' };
    for (const ip of ['192.168.50.2', '192.168.50.1', 'fd00:99::1'])
      addIPAddress(d, ip, pool, { 'ipaddress.kubernetes.io/managed-by': 'lb.example.com' });
    addIPAddress(d, '172.16.0.1', { namespace: 'ops', name: 'by-hand' }, {}); // no managed-by label: not the allocator's either

    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.outside).toEqual({ count: 1, addresses: [{ ip: '10.99.0.4', owner: 'monitoring/grafana' }] });
    const lb = 'pools.lb.example.com lb/pool';
    expect(report.otherManagersOutside).toEqual({
      count: 4,
      addresses: [
        { ip: '172.16.0.1', owner: 'ops/by-hand', managedBy: null },
        { ip: '192.168.50.1', owner: lb, managedBy: 'lb.example.com' },
        { ip: '192.168.50.2', owner: lb, managedBy: 'lb.example.com' },
        { ip: 'fd00:99::1', owner: lb, managedBy: 'lb.example.com' },
      ],
    });
    const used = report.serviceCIDRs.flatMap((sc) => sc.ranges).reduce((n, r) => n + r.used, 0);
    expect(used + report.outside.count + report.otherManagersOutside.count).toBe(report.ipAddresses);

    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const at = lines.indexOf('Outside every ServiceCIDR: 1 IPAddress');
    expect(lines.slice(at, lines.indexOf('Top owners by namespace:'))).toEqual([
      'Outside every ServiceCIDR: 1 IPAddress',
      expect.stringMatching(/^ {2}10\.99\.0\.4 +monitoring\/grafana$/),
      "Outside every ServiceCIDR, not managed by ipallocator.k8s.io (kube-apiserver's repair loop leaves them alone): 4 IPAddresses",
      expect.stringMatching(/^ {2}172\.16\.0\.1 +\(no managed-by label\) +ops\/by-hand$/),
      expect.stringMatching(/^ {2}192\.168\.50\.1 +lb\.example\.com +pools\.lb\.example\.com lb\/pool$/),
      expect.stringMatching(/^ {2}192\.168\.50\.2 +lb\.example\.com +pools\.lb\.example\.com lb\/pool$/),
      expect.stringMatching(/^ {2}fd00:99::1 +lb\.example\.com +pools\.lb\.example\.com lb\/pool$/),
    ]);

    // check proposes nothing about them either: only the allocator's stray, whose Service is missing
    const check = JSON.parse((await cli(['check', '--json', '--grace', '0', '--kubeconfig', c.kubeconfig])).stdout) as CheckReport;
    expect(check.findings.map((f) => [f.kind, f.ip])).toEqual([
      ['orphan', '10.96.0.5'],
      ['orphan', '10.99.0.4'],
    ]);
  });

  it("says where kube-apiserver's allocated_ips and available_ips differ from used and free: they count only the allocator's labelled IPAddresses in the prefix", async () => {
    // Regression: status called its used count what upstream's allocator counts as used, but
    // upstream's Used() (the allocated_ips gauge) counts only IPAddresses labelled managed-by
    // ipallocator.k8s.io with the range's family, whose name parses, in the prefix (network and
    // broadcast included); an operator comparing with kube-apiserver's metrics saw other numbers.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24', 'fd00::/64'], true);
    addServiceCIDR(d, 'same', ['10.100.0.0/28'], true);
    addIPAddress(d, '10.96.0.5', { namespace: 'shop', name: 'a' });
    addIPAddress(d, '10.96.0.6', { namespace: 'shop', name: 'b' });
    const gw = { namespace: 'gw', name: 'edge', group: 'gateway.networking.k8s.io', resource: 'gateways' };
    addIPAddress(d, '10.96.0.7', gw, { [MANAGED_BY]: 'gateway.example.com', [IP_FAMILY]: 'IPv4' }); // another controller's
    addIPAddress(d, '10.96.0.8', { namespace: 'ops', name: 'by-hand' }, {}); // unlabelled
    addIPAddress(d, '10.96.0.9', { namespace: 'shop', name: 'c' }, { [MANAGED_BY]: CONTROLLER, [IP_FAMILY]: 'IPv6' }); // wrong family
    addIPAddress(d, '10.96.0.0', { namespace: 'shop', name: 'net' }); // the network address: outside here, in upstream's prefix
    addIPAddress(d, 'fd00::1', { namespace: 'shop', name: 'v6' });
    addIPAddress(d, 'FD00::2', { namespace: 'shop', name: 'upper' }); // no allocation here; netip.ParseAddr reads it
    addIPAddress(d, '10.100.0.3', { namespace: 'shop', name: 'same' });

    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    const ranges = report.serviceCIDRs.flatMap((sc) => sc.ranges);
    expect(ranges.map((r) => [r.cidr, r.used, r.free, r.kubeApiserver])).toEqual([
      ['10.96.0.0/24', 5, '249', { allocated: 3, available: '251' }],
      // upstream's Free() on a range past MaxInt64 addresses: MaxInt64 − used
      ['fd00::/64', 1, '18446744073709551614', { allocated: 2, available: '9223372036854775805' }],
      ['10.100.0.0/28', 1, '13', { allocated: 1, available: '13' }],
    ]);

    const { stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    const lines = stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('kubernetes '));
    expect(lines.slice(at + 3, at + 6)).toEqual([
      "  10.96.0.0/24: kube-apiserver's metrics read 3 allocated, 251 available: they count the IPAddresses in the prefix labelled managed-by ipallocator.k8s.io and ip-family IPv4",
      "  fd00::/64: kube-apiserver's metrics read 2 allocated, 9,223,372,036,854,775,805 available: they count the IPAddresses in the prefix labelled managed-by ipallocator.k8s.io and ip-family IPv6; available_ips stops at 2^63 − 1 (the largest Go int) less allocated",
      '',
    ]);
    expect(stdout).not.toMatch(/10\.100\.0\.0\/28: kube-apiserver/);
  });

  // Regression: a /64 whose allocated count is used's was said to differ because of the labels,
  // where only available_ips differs, capped by upstream's Free() at the largest Go int.
  it("on a /64 where kube-apiserver's allocated count is used's, says available_ips differs because Go caps it", async () => {
    const d = c.double;
    addServiceCIDR(d, 'v6', ['fd01::/64'], true);
    addIPAddress(d, 'fd01::1', { namespace: 'shop', name: 'a' });
    const { stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    const lines = stdout.split('\n');
    expect(lines[lines.indexOf('v6  ready') + 2]).toBe(
      "  fd01::/64: kube-apiserver's metrics read 1 allocated, 9,223,372,036,854,775,806 available: available_ips stops at 2^63 − 1 (the largest Go int) less allocated",
    );
  });

  it('with only other managers’ IPAddresses outside, does not say every IPAddress is inside a ServiceCIDR', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(
      d,
      '192.168.50.1',
      { namespace: 'lb', name: 'pool', group: 'lb.example.com', resource: 'pools' },
      {
        'ipaddress.kubernetes.io/managed-by': 'lb.example.com',
      },
    );
    const { stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(stdout).not.toContain('Every IPAddress is inside a ServiceCIDR.');
    expect(stdout).not.toContain('Outside every ServiceCIDR: ');
    expect(stdout).toContain(
      "Outside every ServiceCIDR, not managed by ipallocator.k8s.io (kube-apiserver's repair loop leaves them alone): 1 IPAddress\n",
    );
  });

  it('a range in use never reads 0.0 %, however large', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/16'], true);
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'a' });
    addIPAddress(d, '10.96.0.11', { namespace: 'default', name: 'b' });
    const { stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    const range = stdout.split('\n').find((l) => l.includes('10.96.0.0/16'))!;
    expect(range).toContain('<0.1 %'); // 2 of 65,534
    expect(range).toContain('2 of 65,534 used');
  });

  it('a range with one address left never reads 100.0 %: >99.9 %, and the JSON keeps its 99.95', async () => {
    // Regression: 2,045 of 2,046 read "100.0 %", as a full range does.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/21'], true);
    for (let n = v4('10.96.0.1'); n < v4('10.96.7.254'); n++) addIPAddress(d, v4text(n), { namespace: 'default', name: `s-${n}` });
    const { stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    const range = stdout.split('\n').find((l) => l.includes('10.96.0.0/21'))!;
    expect(range).toContain('>99.9 %');
    expect(range).toContain('2,045 of 2,046 used, 1 free');
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.serviceCIDRs[0]!.ranges.find((r) => r.cidr === '10.96.0.0/21')).toMatchObject({ used: 2045, usedPercent: 99.95 });
    addIPAddress(d, '10.96.7.254', { namespace: 'default', name: 'last' });
    const full = (await cli(['status', '--kubeconfig', c.kubeconfig])).stdout.split('\n').find((l) => l.includes('10.96.0.0/21'))!;
    expect(full).toContain('100.0 %'); // full: the bar's end is reached
  });

  it('a ServiceCIDR not ready says why, as its Ready condition does: the reason and the message, escaped and cut', async () => {
    // Regression: only "not ready" was shown, without the controller's word on what to do (a
    // ServiceCIDR being deleted stays Terminating while IPAddresses still reference it).
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addServiceCIDR(d, 'old', ['10.100.0.0/24'], true);
    addServiceCIDR(d, 'odd', ['10.101.0.0/24'], true);
    addServiceCIDR(d, 'bare', ['10.102.0.0/24'], false);
    addServiceCIDR(d, 'wordy', ['10.103.0.0/24'], true);
    const terminating = 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR';
    d.modify(
      'old',
      (o) => {
        o.status = { conditions: [{ type: 'Ready', status: 'False', reason: 'Terminating', message: terminating }] };
      },
      'servicecidrs',
    );
    d.modify(
      'odd',
      (o) => {
        o.status = { conditions: [{ type: 'Ready', status: 'False', reason: 'Odd\u001b[2J', message: `x${'y'.repeat(2000)}` }] };
      },
      'servicecidrs',
    );
    d.modify(
      'wordy',
      (o) => {
        o.status = { conditions: [{ type: 'Ready', status: 'False', reason: `R${'e'.repeat(1500)}` }] };
      },
      'servicecidrs',
    );
    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`old  not ready (Terminating: ${terminating})\n`);
    expect(text.stdout).toContain('odd  not ready ("Odd\\x1b[2J": xyyy');
    expect(text.stdout).toContain('(1,001 more characters))\n');
    expect(controls(text.stdout)).toEqual([]);
    expect(text.stdout).toContain('bare  not ready\n');
    expect(text.stdout).toContain('kubernetes  ready\n');
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    const byName = new Map(report.serviceCIDRs.map((sc) => [sc.name, sc]));
    expect(byName.get('old')).toMatchObject({ ready: false, readyReason: 'Terminating', readyMessage: terminating });
    expect(byName.get('bare')).toMatchObject({ ready: false, readyReason: null, readyMessage: null });
    expect(byName.get('kubernetes')).toMatchObject({ ready: true, readyReason: null, readyMessage: null });
    expect(byName.get('odd')!.readyMessage).toMatch(/^xy+… \(1,001 more characters\)$/);
    // the reason is cut as the message is (the API server takes up to 1,024 characters)
    expect(byName.get('wordy')!.readyReason).toMatch(/^Re+… \(501 more characters\)$/);
  });

  it('--json never rounds usedPercent to an end not reached: 0 only when empty, 100 only when full', async () => {
    // Regression: one address in use of a /64 read usedPercent 0, as an empty range does, and
    // 32,765 of 32,766 read 100, as a full one does: a script alerting on 100 saw a range full
    // that had room.
    const d = c.double;
    addServiceCIDR(d, 'v6', ['2001:db8::/64'], true);
    addIPAddress(d, '2001:db8::5', { namespace: 'default', name: 'web' });
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.serviceCIDRs[0]!.ranges[0]).toMatchObject({ used: 1, usedPercent: 0.01 });
    expect(usedPercent(32_765, 32_766n)).toBe(99.99);
    expect(usedPercent(32_766, 32_766n)).toBe(100);
    expect(usedPercent(0, 32_766n)).toBe(0);
    expect(usedPercent(2045, 2046n)).toBe(99.95);
    expect(usedPercent(0, 0n)).toBe(0);
  });

  it('shows names from the cluster with their control characters escaped: no escape sequence or forged line reaches the terminal', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/28'], true);
    // an owner named by whoever could create the IPAddress: clear screen, red, a window title, a fake line
    addIPAddress(d, '10.0.0.9', {
      namespace: 'legacy',
      name: 'x\u001b[2J\u001b[31mRED\u001b]0;title\u0007\nEvery IPAddress is inside a ServiceCIDR.',
    });
    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    expect(controls(stdout)).toEqual([]); // no control character but the newlines of the report itself
    // in quotes, escaped as Go's %q: a name that does not read as itself
    expect(stdout).toContain('"legacy/x\\x1b[2J\\x1b[31mRED\\x1b]0;title\\a\\nEvery IPAddress is inside a ServiceCIDR."');
    expect(stdout.split('\n').filter((l) => l === 'Every IPAddress is inside a ServiceCIDR.')).toEqual([]); // not forged as a line
  });

  it("never cuts the counts it computed: a /64's free count is shown whole", async () => {
    // Regression: the counts column, followed by the bands, was cut at the cell width as names are
    const d = c.double;
    addServiceCIDR(d, 'v6', ['2001:db8::/64'], true);
    addIPAddress(d, '2001:db8::5', { namespace: 'default', name: 'web' });
    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('1 of 18,446,744,073,709,551,615 used, 18,446,744,073,709,551,614 free');
    expect(text.stdout).not.toContain('…');
  });

  it('cuts a name from the cluster at 1,000 characters, as the library cuts a Status message; --json keeps it whole', async () => {
    // Regression: an owner named in 100,000 characters was printed whole.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/28'], true);
    const long = 'x'.repeat(100_000);
    addIPAddress(d, '10.99.0.30', { namespace: 'default', name: long });
    addIPAddress(d, '10.96.0.3', { namespace: long, name: 'web' });
    addIPAddress(d, '10.96.0.4', { namespace: 'default', name: 'api' });
    const text = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(text.code).toBe(0);
    // "default/" and 992 of the name's characters: 1,000 in all, then what was left out
    expect(text.stdout).toMatch(/\n {2}10\.99\.0\.30 {2}default\/x{992}… \(99,008 more characters\)\n/);
    // the namespace among the owners, in a column the counts follow: cut to the table's cell width
    expect(text.stdout).toMatch(new RegExp(`\\n {2}x{${CELL_WIDTH - 3}}… {2}1\\n`));
    // and the other rows of that table are as wide as the cut name, not as the name: `  default`, padding, `  1`
    expect(text.stdout.split('\n').filter((line) => /^ {2}default +1$/.test(line))).toEqual([`  default${' '.repeat(CELL_WIDTH - 9)}  1`]);
    expect(text.stdout.length).toBeLessThan(4000);
    const json = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report.outside.addresses).toEqual([{ ip: '10.99.0.30', owner: `default/${long}` }]);
    expect(report.owners.map((o) => o.namespace).sort()).toEqual(['default', long]);
  });

  it('an IPAddress listed twice (a broken server or proxy) counts once, as the later item', async () => {
    // Regression: both items were counted as used.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.0.40', { namespace: 'default', name: 'web' });
    addIPAddress(d, '10.96.0.41', { namespace: 'default', name: 'api' });
    const [first, second] = d.objects();
    const again = { ...first!, spec: { parentRef: { group: '', resource: 'services', namespace: 'shop', name: 'other' } } };
    const list = { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: d.resourceVersion } };
    d.proxyAnswerNext('list', 'ipaddresses', { ...list, items: [first, second, again] });
    const report = JSON.parse((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).stdout) as StatusReport;
    expect(report.ipAddresses).toBe(2);
    expect(report.serviceCIDRs[0]!.ranges[0]!.used).toBe(2);
    expect(report.owners).toEqual([
      { namespace: 'default', count: 1 },
      { namespace: 'shop', count: 1 },
    ]);
  });

  it('shows in quotes a name that would not read as itself: a space at an end or two in a row, a quote', async () => {
    // Regression: "10.96.1.2 " showed as 10.96.1.2, its trailing space invisible.
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.1.2 ', { namespace: 'default', name: 'web' });
    addIPAddress(d, '10.96.1.3', { namespace: 'default', name: 'web  x' });
    addIPAddress(d, '10.96.1.4', { namespace: 'de"v', name: 'a' });
    addIPAddress(d, '10.96.1.5', { namespace: ' ', name: 'b' });
    addIPAddress(d, '10.96.1.6', { namespace: 'default', name: 'web', resource: 'gateways', group: 'example.com' });
    addIPAddress(d, '10.96.0.6', { namespace: ' ', name: 'c' }); // in the range: its namespace among the owners
    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const notAllocations = lines.findIndex((l) => l.startsWith('Not an allocation'));
    const outside = lines.slice(lines.indexOf('Outside every ServiceCIDR: 4 IPAddresses') + 1, notAllocations);
    expect(outside).toEqual([
      expect.stringMatching(/^ {2}10\.96\.1\.3 +"default\/web {2}x"$/),
      expect.stringMatching(/^ {2}10\.96\.1\.4 +"de\\"v\/a"$/),
      expect.stringMatching(/^ {2}10\.96\.1\.5 +" \/b"$/),
      expect.stringMatching(/^ {2}10\.96\.1\.6 +gateways\.example\.com default\/web$/), // one space inside: reads as itself
    ]);
    // a name with a space is no address: no allocation
    expect(lines.slice(notAllocations + 1, lines.indexOf('Top owners by namespace:'))).toEqual([
      expect.stringMatching(/^ {2}"10\.96\.1\.2 " +default\/web$/),
    ]);
    expect(stdout).toMatch(/\n {2}" " +1\n/); // the namespace " " among the owners
  });

  it('lists thousands of IPAddresses in pages with limit and continue, and counts every one', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/20'], true);
    const n = 3000;
    const base = v4('10.96.0.1');
    for (let i = 0; i < n; i++) addIPAddress(d, v4text(base + i * 1), { namespace: `ns-${i % 7}`, name: `s${i}` });
    const { code, stdout, stderr } = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    expect(stderr).toBe(''); // not a terminal: no progress
    const report = JSON.parse(stdout) as StatusReport;
    expect(report.ipAddresses).toBe(n);
    expect(report.serviceCIDRs[0]!.ranges[0]!.used).toBe(n);
    const lists = d.requestsOf('list').filter((r) => r.path.endsWith('/ipaddresses'));
    expect(lists.every((r) => r.query.limit === String(PAGE_SIZE))).toBe(true);
    expect(lists.length).toBe(Math.ceil(n / PAGE_SIZE));
    expect(lists.filter((r) => r.query.continue !== undefined).length).toBe(Math.ceil(n / PAGE_SIZE) - 1);
  });

  it('counts the namespaces past --top with a thousands separator, as every other count', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/20'], true);
    for (let i = 0; i < 1006; i++) addIPAddress(d, v4text(v4('10.96.0.1') + i), { namespace: `ns-${i}`, name: 'web' });
    const { code, stdout } = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\n {2}… and 1,001 more namespaces\n$/);
  });

  it('says one namespace past --top in the singular', async () => {
    // Regression: "… and 1 more namespaces".
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.0.10', { namespace: 'shop', name: 'web' });
    addIPAddress(d, '10.96.0.11', { namespace: 'shop', name: 'api' });
    addIPAddress(d, '10.96.0.12', { namespace: 'default', name: 'web' });
    const { code, stdout } = await cli(['status', '--top', '1', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\nTop owners by namespace:\n {2}shop +2\n {2}… and 1 more namespace\n$/);
  });

  it('a listing holds what the commands read of each object, not the objects as the server sent them', async () => {
    // a Service as a cluster holds it: a last-applied-configuration annotation of kilobytes
    const annotation = 'x'.repeat(25_000);
    for (let i = 0; i < 4 * PAGE_SIZE; i++) {
      c.double.insertService({
        metadata: {
          name: `s${i}`,
          namespace: 'default',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${i}${annotation}` },
        },
        spec: { clusterIPs: [v4text(v4('10.96.0.1') + i)] },
      });
    }
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heapUsed = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const held: number[] = []; // heap in use after the first page and after the last
    const cluster = new KubeCluster({
      kubeconfig: c.kubeconfig,
      onProgress: (_resource, listed, remaining) => {
        if (listed === PAGE_SIZE || remaining === 0) held.push(heapUsed());
      },
    });
    try {
      const services = await cluster.services();
      expect(services).toHaveLength(4 * PAGE_SIZE);
    } finally {
      cluster.close();
    }
    // three more pages of 500 objects of 25 kB (37.5 MB) were listed between the two. The server
    // double runs in this process: on a loaded machine the text of a page it is still writing to
    // the socket (12.5 MB) can be alive at either measurement, hence one page of slack
    expect(held).toHaveLength(2);
    expect(held[1]! - held[0]!).toBeLessThan(PAGE_SIZE * annotation.length + 5_000_000);
  });

  it('restarts a listing whose continue token expired between pages as one list without paging, and counts every object once', async () => {
    const d = c.double;
    for (let i = 0; i < 1200; i++) addIPAddress(d, v4text(v4('10.96.0.1') + i), { namespace: 'default', name: `s${i}` });
    let compacted = false;
    const cluster = new KubeCluster({
      kubeconfig: c.kubeconfig,
      onProgress: (resource, listed) => {
        // After the first page, the server forgets the snapshot behind the continue token (410).
        if (resource === 'ipaddresses' && listed === PAGE_SIZE && !compacted) {
          compacted = true;
          d.compact();
        }
      },
    });
    const records = await cluster.ipAddresses();
    expect(compacted).toBe(true);
    expect(new Set(records.map((r) => r.name)).size).toBe(1200);
    expect(records.length).toBe(1200);
    const lists = d.requestsOf('list').filter((r) => r.path.endsWith('/ipaddresses'));
    expect(lists.filter((r) => r.query.continue === undefined).length).toBe(2); // the first page, twice
    // the restart is the library's pager's (client-go's): one list without paging
    expect(lists.at(-1)!.query).toEqual({});
  });

  it('a listing whose continue token comes back ends with that error, exit 2 (the API-server double)', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/20'], true);
    for (let i = 0; i < PAGE_SIZE + 1; i++) addIPAddress(d, v4text(v4('10.96.0.1') + i), { namespace: 'default', name: `s${i}` });
    d.repeatContinue('ipaddresses');
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'ipallocator: list ipaddresses.networking.k8s.io: the API server answered a continue token it had given before; the listing would never end\n',
    );
    expect(d.requestsOf('list').filter((q) => q.path.endsWith('/ipaddresses')).length).toBe(2);
  });

  it('a listing answered page after page with no items and a new continue token ends after ten such pages, exit 2 (the API-server double)', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/20'], true);
    for (let i = 0; i < PAGE_SIZE + 1; i++) addIPAddress(d, v4text(v4('10.96.0.1') + i), { namespace: 'default', name: `s${i}` });
    d.emptyPagesForEver('ipaddresses');
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'ipallocator: list ipaddresses.networking.k8s.io: the API server answered 10 pages in a row without an item, each with a new continue token; the listing would never end\n',
    );
    // the first page (full), then ten empty ones
    expect(d.requestsOf('list').filter((q) => q.path.endsWith('/ipaddresses')).length).toBe(11);
  });

  // Not what kube-apiserver does: a broken server or proxy. The listing would never end.
  it.each([
    ['the same token again', ['A', 'A']],
    ['a cycle of tokens', ['A', 'B', 'A']],
  ])('a listing answered with %s ends with that error, exit 2', async (_what, tokens) => {
    let page = 0;
    const server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      const token = tokens[Math.min(page++, tokens.length - 1)];
      res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '5', continue: token }, items: [] }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const kc = writeKubeconfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        'ipallocator: list servicecidrs.networking.k8s.io: the API server answered a continue token it had given before; the listing would never end\n',
      );
      expect(page).toBe(tokens.length);
    } finally {
      kc.remove();
      await new Promise((done) => server.close(done));
    }
  });

  it('a throttled listing (429) is asked again after the wait the server asks for, as kubectl does', async () => {
    // Regression: one 429 on a page ended the command.
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/28'], true);
    addIPAddress(c.double, '10.96.0.3', { namespace: 'default', name: 'web' });
    c.double.failNext('list', 1, 429); // TooManyRequests, retryAfterSeconds 1
    const listsBefore = c.double.requestsOf('list').length;
    const r = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as StatusReport).serviceCIDRs[0]!.ranges[0]!.used).toBe(1);
    expect(c.double.requestsOf('list').length - listsBefore).toBe(3); // servicecidrs twice, ipaddresses once
  });

  it('shows listing progress on a terminal only, and clears it', async () => {
    const d = c.double;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/20']);
    for (let i = 0; i < 1200; i++) addIPAddress(d, v4text(v4('10.96.0.1') + i), { namespace: 'default', name: `s${i}` });
    const tty = await cli(['status', '--kubeconfig', c.kubeconfig], { tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stderr).toContain('listing ipaddresses: 500 of 1,200');
    expect(tty.stderr).toContain('listing ipaddresses: 1,200');
    expect(tty.stderr.endsWith('\r\x1b[K')).toBe(true);
    const pipe = await cli(['status', '--kubeconfig', c.kubeconfig], { tty: false });
    expect(pipe.stderr).toBe('');
    expect(pipe.stdout).toBe(tty.stdout);
    // an error on a terminal starts on a cleared line, not glued to a listing's progress
    d.failNext('list', 1, 500);
    const failing = await cli(['status', '--kubeconfig', c.kubeconfig], { tty: true });
    expect(failing.code).toBe(2);
    expect(failing.stderr).toContain('\r\x1b[Kipallocator: ');
    expect(failing.stderr).toContain('HTTP 500');
  });

  it("names a context that would not read as itself in quotes, as Go's %q, in status's and check's first line", async () => {
    // Regression: `context  sp (…)`, `context q"q (…)`: the name printed bare, its spaces and quote unseen.
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/28']);
    const text = readFileSync(c.kubeconfig, 'utf8');
    for (const [name, said] of [
      ['sp ', '"sp "'],
      ['two  sp', '"two  sp"'],
      ['q"q', '"q\\"q"'],
      ['e\u001b[31m', '"e\\x1b[31m"'],
      ['plain-name', 'plain-name'],
    ]) {
      writeFileSync(
        c.kubeconfig,
        text
          .replace('- name: double\n  context:', `- name: ${JSON.stringify(name)}\n  context:`)
          .replace('current-context: double', `current-context: ${JSON.stringify(name)}`),
      );
      const status = await cli(['status', '--kubeconfig', c.kubeconfig]);
      expect(status.stdout.split('\n')[0]).toBe(`context ${said} (${c.double.url}): 1 ServiceCIDR, 0 IPAddresses`);
      const check = await cli(['check', '--kubeconfig', c.kubeconfig]);
      expect(check.stdout.split('\n')[0]).toBe(`No problems found (context ${said}).`);
    }
  });

  it('uses the context named by --context and refuses an unknown one', async () => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/28']);
    const ok = await cli(['status', '--kubeconfig', c.kubeconfig, '--context', 'double']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('context double');
    const bad = await cli(['status', '--kubeconfig', c.kubeconfig, '--context', 'prod']);
    expect(bad.code).toBe(2);
    // a kubeconfig problem, not a usage error: no pointer to --help
    expect(bad.stderr).toBe(`ipallocator: context "prod" is not in the kubeconfig "${c.kubeconfig}" (contexts: "double")\n`);
    expect(bad.stdout).toBe('');
  });

  it('reads networking.k8s.io/v1beta1 when v1 is not served', async () => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/28']);
    addIPAddress(c.double, '10.96.0.3', { namespace: 'default', name: 'a' });
    addService(c.double, 'default', 'a', ['10.96.0.3']);
    // Serve v1 as "not found" by failing its list with 404, once per resource.
    c.double.failNext('list', 1, 404);
    const { code, stdout } = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as StatusReport).serviceCIDRs[0]!.ranges[0]!.used).toBe(1);
    const paths = c.double.requestsOf('list').map((r) => r.path);
    expect(paths[0]).toBe('/apis/networking.k8s.io/v1/servicecidrs');
    expect(paths[1]).toBe('/apis/networking.k8s.io/v1beta1/servicecidrs');
    expect(paths[2]).toBe('/apis/networking.k8s.io/v1beta1/ipaddresses');
  });

  it('prints its help with --help and exits 0', async () => {
    const { code, stdout } = await cli(['status', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: ipallocator status');
    expect(stdout).toContain('--kubeconfig');
  });
});

describe('status at the scale of a large cluster', () => {
  // Regression: render appended each list's table with push(...rows): with a --top as large as
  // the list, past about 125,000 rows that overflowed the stack ("internal error: RangeError").
  it('prints 150,000 IPAddresses outside every ServiceCIDR with --top past their count', () => {
    const count = 150_000;
    const labels = { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' };
    const listed = Array.from({ length: count }, (_, i) => ({
      name: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      labels,
      parentRef: { group: '', resource: 'services', namespace: 'old', name: `svc-${i}` },
    }));
    const serviceCIDRs = [{ name: 'kubernetes', cidrs: ['192.168.0.0/24'], labels: {}, deletionTimestamp: null }];
    const report = summarize({ context: 'big', server: 'https://big' }, serviceCIDRs, listed);
    expect(report.outside.count).toBe(count);
    const lines = render(report, { top: 1_000_000_000 }).split('\n');
    expect(lines).toContain('Outside every ServiceCIDR: 150,000 IPAddresses');
    expect(lines.filter((l) => /^ {2}10\.\S+ +old\/svc-\d+$/.test(l))).toHaveLength(count);
  });

  // Regression: summarize placed every address in every range, so 10^6 IPAddresses took seconds
  // and each ServiceCIDR more added a pass over them all. The work is counted here, never timed.
  it('places each address in the ranges that hold it, not in every range', () => {
    const ranges = 200;
    const perRange = 10;
    const serviceCIDRs = Array.from({ length: ranges }, (_, k) => ({
      name: `sc-${k}`,
      cidrs: [`10.${100 + (k >> 8)}.${k & 255}.0/24`],
      labels: {},
      deletionTimestamp: null,
    }));
    serviceCIDRs.push({ name: 'wide', cidrs: ['fd00:48::/48'], labels: {}, deletionTimestamp: null }); // not served
    const labels = { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io', 'ipaddress.kubernetes.io/ip-family': 'IPv4' };
    const listed = serviceCIDRs
      .slice(0, ranges)
      .flatMap((_, k) =>
        Array.from({ length: perRange }, (_, i) => ({ name: `10.${100 + (k >> 8)}.${k & 255}.${i + 1}`, labels, parentRef: null })),
      );
    listed.push({ name: '10.99.0.1', labels, parentRef: null }); // outside every range
    // placing an address in a range, or asking whether a range not served holds it: inRange
    const held = vi.spyOn(Prefix.prototype, 'inRange');
    try {
      const report = summarize({ context: 'many', server: 'https://many' }, serviceCIDRs, listed);
      expect(report.serviceCIDRs.slice(0, ranges).every((sc) => sc.ranges[0]!.used === perRange)).toBe(true);
      expect(report.outside.count).toBe(1);
      // once per address, in its one range (before: once per address and range, 201 × 2,001)
      expect(held.mock.calls.length).toBeLessThanOrEqual(listed.length);
    } finally {
      held.mockRestore();
    }
  });
});

// An API server lists in name order, which onePerName reads in one pass; any other order goes
// through a map of the names. Both read a name listed twice as the later item.
describe('onePerName', () => {
  const at = (name: string, v: string) => ({ name, labels: {}, parentRef: null, resourceVersion: v });
  it.each([
    ['in name order', [at('10.0.0.1', 'a'), at('10.0.0.2', 'b'), at('10.0.0.3', 'c')], ['10.0.0.1 a', '10.0.0.2 b', '10.0.0.3 c'], {}],
    ['in another order', [at('10.0.0.3', 'a'), at('10.0.0.1', 'b'), at('10.0.0.2', 'c')], ['10.0.0.3 a', '10.0.0.1 b', '10.0.0.2 c'], {}],
    [
      'in name order, one name twice in a row',
      [at('10.0.0.1', 'a'), at('10.0.0.2', 'b'), at('10.0.0.2', 'c')],
      ['10.0.0.1 a', '10.0.0.2 c'],
      { '10.0.0.2': 2 },
    ],
    [
      'in name order but for a name listed again at the end',
      [at('10.0.0.1', 'a'), at('10.0.0.2', 'b'), at('10.0.0.3', 'c'), at('10.0.0.1', 'd'), at('10.0.0.1', 'e')],
      ['10.0.0.1 e', '10.0.0.2 b', '10.0.0.3 c'],
      { '10.0.0.1': 3 },
    ],
    ['empty', [], [], {}],
  ])('%s: one record per name, the later, where the first stood', (_, listed, kept, times) => {
    const { ipAddresses, listedTimes, find } = onePerName(listed);
    expect(ipAddresses.map((r) => `${r.name} ${r.resourceVersion}`)).toEqual(kept);
    expect(Object.fromEntries(listedTimes)).toEqual(times);
    // find: the record kept for a name, none for a name not listed (before, after, between them)
    for (const r of ipAddresses) expect(find(r.name)).toBe(r);
    for (const name of ['10.0.0.0', '10.0.0.10', '10.0.0.4', '', '9']) expect(find(name)).toBeUndefined();
  });
});
