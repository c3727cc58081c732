// `ipallocator check`: kube-apiserver's ClusterIP repair rules as a report
// (pkg/registry/core/service/ipallocator/controller/repairip.go, RepairIPAddress), and `--fix`,
// which deletes what that controller's IPAddress loop deletes — nothing it would create — except
// an object whose address a Service holds: that controller's Service loop re-points such an
// object in place, and deleting it alone would free an address in use until then.
//
// IPAddress loop (syncIPAddress), only for objects labelled managed-by ipallocator.k8s.io:
//   parentRef not a core Service (group ≠ "" or resource ≠ "services") → not-a-service  delete
//   parent Service does not exist, created more than the grace (60 s) ago → orphan    delete
//     … created less than the grace ago (the Service may still be on its way) → pending (not counted)
//   parent Service exists but does not list the address                  → wrong-reference  delete
//     … or the name is no address in canonical form, which allocates nothing (upstream compares
//     the name with the ClusterIPs as written, and keeps one written so: deleted all the same)
// Service loop (syncService), every ClusterIP of every Service that has one (not headless):
//   not an address                                                       → invalid-cluster-ip
//   not inside any ServiceCIDR (PrefixContainsIP: not its network address, nor IPv4 broadcast)
//                                                                        → out-of-range
//   no IPAddress of that name                                            → missing
//   the IPAddress references another object, or another Service that does not hold the address
//                                                                        → held-by-other
//   … another Service that also holds it (the address is given twice)    → duplicate
//   the IPAddress lacks the family / managed-by labels                   → bad-labels
// Upstream repairs the Service-loop findings by creating (or deleting and re-creating) the
// IPAddress for the Service; this command leaves that to kube-apiserver and only reports them.
//
// Before each delete --fix reads the IPAddress and its parent Service again and deletes only if
// the rule still holds, with the object's uid as a precondition, so an object re-created or
// re-assigned since the listing is left alone. An object whose deletion has started is sent no
// delete (upstream's loop sends one, which changes nothing): its finding says a finalizer holds it.
import { CONTROLLER_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY, type IPAddressRecord, type ParentRef } from '../adapters/store.ts';
import type { ServiceCIDRRecord } from '../adapters/kubernetes/service-cidrs.ts';
import type { Cluster } from './cluster.ts';
import type { ListedIPAddress, ServiceRecord } from './listing.ts';
import { ClusterError, ObjectForbiddenError, STOP_SIGNALS, type StopSignal } from './errors.ts';
import { type Addr, allocatedAddress, byIP, holds, parseClusterIP, rangesOf, sortByAddress } from './ranges.ts';
import { formatAddr } from '../adapters/address.ts';
import { quoteText } from '../adapters/quote.ts';
import { cutMessage } from '../adapters/kubernetes/bodies.ts';
import { formatDuration } from './duration.ts';
import { onePerName, ownerText } from './status.ts';
import { appendLines, counted, firstOf, formatCount, markedForDeletion, named, shown, sourceText, table } from './text.ts';

export type FindingKind =
  | 'not-a-service'
  | 'orphan'
  | 'wrong-reference'
  | 'invalid-cluster-ip'
  | 'out-of-range'
  | 'missing'
  | 'held-by-other'
  | 'duplicate'
  | 'bad-labels';

/** One problem. `fix` is "delete" when upstream's IPAddress loop deletes the object. */
export interface Finding {
  kind: FindingKind;
  /**
   * The address: the IPAddress's name, or the ClusterIP as its Service writes it (`010.96.0.9`,
   * whose IPAddress a message names in canonical form, `10.96.0.9`).
   */
  ip: string;
  /** The Service concerned, "namespace/name", or null (IPAddress-loop findings without one). */
  service: string | null;
  /** The IPAddress's owner as text ("namespace/name" for a Service), null when none or no object. */
  owner: string | null;
  fix: 'delete' | null;
  message: string;
  /**
   * When the finding's IPAddress object is being deleted (its deletionTimestamp set: a delete was
   * asked for, and finalizers hold it), since when, as the server wrote it, and the finalizers
   * (possibly none: not removed yet); null when it is not, or the finding has no object (`missing`,
   * `out-of-range`, `invalid-cluster-ip`). --fix sends such an object no delete.
   */
  markedForDeletion: { since: string; finalizers: string[] } | null;
}

/** The `--json` shape of `check` (schema "ipallocator/check/v1"; fields are only ever added). */
export interface CheckReport {
  schema: 'ipallocator/check/v1';
  /** The kubeconfig context and its server; both "" for a saved listing (`from`). */
  context: string;
  server: string;
  /** The saved listing read (`--from`: the file as given, "-" for standard input); null for a cluster. */
  from: string | null;
  /** --grace in seconds: a whole number for whole seconds, up to three decimals for a part of one (1500ms: 1.5). */
  graceSeconds: number;
  /** Every problem found, IPAddress-loop findings first, each list by address. */
  findings: Finding[];
  /** Orphaned IPAddresses still inside the grace: not problems yet. */
  pending: { ip: string; owner: string | null; ageSeconds: number | null }[];
  /** What --fix did; null without --fix. */
  fixed: FixResult | null;
  /** True when no finding remains (after --fix, the ones it removed do not count). */
  clean: boolean;
}

export interface FixResult {
  deleted: string[];
  /**
   * Not deleted: the object or its Service changed since the listing, or the delete left the
   * object there (finalizers hold it — the server only marked it for deletion —, or an answer
   * that was no Status deleted nothing; the reason says which, after reading the object again).
   * `resolved`: the problem is gone with it (the object is gone, or no longer a leak); false when
   * the name was re-created meanwhile or the object is still there (to look at again).
   */
  skipped: { ip: string; reason: string; resolved: boolean }[];
  /**
   * Leaks whose re-read or delete failed; `denied`: the server refused the identity that request
   * about this object (403), which RBAC may allow for the others (resourceNames, a Role per
   * namespace), so fixing went on.
   */
  failed: { ip: string; error: string; denied: boolean }[];
  /**
   * Set when fixing stopped at a failure every further request would meet (no answer from the
   * server, credentials or permission refused): its message, and the failure is also in `failed`;
   * or at a signal, after the leaks under way were settled: its STOP_SIGNALS `stoppedBy`
   * ("interrupted (Ctrl-C)", "terminated (SIGTERM)", "hung up (SIGHUP)").
   */
  stoppedBy: string | null;
  /** The leaks not tried because fixing stopped. */
  untried: string[];
  /** True when the operator declined the confirmation. */
  declined: boolean;
}

const RECREATED = 'changed since the listing: re-created';

/** `stoppedBy` when a signal stopped `--fix`: the signal is the abort's reason. */
const stoppedBySignal = (signal: AbortSignal): string => STOP_SIGNALS[signal.reason as StopSignal].stoppedBy;

/** A Service's ClusterIP as findProblems reads it once: `addr` and its IPAddress `name` undefined when it is no address. */
interface ClusterIPRead {
  readonly svc: ServiceRecord;
  /** As the Service writes it. */
  readonly ip: string;
  readonly addr: Addr | undefined;
  readonly name: string | undefined;
}

const isService = (p: ParentRef | null): p is ParentRef => p !== null && (p.group ?? '') === '' && p.resource === 'services';
const serviceKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;
const keyOf = (svc: ServiceRecord) => serviceKey(svc.namespace, svc.name);
/** The fields a Service-loop finding about `svc`'s ClusterIP `ip` starts from; built for a finding only, as its key is. */
const serviceFinding = (svc: ServiceRecord, ip: string) => ({ ip, service: keyOf(svc), fix: null, markedForDeletion: null }) as const;

/**
 * Applies the repair rules to one listing. `now` in ms since the epoch. An IPAddress name listed
 * twice is one object, the later item (onePerName), as upstream's informer keeps it, and so is a
 * Service's namespace and name; a finding about it says who listed it twice: `listedBy`, "the
 * server listed" unless a saved listing was read ("the file lists").
 */
export function findProblems(
  input: { ipAddresses: readonly ListedIPAddress[]; services: readonly ServiceRecord[]; serviceCIDRs: readonly ServiceCIDRRecord[] },
  options: { now: number; graceMs: number; listedBy?: string },
): { findings: Finding[]; pending: CheckReport['pending'] } {
  // namespace → name → Service: a lookup builds no "namespace/name" text (10^5 strings to collect).
  // A Service listed twice is one, the later item, as an IPAddress is: `serviceListedTimes`, how
  // often each "namespace/name" listed more than once was listed.
  const services = new Map<string, Map<string, ServiceRecord>>();
  const serviceListedTimes = new Map<string, number>();
  for (const s of input.services) {
    const inNamespace = services.get(s.namespace);
    if (inNamespace === undefined) services.set(s.namespace, new Map([[s.name, s]]));
    else {
      if (inNamespace.has(s.name)) serviceListedTimes.set(keyOf(s), (serviceListedTimes.get(keyOf(s)) ?? 1) + 1);
      inNamespace.set(s.name, s);
    }
  }
  const serviceOf = (namespace: string | undefined, name: string) => services.get(namespace ?? '')?.get(name);
  const listedServices = serviceListedTimes.size === 0 ? input.services : [...services.values()].flatMap((m) => [...m.values()]);
  const { ipAddresses, listedTimes, find } = onePerName(input.ipAddresses);
  const by = options.listedBy ?? 'the server listed';
  const times = (n: number) => (n === 2 ? 'twice' : `${n} times`);
  const listedNote = (name: string) => {
    const n = listedTimes.get(name);
    return n === undefined ? '' : `; ${by} it ${times(n)}, read as the later item`;
  };
  /** A finding naming a Service listed more than once, saying so. */
  const withServiceNote = (f: Finding): Finding => {
    const n = f.service === null || serviceListedTimes.size === 0 ? undefined : serviceListedTimes.get(f.service);
    return n === undefined ? f : { ...f, message: `${f.message}; ${by} Service ${named(f.service!)} ${times(n)}, read as the later item` };
  };

  // Every ClusterIP read once, as the repair loop reads it, for both loops: `clusterIPs` in listing
  // order for the Service loop, and `holders`, IPAddress name → the Services holding that address.
  // Upstream's Service loop re-points an object of an address a Service holds to its Service in
  // place (recreateIPAddress: delete and create at once); deleting it alone would free an address
  // a Service uses until that loop runs, so --fix leaves those objects to it.
  const clusterIPs: ClusterIPRead[] = [];
  // one Service, or more as an array: nearly every address has one, and an array each is 10^5 objects more to collect
  const holders = new Map<string, ServiceRecord | ServiceRecord[]>();
  for (const svc of listedServices) {
    for (const ip of svc.clusterIPs) {
      if (ip === '' || ip === 'None') continue;
      const addr = parseClusterIP(ip);
      const name = addr === undefined ? undefined : formatAddr(addr.version, addr.words);
      clusterIPs.push({ svc, ip, addr, name });
      if (name === undefined) continue;
      const held = holders.get(name);
      if (held === undefined) holders.set(name, svc);
      else if (Array.isArray(held)) held.push(svc);
      else holders.set(name, [held, svc]);
    }
  }
  const holdsName = (svc: ServiceRecord, name: string) => {
    const held = holders.get(name);
    return held === svc || (Array.isArray(held) && held.includes(svc));
  };

  const pending: CheckReport['pending'] = [];

  // The IPAddress loop.
  const ipFindings: Finding[] = [];
  for (const r of ipAddresses) {
    if (r.labels[LABEL_MANAGED_BY] !== CONTROLLER_NAME) continue;
    const verdict = ipAddressVerdict(r, serviceOf(r.parentRef?.namespace, r.parentRef?.name ?? ''), holdsName, options);
    if (verdict === undefined) continue;
    const owner = ownerText(r);
    if (verdict.kind === 'pending') {
      pending.push({ ip: r.name, owner, ageSeconds: verdict.ageSeconds });
      continue;
    }
    const held = holders.has(r.name);
    const deleting = beingDeleted(r);
    ipFindings.push({
      kind: verdict.kind,
      ip: r.name,
      service: isService(r.parentRef) ? serviceKey(r.parentRef.namespace, r.parentRef.name) : null,
      owner,
      fix: held || deleting !== undefined ? null : 'delete',
      markedForDeletion: deletionOf(r),
      message:
        (held ? `${verdict.message}; a Service holds the address: kube-apiserver's repair loop re-points the object` : verdict.message) +
        (deleting === undefined ? '' : `; ${deleting}`) +
        listedNote(r.name),
    });
  }

  // The Service loop. A range this package does not allocate from still holds its addresses, as
  // upstream reads it; `status` lists them apart (unserved), through the same rangesOf and holds.
  const ranges = input.serviceCIDRs.flatMap(rangesOf);
  const svcFindings: Finding[] = [];
  // IPAddress name → the first Service found holding it without an IPAddress: the repair loop
  // creates the object for one of them and then finds the address allocated twice for the others
  const missingFor = new Map<string, ServiceRecord>();
  for (const { svc, ip, addr, name } of clusterIPs) {
    if (addr === undefined || name === undefined) {
      svcFindings.push({
        ...serviceFinding(svc, ip),
        kind: 'invalid-cluster-ip',
        owner: null,
        message: `Service ${named(keyOf(svc))} has ClusterIP ${quoteText(cutMessage(ip))}, which is not an IP address; recreate the Service`,
      });
      continue;
    }
    if (!ranges.some((r) => holds(r, addr))) {
      svcFindings.push({
        ...serviceFinding(svc, ip),
        kind: 'out-of-range',
        owner: null,
        message: `ClusterIP ${named(ip)} of Service ${named(keyOf(svc))} is not within any ServiceCIDR; recreate the Service`,
      });
      continue;
    }
    const obj = find(name);
    const first = obj === undefined ? missingFor.get(name) : undefined;
    if (first !== undefined && (first.namespace !== svc.namespace || first.name !== svc.name)) {
      svcFindings.push({
        ...serviceFinding(svc, ip),
        kind: 'duplicate',
        owner: null,
        message: `ClusterIP ${named(ip)} is held by Service ${named(keyOf(svc))} and by Service ${named(keyOf(first))}, and has no ${missingObject(ip, name)}; kube-apiserver's repair loop creates it for one of them: recreate the other`,
      });
      continue;
    }
    if (obj === undefined) {
      missingFor.set(name, svc);
      svcFindings.push({
        ...serviceFinding(svc, ip),
        kind: 'missing',
        owner: null,
        message: `ClusterIP ${named(ip)} of Service ${named(keyOf(svc))} has no ${missingObject(ip, name)}; kube-apiserver's repair loop creates it`,
      });
      continue;
    }
    const ref = obj.parentRef;
    if (!isService(ref)) {
      svcFindings.push({
        ...serviceFinding(svc, ip),
        kind: 'held-by-other',
        owner: ownerText(obj),
        markedForDeletion: deletionOf(obj),
        message: `IPAddress ${name} for Service ${named(keyOf(svc))} references ${referenced(obj)}, not a Service; kube-apiserver's repair loop re-creates it${deletionNote(obj)}${listedNote(name)}`,
      });
      continue;
    }
    if ((ref.namespace ?? '') !== svc.namespace || ref.name !== svc.name) {
      const owner = ownerText(obj);
      const other = serviceOf(ref.namespace, ref.name);
      if (other !== undefined && holdsName(other, name)) {
        svcFindings.push({
          ...serviceFinding(svc, ip),
          kind: 'duplicate',
          owner,
          markedForDeletion: deletionOf(obj),
          message: `ClusterIP ${named(ip)} is held by Service ${named(keyOf(svc))} and by Service ${named(owner!)}; recreate one of them${deletionNote(obj)}${listedNote(name)}`,
        });
      } else {
        const why = other === undefined ? 'which does not exist' : 'which does not hold it';
        svcFindings.push({
          ...serviceFinding(svc, ip),
          kind: 'held-by-other',
          owner,
          markedForDeletion: deletionOf(obj),
          message: `IPAddress ${name} for Service ${named(keyOf(svc))} references Service ${named(owner!)}, ${why}${deletionNote(obj)}${listedNote(name)}`,
        });
      }
      continue;
    }
    const family = addr.version === 4 ? 'IPv4' : 'IPv6';
    if (obj.labels[LABEL_IP_FAMILY] === family && obj.labels[LABEL_MANAGED_BY] === CONTROLLER_NAME) continue;
    const lacking = [
      [LABEL_IP_FAMILY, family],
      [LABEL_MANAGED_BY, CONTROLLER_NAME],
    ]
      .filter(([label, value]) => obj.labels[label!] !== value)
      .map(([label, value]) => `${label}=${value}`);
    svcFindings.push({
      ...serviceFinding(svc, ip),
      kind: 'bad-labels',
      owner: ownerText(obj),
      markedForDeletion: deletionOf(obj),
      message: `IPAddress ${name} of Service ${named(keyOf(svc))} lacks the label${lacking.length === 1 ? '' : 's'} ${lacking.join(', ')}; kube-apiserver's repair loop re-creates it${deletionNote(obj)}${listedNote(name)}`,
    });
  }
  // not push(...): each finding would be an argument, and 10^5 of them overflow the stack
  const findings = [...sortByAddress(ipFindings, byIP), ...sortByAddress(svcFindings, byIP)].map((f) => inOrder(withServiceNote(f)));
  sortByAddress(pending, byIP);
  return { findings, pending };
}

/**
 * The IPAddress a ClusterIP `ip` lacks, for a message: named when the ClusterIP is written other
 * than in canonical form (`010.96.0.9`), as the repair loop creates it under the canonical `name`
 * (`10.96.0.9`), not as the ClusterIP is written.
 */
function missingObject(ip: string, name: string): string {
  return ip === name ? 'IPAddress object' : `IPAddress ${name} (its address in canonical form, as IPAddresses are named)`;
}

/**
 * A finding with its fields in the one order `--json` writes them, whichever loop made it (the
 * Service loop builds its findings on a shared base, which would put `ip` first).
 */
function inOrder({ kind, ip, service, owner, fix, message, markedForDeletion }: Finding): Finding {
  return { kind, ip, service, owner, fix, message, markedForDeletion };
}

/**
 * Said of an IPAddress whose deletion has started, undefined for any other. A delete was asked
 * for already: the API server keeps the object until its finalizers are gone, and another delete
 * changes nothing, so none is sent (kubectl leaves such an object alone too); what removes it
 * is the controller of each finalizer.
 */
function beingDeleted(r: ListedIPAddress): string | undefined {
  if (r.deletionTimestamp === undefined) return undefined;
  return `${markedForDeletion(r.finalizers ?? [])} since ${named(r.deletionTimestamp)}: no delete is sent`;
}

/** An IPAddress's deletion, as a finding carries it (Finding.markedForDeletion); null when none has started. */
function deletionOf(r: ListedIPAddress): Finding['markedForDeletion'] {
  return r.deletionTimestamp === undefined ? null : { since: r.deletionTimestamp, finalizers: [...(r.finalizers ?? [])] };
}

/** A Service-loop finding's note on its IPAddress being deleted (no delete is proposed for those anyway); '' when it is not. */
function deletionNote(r: ListedIPAddress): string {
  return r.deletionTimestamp === undefined ? '' : `; ${markedForDeletion(r.finalizers ?? [])} since ${named(r.deletionTimestamp)}`;
}

/**
 * What an IPAddress's parentRef references, for a message: its owner (ownerText), "nothing"
 * without a parentRef, and what it lacks when it names no resource or no name (`parentRef: {}`
 * read as the owner " ").
 */
function referenced(r: IPAddressRecord): string {
  const p = r.parentRef;
  if (p === null) return 'nothing';
  const lacks = [p.resource ? undefined : 'resource', p.name ? undefined : 'name'].filter((w) => w !== undefined);
  if (lacks.length === 0) return named(ownerText(r)!);
  const has = p.resource
    ? ` (resource ${named(p.resource)})`
    : p.name
      ? ` (name ${named(p.namespace ? `${p.namespace}/${p.name}` : p.name)})`
      : '';
  return `no object: its parentRef names no ${lacks.join(' and no ')}${has}`;
}

type Verdict =
  | { kind: 'not-a-service' | 'orphan' | 'wrong-reference'; message: string }
  | { kind: 'pending'; ageSeconds: number | null }
  | undefined;

/**
 * syncIPAddress for one managed IPAddress given its parent Service (undefined = not found);
 * `holdsName(svc, name)`: whether the Service holds the address of the IPAddress named `name`.
 * The texts of a message are made only for a finding: most objects have none.
 */
function ipAddressVerdict(
  r: IPAddressRecord,
  parent: ServiceRecord | undefined,
  holdsName: (svc: ServiceRecord, name: string) => boolean,
  options: { now: number; graceMs: number },
): Verdict {
  if (!isService(r.parentRef)) {
    return { kind: 'not-a-service', message: `IPAddress ${named(r.name)} references ${referenced(r)}, not a Service` };
  }
  if (parent === undefined) {
    const created = r.creationTimestamp === undefined ? NaN : Date.parse(r.creationTimestamp);
    const ageMs = Number.isNaN(created) ? undefined : options.now - created;
    // Upstream deletes when the lifetime exceeds the grace; an unknown age is never old enough.
    if (ageMs !== undefined && ageMs > options.graceMs) {
      return {
        kind: 'orphan',
        message: `IPAddress ${named(r.name)} belongs to Service ${named(ownerText(r) ?? 'nothing')}, which does not exist (created ${formatAge(ageMs)} ago)`,
      };
    }
    return { kind: 'pending', ageSeconds: ageMs === undefined ? null : Math.floor(ageMs / 1000) };
  }
  if (!holdsName(parent, r.name)) {
    // a name no ClusterIP's IPAddress has (status lists it apart, allocatedAddress): said as such
    if (allocatedAddress(r.name) === undefined) return { kind: 'wrong-reference', message: noAllocation(r, parent) };
    return {
      kind: 'wrong-reference',
      message: `IPAddress ${named(r.name)} belongs to Service ${named(ownerText(r) ?? 'nothing')}, which does not hold it (its ClusterIPs: ${clusterIPList(parent)})`,
    };
  }
  return undefined;
}

const clusterIPList = (svc: ServiceRecord): string => svc.clusterIPs.map(named).join(', ') || 'none';

/**
 * The wrong-reference message of an IPAddress whose name is no address in canonical form: it
 * allocates nothing, whatever its Service writes. When one of the Service's ClusterIPs reads as
 * the address the name spells (`010.96.0.9` read as the repair loop reads a ClusterIP), the
 * IPAddress of that ClusterIP is named in canonical form, and it is said which; otherwise the
 * ClusterIPs are listed. Upstream's IPAddress loop compares the name with the ClusterIPs as
 * written, so it keeps such an object while its Service writes a ClusterIP so: said too.
 */
function noAllocation(r: IPAddressRecord, parent: ServiceRecord): string {
  const start = `IPAddress ${named(r.name)} belongs to Service ${named(ownerText(r) ?? 'nothing')} but allocates nothing: its name is no address in canonical form, which kube-apiserver requires of an IPAddress`;
  const kept = parent.clusterIPs.includes(r.name)
    ? " (kube-apiserver's repair loop compares the name with the ClusterIPs as written, and keeps this object)"
    : '';
  const spelt = parseClusterIP(r.name);
  const name = spelt === undefined ? undefined : formatAddr(spelt.version, spelt.words);
  const clusterIP = name === undefined ? undefined : parent.clusterIPs.find((ip) => heldName(ip) === name);
  if (clusterIP === undefined) return `${start} (that Service's ClusterIPs: ${clusterIPList(parent)})${kept}`;
  return `${start}; the IPAddress of that Service's ClusterIP ${named(clusterIP)} is named ${name}${kept}`;
}

/** A pending IPAddress's age; a creationTimestamp ahead of this machine's clock is said as such. */
function ageText(seconds: number | null): string {
  if (seconds === null) return 'age unknown';
  return seconds < 0 ? `created ${-seconds}s ahead of this machine's clock` : `${seconds}s old`;
}

function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/**
 * How many leaks `fix` works on at once, once the first has been settled alone: each leak is
 * three requests one after another (the object and its Service read again, then the delete), so
 * against a remote API server a leak is three round trips, and thousands of leaks one at a time
 * take minutes. Eight keeps a handful of connections open (one per leak under way) and stays far
 * below the API server's own limits on requests in flight (400 mutating, 800 others, by default).
 */
export const FIX_CONCURRENCY = 8;

/**
 * How many leaks in a row (in the order of the findings) `fix` lets the API server refuse the same
 * request about an IPAddress (403 on its get or delete) before it stops: kube-apiserver's refusal
 * reads the same whether RBAC grants the verb for no IPAddress or only for some (`resourceNames`),
 * so one refusal is no reason to stop, but ten in a row is the identity lacking the permission
 * for them all, and the thousands of leaks after them would each be refused in turn. The ten are
 * counted as each leak settles, among the leaks settled so far: a leak still under way before
 * them (a slow answer) neither breaks the row nor holds the stop back. Refusals about Services do
 * not count: RBAC grants those per namespace, and a leak of another namespace may be allowed.
 */
export const REFUSED_IN_A_ROW = 10;

/** How `stoppedBy` begins when fixing stopped at REFUSED_IN_A_ROW refusals (notFixedSummary reads it). */
const STOPPED_AT_REFUSALS = 'the API server refused ';

/** What became of one leak in `fix`: as FixResult records it; `stops` for a failure every further request would meet. */
type Settled =
  | { deleted: string }
  | { skipped: FixResult['skipped'][number] }
  | { failed: FixResult['failed'][number]; stops: boolean; refused: ObjectForbiddenError['refused'] };

/**
 * Deletes the IPAddresses of the findings marked "delete", each after reading it and its parent
 * Service again and finding the rule still holds. `listed` is the listing the findings came from:
 * only the object listed (and confirmed) is deleted, never one created under its name since.
 * A failure of one object (an API error about it, a 403 on a request naming it) is recorded and
 * the others proceed; a failure every further request would meet too (a ClusterError: no answer,
 * 401) is recorded and no further leak is started, the rest untried — a stalled server would
 * otherwise cost a full request timeout per leak —, and so is the same request about an
 * IPAddress refused (403) for REFUSED_IN_A_ROW leaks in a row. Never throws on the cluster's
 * account: it throws only what a callback threw, which stops it as a signal does (no further
 * leak is started), once the leaks under way have settled.
 *
 * The first leak is settled alone — a server that does not answer, or refuses the identity, is
 * met by one leak's requests —, then up to FIX_CONCURRENCY at once, each leak's own read, Service
 * read and delete one after another. The result lists every leak in the order of `findings`,
 * whatever order they settled in: the same result as one leak at a time, except that a stop (a
 * ClusterError, a signal) lets the leaks under way settle, and those after the first to fail are
 * then tried as well. `onDeleted` hears of each delete as soon as it is confirmed, in the order
 * the answers came.
 */
export async function fix(
  cluster: Cluster,
  findings: readonly Finding[],
  options: {
    now: () => number;
    graceMs: number;
    listed: readonly ListedIPAddress[];
    /**
     * Aborted by a signal, the abort's reason its name (a StopSignal): no further leak is
     * started, those under way are settled, and the result says so.
     */
    signal?: AbortSignal;
    /** Called before the first leak and as each leak settles, with how many have settled. */
    onProgress?: (settled: number, total: number) => void;
    /** Called with each IPAddress deleted, as soon as its delete is confirmed (in the order the answers came). */
    onDeleted?: (name: string) => void;
    /** Called with how many leaks are under way, whenever that changes. */
    onUnderWay?: (count: number) => void;
  },
): Promise<FixResult> {
  const result: FixResult = { deleted: [], skipped: [], failed: [], stoppedBy: null, untried: [], declined: false };
  const names = [...new Set(findings.filter((f) => f.fix === 'delete').map((f) => f.ip))];
  // the later item of a name listed twice, as findProblems reads it
  const listed = onePerName(options.listed);
  // what became of each leak started, by its index in `names`
  const settled: (Settled | undefined)[] = [];
  let started = 0;
  let done = 0;
  let underWay = 0;
  let stopping = false;
  // what stopped it, the first to: a failure's message, or the refused request (its message
  // says how many were not tried, known once the leaks under way have settled)
  let stop: { error: string } | { refused: NonNullable<ObjectForbiddenError['refused']> } | undefined;
  // the first exception a callback threw: thrown once the leaks under way have settled
  let thrown: { error: unknown } | undefined;
  const tell = (call: () => void): void => {
    try {
      call();
    } catch (e) {
      thrown ??= { error: e };
      stopping = true;
    }
  };
  // whether leak `i`, just settled refused, completes REFUSED_IN_A_ROW settled leaks in a row
  // (in the order of `names`) refused the same request
  const refusedRow = (i: number, request: string): boolean => {
    const same = (j: number): boolean => {
      const s = settled[j];
      return s !== undefined && 'refused' in s && s.refused?.request === request;
    };
    let first = i;
    let last = i;
    while (first > 0 && same(first - 1)) first--;
    while (last + 1 < started && same(last + 1)) last++;
    return last - first + 1 >= REFUSED_IN_A_ROW;
  };
  const settle = (i: number, s: Settled): void => {
    settled[i] = s;
    if ('deleted' in s) tell(() => options.onDeleted?.(s.deleted));
    if ('stops' in s && s.stops) {
      stopping = true;
      stop ??= { error: s.failed.error };
    }
    if ('refused' in s && s.refused !== undefined && refusedRow(i, s.refused.request)) {
      stopping = true;
      stop ??= { refused: s.refused };
    }
  };
  // starts the next leak and settles it; false when there is none to start, or fixing stops
  const next = async (): Promise<boolean> => {
    // between two leaks, never inside one: the leaks under way are settled and reported, so the
    // report names every object deleted before the interrupt
    if (stopping || started === names.length || options.signal?.aborted === true) return false;
    const i = started++;
    if (i === 0) tell(() => options.onProgress?.(0, names.length));
    tell(() => options.onUnderWay?.(++underWay));
    const outcome = await fixOne(cluster, names[i]!, listed.find(names[i]!)?.uid, options);
    tell(() => options.onUnderWay?.(--underWay));
    settle(i, outcome);
    tell(() => options.onProgress?.(++done, names.length));
    return true;
  };
  if (await next()) {
    await Promise.all(
      Array.from({ length: FIX_CONCURRENCY }, async () => {
        while (await next());
      }),
    );
  }
  for (const s of settled) {
    if (s === undefined) continue; // unreachable: every leak started has settled
    if ('deleted' in s) result.deleted.push(s.deleted);
    else if ('skipped' in s) result.skipped.push(s.skipped);
    else result.failed.push(s.failed);
  }
  result.untried = names.slice(started);
  if (thrown !== undefined) throw thrown.error;
  if (stop !== undefined) {
    const left = result.untried.length;
    result.stoppedBy =
      'error' in stop
        ? stop.error
        : `${STOPPED_AT_REFUSALS}${stop.refused.request} for ${REFUSED_IN_A_ROW} IPAddresses in a row (403 Forbidden): ${stop.refused.rule} ` +
          '(its refusal does not say whether it is for every IPAddress or for these only)' +
          (left === 0 ? '' : `, so ${counted(left, 'other was', 'others were')} not tried`);
  }
  // a signal during the last leak left nothing to stop, but the run was stopped all the
  // same: it says so, and ends as any interrupted run (a failure that stopped it is said instead)
  if (result.stoppedBy === null && options.signal?.aborted === true) result.stoppedBy = stoppedBySignal(options.signal);
  return result;
}

/**
 * One leak of `fix`: the IPAddress `name` and its parent Service read again, and the object
 * deleted when the rule still holds and it is the object listed (uid `examined`). Never throws.
 */
async function fixOne(
  cluster: Cluster,
  name: string,
  examined: string | undefined,
  options: { now: () => number; graceMs: number },
): Promise<Settled> {
  try {
    const current = await cluster.readIPAddress(name);
    if (current === undefined) return { skipped: { ip: name, reason: 'already gone', resolved: true } };
    const ref = current.parentRef;
    const parent = isService(ref) ? await cluster.readService(ref.namespace ?? '', ref.name) : undefined;
    const verdict =
      current.labels[LABEL_MANAGED_BY] === CONTROLLER_NAME
        ? ipAddressVerdict(current, parent, (svc, n) => heldNames(svc).includes(n), { now: options.now(), graceMs: options.graceMs })
        : undefined;
    if (verdict === undefined || verdict.kind === 'pending') {
      return { skipped: { ip: name, reason: 'changed since the listing: no longer a leak', resolved: true } };
    }
    // the leak listed is gone and its name holds a new object, whose own age and owner the next
    // run judges: deleting it now would remove what the operator was never shown
    if (current.uid !== examined) {
      // a listing without the uid (a broken server or proxy) cannot tell the object shown from one
      // made since: the uid read now would be no precondition of what the operator confirmed
      const reason = examined === undefined ? 'listed without a uid: it cannot be told from an object re-created since' : RECREATED;
      return { skipped: { ip: name, reason, resolved: false } };
    }
    const deleting = beingDeleted(current);
    if (deleting !== undefined) return { skipped: { ip: name, reason: deleting, resolved: false } };
    const outcome = await cluster.deleteIPAddress(name, examined);
    if (outcome === 'deleted') return { deleted: name };
    if (outcome === 'gone') return { skipped: { ip: name, reason: 'already gone', resolved: true } };
    if (outcome === 'changed') return { skipped: { ip: name, reason: RECREATED, resolved: false } };
    return { skipped: { ip: name, reason: outcome.kept, resolved: false } };
  } catch (e) {
    const denied = e instanceof ObjectForbiddenError;
    return {
      failed: { ip: name, error: (e as Error).message, denied },
      stops: e instanceof ClusterError,
      refused: denied ? e.refused : undefined,
    };
  }
}

/**
 * The terminal form; `top`: how many pending addresses to name; `piped`: standard input is no
 * terminal, so a declined question was answered by whatever was piped in (a script, which needs --yes).
 */
export function render(report: CheckReport, options: { top: number; piped?: boolean }): string {
  const out: string[] = [];
  const deletable = report.findings.filter((f) => f.fix === 'delete').length;
  if (report.findings.length === 0) {
    out.push(`No problems found (${sourceText(report)}).`);
  } else {
    appendLines(
      out,
      table(
        [['KIND', 'ADDRESS', 'FIX', 'DETAIL'], ...report.findings.map((f) => [f.kind, named(f.ip), f.fix ?? '-', f.message])],
        [false, false, false, false],
        [false, true, false, false],
      ),
    );
    out.push('');
    // --fix needs the cluster itself: a saved listing (--from) deletes nothing
    const hint =
      report.fixed !== null || deletable === 0 ? '' : report.from === null ? ' (run with --fix)' : ' (run check --fix on the cluster)';
    out.push(`${counted(report.findings.length, 'problem')} found; ${counted(deletable, 'IPAddress', 'IPAddresses')} to delete${hint}.`);
  }
  if (report.pending.length > 0) {
    out.push(
      `${counted(report.pending.length, 'IPAddress', 'IPAddresses')} without ${report.pending.length === 1 ? 'its' : 'their'} Service younger than the ${formatDuration(Math.round(report.graceSeconds * 1000))} grace (not counted):`,
    );
    const { shown, more } = firstOf(report.pending, options.top);
    appendLines(
      out,
      table(
        shown.map((p) => [`  ${named(p.ip)}`, p.owner === null ? '(no parentRef)' : named(p.owner), ageText(p.ageSeconds)]),
        [false, false, false],
        [true, true, false],
      ),
    );
    if (more !== undefined) out.push(more);
  }
  const f = report.fixed;
  if (f !== null) {
    if (f.declined)
      out.push(`Nothing deleted: not confirmed${options.piped === true ? ' (pass --yes when standard input is not a terminal)' : ''}.`);
    else {
      // the first --top named, as for the other lists: a cluster-wide fix can delete thousands
      const shown = f.deleted.slice(0, options.top).map(named);
      const left = f.deleted.length - shown.length;
      if (left > 0) shown.push(`and ${formatCount(left)} more (--json lists all)`);
      out.push(`Deleted ${counted(f.deleted.length, 'IPAddress', 'IPAddresses')}${shown.length > 0 ? `: ${shown.join(', ')}` : ''}.`);
      // skipped and failed ones too: a listing gone stale, or a permission missing for every
      // object, gives one line per leak
      const skipped = firstOf(f.skipped, options.top);
      for (const s of skipped.shown) out.push(`Skipped ${named(s.ip)}: ${s.reason}.`);
      if (skipped.more !== undefined) out.push(skipped.more);
      const failed = firstOf(f.failed, options.top);
      for (const e of failed.shown) out.push(`Failed ${named(e.ip)}: ${e.error}`);
      if (failed.more !== undefined) out.push(failed.more);
      if (f.stoppedBy !== null && f.untried.length > 0) {
        out.push(`Stopped there: ${counted(f.untried.length, 'IPAddress', 'IPAddresses')} not tried.`);
      }
      const summary = notFixedSummary(f);
      if (summary !== undefined) out.push(summary);
    }
  }
  return out.map(shown).join('\n') + '\n';
}

/**
 * How many leaks --fix left, by why: "Not fixed: 3 of 5 IPAddresses (1 refused (403), 1 failed,
 * 1 still there after the delete); run check --fix again to retry the 1 failed."; undefined when
 * it left none (or was declined). Only the failed and the untried are worth a second run: a
 * refusal needs a permission, and what is still there a finalizer's controller or a look; after
 * a stop at refusals in a row, the untried need that permission first, and it says so.
 */
export function notFixedSummary(f: FixResult): string | undefined {
  const refused = f.failed.filter((e) => e.denied).length;
  const failed = f.failed.length - refused;
  const stillThere = f.skipped.filter((s) => !s.resolved).length;
  const notFixed = refused + failed + stillThere + f.untried.length;
  if (f.declined || notFixed === 0) return undefined;
  const tried = f.deleted.length + f.skipped.length + f.failed.length + f.untried.length;
  const parts: string[] = [];
  if (refused > 0) parts.push(`${formatCount(refused)} refused (403 Forbidden)`);
  if (failed > 0) parts.push(`${formatCount(failed)} failed`);
  if (stillThere > 0) parts.push(`${formatCount(stillThere)} still there or re-created`);
  if (f.untried.length > 0) parts.push(`${formatCount(f.untried.length)} not tried`);
  const retried = failed + f.untried.length;
  const which = failed === 0 ? 'not tried' : f.untried.length === 0 ? 'failed' : 'failed or not tried';
  // after a stop at refusals in a row the leaks not tried would be refused too until the
  // permission the stop names is granted
  const first = f.stoppedBy?.startsWith(STOPPED_AT_REFUSALS) === true ? 'once the permission refused is granted, ' : '';
  const retry =
    retried === 0
      ? ''
      : `; ${first}run check --fix again to retry ${retried === notFixed ? 'them' : `the ${formatCount(retried)} ${which}`}`;
  return `Not fixed: ${formatCount(notFixed)} of ${counted(tried, 'IPAddress', 'IPAddresses')} (${parts.join(', ')})${retry}.`;
}

/**
 * The IPAddress names of the addresses a Service holds: its ClusterIPs read as the repair loop
 * reads them (parseClusterIP) and written canonically, as IPAddress objects are named.
 */
function heldNames(svc: ServiceRecord): string[] {
  const names: string[] = [];
  for (const ip of svc.clusterIPs) {
    const name = heldName(ip);
    if (name !== undefined) names.push(name);
  }
  return names;
}

/** The IPAddress name of the address a ClusterIP holds (heldNames), undefined when it is no address. */
function heldName(clusterIP: string): string | undefined {
  const a = parseClusterIP(clusterIP);
  return a === undefined ? undefined : formatAddr(a.version, a.words);
}
