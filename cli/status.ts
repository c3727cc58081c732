// `ipallocator status`: how full every ServiceCIDR range is, from one listing of ServiceCIDRs and
// IPAddresses. Pure: summarize() takes the records, render() / the JSON shape present them.
//
// Counting rules: an IPAddress is used in a range when its name is an address in [first, last] of
// the range, whoever made it: any IPAddress of that name keeps the allocator from creating it, so
// `free` (size − used) is what can still be allocated. This is not what upstream's allocator counts
// as used: its Used(), which kube-apiserver's gauges kube_apiserver_clusterip_allocator_allocated_ips
// and available_ips (= Free()) report per range, counts only the IPAddresses labelled managed-by
// ipallocator.k8s.io with the range's ip-family, whose name netip.ParseAddr reads (any spelling),
// in the prefix, network and broadcast included; each range carries that count too
// (`kubeApiserver`), and the text says it where it differs. A name that is no address in
// canonical form (ranges.ts allocatedAddress: what kube-apiserver's validation requires, as `check`
// reads it) is no allocation, listed apart. An address inside two overlapping ranges counts in both. A range this
// package's MetaAllocator skips (ranges.ts rangesOf) counts nothing, with the MetaAllocator's
// reason; an IPAddress in its [first, last] and in no served range is `unserved`: inside a
// ServiceCIDR, as kube-apiserver's repair loop and `check` read it (ranges.ts holds), in a range
// this package does not allocate from. Any other IPAddress is outside every ServiceCIDR: the
// allocator's own (labelled managed-by ipallocator.k8s.io) as `outside`, the strays to look at,
// any other (another controller's, or unlabelled) as `otherManagersOutside`, which upstream's
// repair loop leaves alone (managedByController) and so does `check`. The network and IPv4
// broadcast addresses are never allocatable and in no range (upstream's repair loop,
// PrefixContainsIP, as `check` applies it to ClusterIPs): an IPAddress there is outside unless
// another range holds it. So without overlapping ranges, the ranges' used counts, the unserved
// count, both outside counts and the not-allocations count add up to the IPAddresses listed.
// The owners by namespace are those of the addresses counted as used, each once. Sizes are
// upstream's hostsPerNetwork (IPv4 2^h − 2, IPv6 2^h − 1, at most 2^64 − 1), so they are given
// as decimal strings in JSON.
import { type Family, formatAddr } from '../adapters/address.ts';
import { cutMessage } from '../adapters/kubernetes/bodies.ts';
import type { Prefix } from '../adapters/geometry.ts';
import { PrefixTable } from '../adapters/prefix-table.ts';
import { hasAllocatorLabels, parseRecordName } from '../adapters/records.ts';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, type IPAddressRecord } from '../adapters/store.ts';
import type { ListedServiceCIDR } from './listing.ts';
import { allocatedAddressInto, byIP, holds, placement, rangesOf, type ServiceRange, sortByAddress } from './ranges.ts';
import { appendLines, bar, counted, firstOf, formatCount, named, percent, shown, sourceText, table } from './text.ts';

/** The `--json` shape of `status` (schema "ipallocator/status/v1"; fields are only ever added). */
export interface StatusReport {
  schema: 'ipallocator/status/v1';
  /** The kubeconfig context and its server; both "" for a saved listing (`from`). */
  context: string;
  server: string;
  /** The saved listing read (`--from`: the file as given, "-" for standard input); null for a cluster. */
  from: string | null;
  /** IPAddress objects listed, in every range or none; a name listed twice counts once. */
  ipAddresses: number;
  serviceCIDRs: ServiceCIDRStatus[];
  /**
   * IPAddresses in [first, last] of a range this package's MetaAllocator skips (its `error` says
   * why) and in no range it serves: inside a ServiceCIDR for kube-apiserver's repair loop and for
   * `check`, counted in no range here. `serviceCIDR` and `cidr` name the first such range.
   */
  unserved: { count: number; addresses: { ip: string; owner: string | null; serviceCIDR: string; cidr: string }[] };
  /**
   * The allocator's IPAddresses (labelled managed-by ipallocator.k8s.io) in no range of any
   * ServiceCIDR (a removed range, a range's network or IPv4 broadcast address).
   */
  outside: { count: number; addresses: { ip: string; owner: string | null }[] };
  /**
   * The other IPAddresses in no range of any ServiceCIDR: managed by another controller (a
   * load-balancer's pool), or without the managed-by label (written by hand). kube-apiserver's
   * repair loop leaves them alone, and so does `check`. `managedBy`: the label's value, null
   * without it.
   */
  otherManagersOutside: { count: number; addresses: { ip: string; owner: string | null; managedBy: string | null }[] };
  /**
   * IPAddresses whose name is no address in canonical form (`10.96.0.011`, `::ffff:10.96.0.9`,
   * `FD00::5`, `not-an-ip`), which kube-apiserver's validation refuses: no allocation, counted in
   * no range; `check` finds no Service holding them.
   */
  notAllocations: { count: number; addresses: { ip: string; owner: string | null }[] };
  /**
   * The IPAddresses counted as used in a range, per owner namespace, most first ("" = not owned by
   * a namespaced object); each once, also when overlapping ranges both count it. Those outside,
   * unserved or no allocation are not counted here.
   */
  owners: { namespace: string; count: number }[];
}

export interface ServiceCIDRStatus {
  name: string;
  /** The Ready condition: true/false, null when there is none (upstream counts that as ready). */
  ready: boolean | null;
  /** The Ready condition's reason (`Terminating`), cut at 1,000 characters; null when it gives none. */
  readyReason: string | null;
  /** The Ready condition's message, cut at 1,000 characters; null when it gives none. */
  readyMessage: string | null;
  /** Deletion has started (metadata.deletionTimestamp): its ranges take no new allocations. */
  deleting: boolean;
  ranges: RangeStatus[];
}

export interface RangeStatus {
  /** As written in spec.cidrs. */
  cidr: string;
  family: 'IPv4' | 'IPv6' | null;
  /** Allocatable addresses, decimal. */
  size: string;
  used: number;
  /** size − used, decimal. */
  free: string;
  /** used / size × 100, rounded to 0.01: 0 only when none is used, 100 only when none is free (usedPercent()). */
  usedPercent: number;
  /** The lower band (for addresses asked for by name): empty in ranges of 16 addresses or fewer. */
  staticBand: BandStatus;
  /** The upper band, where allocateNext draws first. */
  dynamicBand: BandStatus;
  /**
   * What kube-apiserver's allocator for this range reports (upstream's Used() and Free(), the
   * gauges kube_apiserver_clusterip_allocator_allocated_ips and available_ips of this CIDR, as of
   * its last allocation or release): `allocated` counts the IPAddresses labelled managed-by
   * ipallocator.k8s.io with this range's ip-family whose name is an address (in any spelling
   * netip.ParseAddr reads) in the prefix, network and broadcast included — not another
   * controller's or an unlabelled one, which `used` counts; `available` is size − allocated, 0
   * when that is negative, and 2^63 − 1 − allocated for a range of more than 2^63 − 1 addresses
   * (a /64), decimal. Null for a range this package does not allocate from (`error`).
   */
  kubeApiserver: { allocated: number; available: string } | null;
  /**
   * Set when this package's MetaAllocator would skip the entry: `not allocatable: ` and the reason
   * it gives (text that is not a CIDR; an IPv6 range shorter than /64; 255.255.255.255/32 or the
   * all-ones IPv6 /128; an IPv6 range overlapping ::ffff:0:0/96). The counts are then zero; the
   * IPAddresses in its [first, last] are listed in `unserved`.
   */
  error?: string;
}

export interface BandStatus {
  /** First and last address of the band; null when the band is empty. */
  first: string | null;
  last: string | null;
  size: string;
  used: number;
}

/** What a served range counts, filled as each IPAddress is looked up. */
interface RangeCounts {
  staticUsed: number;
  dynamicUsed: number;
  /** upstream's Used(): the allocator's labelled IPAddresses in the prefix (network and broadcast too). */
  allocated: number;
}

/** A range with a prefix, served or not, as the look-up table holds it. */
interface HeldRange {
  /** The range's prefix, which the table holds it under. */
  readonly prefix: Prefix;
  readonly range: ServiceRange;
  /** Its place in the listing (ServiceCIDRs, then spec.cidrs): the first range holding an unserved address names it. */
  readonly order: number;
  /** undefined for a range this package does not allocate from. */
  readonly counts: RangeCounts | undefined;
}

/**
 * Counts every IPAddress into the ranges of every ServiceCIDR. A name listed twice is one
 * IPAddress, the later item (onePerName). Each name is parsed once and looked up once among all
 * the ranges (adapters/prefix-table.ts: a time that depends on the prefix lengths held, not on how
 * many ranges there are); nothing is kept per address but what is listed.
 */
export function summarize(
  context: { context: string; server: string; from?: string | undefined },
  serviceCIDRs: readonly ListedServiceCIDR[],
  listed: readonly IPAddressRecord[],
): StatusReport {
  const { ipAddresses } = onePerName(listed);
  const ranges = serviceCIDRs.map(rangesOf);
  const counts = ranges.map((rs) =>
    rs.map((r) => (r.prefix === undefined || r.refusal !== undefined ? undefined : { staticUsed: 0, dynamicUsed: 0, allocated: 0 })),
  );
  const table = new PrefixTable<HeldRange>();
  let order = 0;
  ranges.forEach((rs, i) =>
    rs.forEach((range, j) => {
      if (range.prefix !== undefined) table.add({ prefix: range.prefix, range, order, counts: counts[i]![j] });
      order++;
    }),
  );

  const unserved: StatusReport['unserved']['addresses'] = [];
  const outside: StatusReport['outside']['addresses'] = [];
  const otherManagersOutside: StatusReport['otherManagersOutside']['addresses'] = [];
  const notAllocations: StatusReport['notAllocations']['addresses'] = [];
  const perNamespace = new Map<string, number>();
  const addr = { version: 4 as Family, words: new Uint32Array(4) };
  for (const record of ipAddresses) {
    // the address it allocates (0: none, the name is no address in canonical form), else the
    // address upstream's Used() reads in it (netip.ParseAddr: any spelling; 0: none)
    const allocated = allocatedAddressInto(record.name, addr.words);
    const version = allocated === 0 ? parseRecordName(record.name, addr.words) : allocated;
    if (allocated === 0) notAllocations.push({ ip: record.name, owner: ownerText(record) });
    if (version === 0) continue;
    const labelled = hasAllocatorLabels(record, version === 4 ? 'IPv4' : 'IPv6');
    if (allocated === 0 && !labelled) continue;
    addr.version = version;
    // served: in [first, last] of a range the MetaAllocator serves; else the first range not
    // served whose [first, last] holds it (as `check` reads it, through the same holds)
    let served = false;
    let unservedIn: HeldRange | undefined;
    for (const held of table.containing(version, addr.words)) {
      const c = held.counts;
      if (c !== undefined && labelled) c.allocated++; // the prefix contains it
      if (allocated === 0) continue;
      if (c === undefined) {
        if (holds(held.range, addr) && (unservedIn === undefined || held.order < unservedIn.order)) unservedIn = held;
        continue;
      }
      // not in [first, last]: the network and IPv4 broadcast addresses are in no range
      // (upstream's PrefixContainsIP), as `check` reads a ClusterIP there as out-of-range
      const where = placement(held.range.prefix!, addr);
      if (where === 'outside') continue;
      served = true;
      if (where === 'static') c.staticUsed++;
      else c.dynamicUsed++;
    }
    if (allocated === 0) continue;
    if (served) {
      // the owners of what the ranges count as used, each address once (overlapping ranges count
      // it in both): those outside, unserved or no allocation are listed with their owner
      const ns = record.parentRef?.namespace ?? '';
      perNamespace.set(ns, (perNamespace.get(ns) ?? 0) + 1);
      continue;
    }
    const owner = ownerText(record);
    if (unservedIn !== undefined)
      unserved.push({ ip: record.name, owner, serviceCIDR: unservedIn.range.serviceCIDR, cidr: unservedIn.range.cidr });
    else {
      // another controller's object (upstream's repair loop skips those: managedByController) is
      // none of the allocator's strays: listed apart, not to be cleaned up
      const managedBy = record.labels[LABEL_MANAGED_BY];
      if (managedBy === CONTROLLER_NAME) outside.push({ ip: record.name, owner });
      else otherManagersOutside.push({ ip: record.name, owner, managedBy: managedBy ?? null });
    }
  }

  const cidrs: ServiceCIDRStatus[] = serviceCIDRs.map((sc, i) => ({
    name: sc.name,
    ready: sc.ready ?? null,
    readyReason: sc.readyReason === undefined ? null : cutMessage(sc.readyReason),
    readyMessage: sc.readyMessage === undefined ? null : cutMessage(sc.readyMessage),
    deleting: sc.deletionTimestamp !== null,
    ranges: ranges[i]!.map(({ cidr, prefix, refusal }, j) => {
      const c = counts[i]![j];
      if (prefix === undefined || c === undefined) {
        const none: BandStatus = { first: null, last: null, size: '0', used: 0 };
        return {
          cidr,
          family: prefix?.family ?? null,
          size: '0',
          used: 0,
          free: '0',
          usedPercent: 0,
          staticBand: none,
          dynamicBand: { ...none },
          kubeApiserver: null,
          error: refusal,
        };
      }
      const size = prefix.size;
      const used = c.staticUsed + c.dynamicUsed;
      const staticSize = BigInt(Math.min(prefix.rangeOffset, Number(size)));
      const hasStatic = staticSize > 0n;
      const hasDynamic = size > staticSize;
      return {
        cidr,
        family: prefix.family,
        size: size.toString(),
        used,
        free: (size - BigInt(used)).toString(),
        usedPercent: usedPercent(used, size),
        staticBand: {
          first: hasStatic ? formatAddr(prefix.version, prefix.first) : null,
          last: hasStatic ? prefix.formatAt(0, Number(staticSize) - 1) : null,
          size: staticSize.toString(),
          used: c.staticUsed,
        },
        dynamicBand: {
          first: hasDynamic ? formatAddr(prefix.version, prefix.offsetAddress) : null,
          last: hasDynamic ? formatAddr(prefix.version, prefix.last) : null,
          size: (size - staticSize).toString(),
          used: c.dynamicUsed,
        },
        kubeApiserver: { allocated: c.allocated, available: upstreamFree(size, c.allocated).toString() },
      };
    }),
  }));

  for (const list of [unserved, outside, otherManagersOutside, notAllocations]) sortByAddress<{ ip: string }>(list, byIP);
  const owners = [...perNamespace.entries()]
    .map(([namespace, count]) => ({ namespace, count }))
    .sort((a, b) => b.count - a.count || (a.namespace < b.namespace ? -1 : 1));
  return {
    schema: 'ipallocator/status/v1',
    context: context.context,
    server: context.server,
    from: context.from ?? null,
    ipAddresses: ipAddresses.length,
    serviceCIDRs: cidrs,
    unserved: { count: unserved.length, addresses: unserved },
    outside: { count: outside.length, addresses: outside },
    otherManagersOutside: { count: otherManagersOutside.length, addresses: otherManagersOutside },
    notAllocations: { count: notAllocations.length, addresses: notAllocations },
    owners,
  };
}

const MAX_INT64 = (1n << 63n) - 1n;

/** Upstream's Free(): size − used in a Go int, never negative; MaxInt64 − used past MaxInt64 addresses. */
function upstreamFree(size: bigint, used: number): bigint {
  if (size > MAX_INT64) return MAX_INT64 - BigInt(used);
  return size > BigInt(used) ? size - BigInt(used) : 0n;
}

/**
 * used / size × 100 rounded to 0.01, as `status --json` gives it. As the text's percent(), neither
 * end is given before it is reached: a range with one address in use is 0.01, not 0 (one of a /64),
 * and one with an address left 99.99, not 100 (32,765 of 32,766), so a script reading 100 as full
 * or 0 as unused is right.
 */
export function usedPercent(used: number, size: bigint): number {
  if (size === 0n || used === 0) return 0;
  const rounded = Math.round((used / Number(size)) * 10_000) / 100;
  if (rounded === 0) return 0.01;
  return rounded === 100 && BigInt(used) < size ? 99.99 : rounded;
}

/**
 * One IPAddress per name, the later item, as a store keyed by name keeps it: no API server holds
 * two objects of one name, but a broken server or proxy may list one twice. `listedTimes`: how
 * often each name listed more than once was listed; `find`: the item kept for a name. An API
 * server lists a resource in the order of its keys, by name: names that only ever increase hold
 * none twice, which one pass tells, and `find` searches them by halves, where a map of 10^6 names
 * took most of a `status` run; any other order is read through the map.
 */
export function onePerName<T extends IPAddressRecord>(
  listed: readonly T[],
): {
  ipAddresses: readonly T[];
  listedTimes: Map<string, number>;
  find: (name: string) => T | undefined;
} {
  let increasing = true;
  for (let i = 1; i < listed.length && increasing; i++) increasing = listed[i - 1]!.name < listed[i]!.name;
  if (increasing) {
    const find = (name: string) => {
      // the first item whose name is not below `name`: lo
      let lo = 0;
      let hi = listed.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (listed[mid]!.name < name) lo = mid + 1;
        else hi = mid;
      }
      return listed[lo]?.name === name ? listed[lo] : undefined;
    };
    return { ipAddresses: listed, listedTimes: new Map(), find };
  }
  const byName = new Map<string, T>();
  const listedTimes = new Map<string, number>();
  for (const r of listed) {
    if (byName.has(r.name)) listedTimes.set(r.name, (listedTimes.get(r.name) ?? 1) + 1);
    byName.set(r.name, r);
  }
  return { ipAddresses: [...byName.values()], listedTimes, find: (name) => byName.get(name) };
}

/** "namespace/name" of a Service owner, "resource.group namespace/name" of another, null for none. */
export function ownerText(r: IPAddressRecord): string | null {
  const p = r.parentRef;
  if (p === null) return null;
  const who = p.namespace ? `${p.namespace}/${p.name}` : p.name;
  return (p.group ?? '') === '' && p.resource === 'services' ? who : `${p.resource}${p.group ? `.${p.group}` : ''} ${who}`;
}

/**
 * ` (reason: message)`, ` (reason)` or ` (message)` of a Ready condition that says why; "" when it
 * says nothing. The reason is a name (quoted when it would not read as itself); the message, cut
 * already, is shown as written (every line is escaped as it is printed).
 */
function whyNotReady(sc: ServiceCIDRStatus): string {
  const said = [...(sc.readyReason === null ? [] : [named(sc.readyReason)]), ...(sc.readyMessage === null ? [] : [sc.readyMessage])];
  return said.length === 0 ? '' : ` (${said.join(': ')})`;
}

/** The terminal form: one block per ServiceCIDR with a bar per range, then strays and owners. */
export function render(report: StatusReport, options: { top: number }): string {
  const out: string[] = [];
  out.push(
    `${report.from === null ? `context ${named(report.context)} (${report.server})` : sourceText(report)}: ${counted(report.serviceCIDRs.length, 'ServiceCIDR')}, ${counted(report.ipAddresses, 'IPAddress', 'IPAddresses')}`,
  );
  for (const sc of report.serviceCIDRs) {
    const state = sc.ready === null ? 'ready (no Ready condition)' : sc.ready ? 'ready' : `not ready${whyNotReady(sc)}`;
    out.push('');
    out.push(`${named(sc.name)}  ${state}${sc.deleting ? ', being deleted: takes no new allocations' : ''}`);
    if (sc.ranges.length === 0) {
      // only a broken API server lists one so (or one in front of it): the listing is not cut short
      out.push(
        '  no range: its spec.cidrs is missing or empty, which kube-apiserver refuses (it requires one CIDR, or two of different families)',
      );
      continue;
    }
    const rows: string[][] = [];
    for (const r of sc.ranges) {
      if (r.error !== undefined) {
        rows.push([`  ${named(r.cidr)}`, '', r.error]);
        continue;
      }
      const frac = r.size === '0' ? 0 : r.used / Number(r.size);
      rows.push([
        `  ${named(r.cidr)}`,
        r.family ?? '',
        bar(frac, r.used > 0),
        percent(frac * 100), // not usedPercent: rounded to 0.01 for the JSON, 2 of a /16 would read 0.0 %
        `${formatCount(r.used)} of ${formatCount(r.size)} used, ${formatCount(r.free)} free`,
        `static ${formatCount(r.staticBand.used)}/${formatCount(r.staticBand.size)}`,
        `dynamic ${formatCount(r.dynamicBand.used)}/${formatCount(r.dynamicBand.size)}`,
      ]);
    }
    appendLines(out, table(rows, [false, false, false, true, false, false, false], [true, false, false, false, false, false, false]));
    for (const r of sc.ranges) {
      const k = r.kubeApiserver;
      if (k === null || (k.allocated === r.used && k.available === r.free)) continue;
      // why they differ: what Used() counts, and Free()'s cap on a range past the largest Go int
      const why = [
        ...(k.allocated === r.used
          ? []
          : [`they count the IPAddresses in the prefix labelled managed-by ${CONTROLLER_NAME} and ip-family ${r.family}`]),
        ...(BigInt(r.size) > MAX_INT64 ? ['available_ips stops at 2^63 − 1 (the largest Go int) less allocated'] : []),
      ];
      out.push(
        `  ${named(r.cidr)}: kube-apiserver's metrics read ${formatCount(k.allocated)} allocated, ${formatCount(k.available)} available: ${why.join('; ')}`,
      );
    }
  }
  out.push('');
  if (report.unserved.count > 0) {
    out.push(`In a ServiceCIDR range this tool does not allocate from: ${counted(report.unserved.count, 'IPAddress', 'IPAddresses')}`);
    const { shown, more } = firstOf(report.unserved.addresses, options.top);
    appendLines(
      out,
      table(
        shown.map((a) => [`  ${named(a.ip)}`, named(a.cidr), a.owner === null ? '(no parentRef)' : named(a.owner)]),
        [false, false, false],
        [true, true, true],
      ),
    );
    if (more !== undefined) out.push(more);
  }
  if (report.outside.count === 0) {
    const elsewhere = report.otherManagersOutside.count + report.notAllocations.count;
    if (report.ipAddresses > 0 && elsewhere === 0) out.push('Every IPAddress is inside a ServiceCIDR.');
  } else {
    out.push(`Outside every ServiceCIDR: ${counted(report.outside.count, 'IPAddress', 'IPAddresses')}`);
    const { shown, more } = firstOf(report.outside.addresses, options.top);
    appendLines(
      out,
      table(
        shown.map((a) => [`  ${named(a.ip)}`, a.owner === null ? '(no parentRef)' : named(a.owner)]),
        [false, false],
        [true, true],
      ),
    );
    if (more !== undefined) out.push(more);
  }
  if (report.otherManagersOutside.count > 0) {
    out.push(
      `Outside every ServiceCIDR, not managed by ipallocator.k8s.io (kube-apiserver's repair loop leaves them alone): ${counted(report.otherManagersOutside.count, 'IPAddress', 'IPAddresses')}`,
    );
    const { shown, more } = firstOf(report.otherManagersOutside.addresses, options.top);
    appendLines(
      out,
      table(
        shown.map((a) => [
          `  ${named(a.ip)}`,
          a.managedBy === null ? '(no managed-by label)' : named(a.managedBy),
          a.owner === null ? '(no parentRef)' : named(a.owner),
        ]),
        [false, false, false],
        [true, true, true],
      ),
    );
    if (more !== undefined) out.push(more);
  }
  if (report.notAllocations.count > 0) {
    out.push(
      `Not an allocation (the name is no address in canonical form, which kube-apiserver requires): ${counted(report.notAllocations.count, 'IPAddress', 'IPAddresses')}`,
    );
    const { shown, more } = firstOf(report.notAllocations.addresses, options.top);
    appendLines(
      out,
      table(
        shown.map((a) => [`  ${named(a.ip)}`, a.owner === null ? '(no parentRef)' : named(a.owner)]),
        [false, false],
        [true, true],
      ),
    );
    if (more !== undefined) out.push(more);
  }
  if (report.owners.length > 0) {
    out.push(`Top owners by namespace:`);
    const shown = report.owners.slice(0, options.top);
    appendLines(
      out,
      table(
        shown.map((o) => [`  ${o.namespace === '' ? '(none)' : named(o.namespace)}`, formatCount(o.count)]),
        [false, true],
        [true, false],
      ),
    );
    if (report.owners.length > shown.length)
      out.push(`  … and ${counted(report.owners.length - shown.length, 'more namespace', 'more namespaces')}`);
  }
  return out.map(shown).join('\n') + '\n';
}
