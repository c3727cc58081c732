// Listed objects as the records `status` and `check` read: ServiceCIDRs, IPAddresses and Services,
// whether a cluster's listing (cluster.ts, page by page) or a saved one (`--from FILE`: what
// `kubectl get servicecidrs,ipaddresses,services -A -o json` writes) gave them. One home for both:
// an item is checked (answers.ts itemProblem, and a Service's namespace: namespaceProblem) and
// converted (toListedServiceCIDR, toListed, toService) the same way wherever it comes from.
//
// This file loads no @kubernetes/client-node, so a saved listing is read without it.
import { itemProblem, listShape } from '../adapters/kubernetes/answers.ts';
import { GROUP, type IPAddressObject, toRecord } from '../adapters/kubernetes/objects.ts';
import {
  findReadyCondition,
  type ServiceCIDRObject,
  type ServiceCIDRRecord,
  toServiceCIDR,
} from '../adapters/kubernetes/service-cidr-objects.ts';
import { describeBody } from '../adapters/kubernetes/bodies.ts';
import type { IPAddressRecord } from '../adapters/store.ts';
import { CliError } from './errors.ts';
import { counted } from './text.ts';

/** A Service as the checks read it. */
export interface ServiceRecord {
  readonly namespace: string;
  readonly name: string;
  /** spec.clusterIPs (or spec.clusterIP when clusterIPs is empty); "None" for headless. */
  readonly clusterIPs: readonly string[];
}

/**
 * An IPAddress as the checks read it: the record, and — when its deletion has started — when,
 * and the finalizers that hold it (the API server keeps an object marked so until they are gone).
 */
export interface ListedIPAddress extends IPAddressRecord {
  /** metadata.deletionTimestamp; absent while no delete has been asked for. */
  readonly deletionTimestamp?: string | undefined;
  readonly finalizers?: readonly string[] | undefined;
}

/**
 * A listed ServiceCIDR with its Ready condition's reason and message, the controller's word on
 * why it is not ready and what to do (`Terminating`: IPAddresses still reference it). The
 * record the library reads keeps only whether it is ready.
 */
export interface ListedServiceCIDR extends ServiceCIDRRecord {
  readonly readyReason?: string | undefined;
  readonly readyMessage?: string | undefined;
}

/** An IPAddress object as a ListedIPAddress: toRecord, and its deletion when started. */
export function toListed(o: unknown): ListedIPAddress {
  const record = toRecord(o as IPAddressObject);
  const meta = (o as { metadata?: { deletionTimestamp?: unknown; finalizers?: unknown } } | null)?.metadata;
  const since = meta?.deletionTimestamp;
  if (typeof since !== 'string' || since === '') return record;
  const finalizers = Array.isArray(meta!.finalizers) ? meta!.finalizers.map(String) : [];
  return Object.freeze({ ...record, deletionTimestamp: since, finalizers: Object.freeze(finalizers) });
}

/** A ServiceCIDR object as the MetaAllocator reads it (toServiceCIDR), with what its Ready condition says. */
export function toListedServiceCIDR(o: unknown): ListedServiceCIDR {
  return { ...toServiceCIDR(o as ServiceCIDRObject), ...readyWords(o) };
}

/** What the Ready condition says beyond its status: its reason and message, each when it is non-empty text (anything else says nothing). */
function readyWords(obj: unknown): { readyReason?: string; readyMessage?: string } {
  const ready = findReadyCondition(obj as ServiceCIDRObject) as { reason?: unknown; message?: unknown } | undefined;
  const out: { readyReason?: string; readyMessage?: string } = {};
  if (typeof ready?.reason === 'string' && ready.reason !== '') out.readyReason = ready.reason;
  if (typeof ready?.message === 'string' && ready.message !== '') out.readyMessage = ready.message;
  return out;
}

export function toService(o: unknown): ServiceRecord {
  const obj = o as { metadata?: { namespace?: string; name?: string }; spec?: { clusterIP?: string; clusterIPs?: string[] } };
  const ips =
    Array.isArray(obj.spec?.clusterIPs) && obj.spec!.clusterIPs!.length > 0
      ? obj.spec!.clusterIPs!
      : obj.spec?.clusterIP
        ? [obj.spec.clusterIP]
        : [];
  return Object.freeze({
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
    clusterIPs: Object.freeze(ips.map(String)),
  });
}

/**
 * Why a named object of a namespaced kind (a Service) cannot be read: it names no namespace
 * (absent or empty; one of another type is refused by fieldProblem). Read as the namespace "", a
 * Service would be no Service its IPAddresses name, and every one of them an orphan.
 */
export function namespaceProblem(item: unknown): string | undefined {
  const ns = (item as { metadata: { namespace?: unknown } }).metadata.namespace;
  return typeof ns !== 'string' || ns === '' ? 'an object without a namespace' : undefined;
}

/** The objects of a saved listing, as records; `services` undefined when it holds none. */
export interface SavedListing {
  readonly serviceCIDRs: ListedServiceCIDR[];
  readonly ipAddresses: ListedIPAddress[];
  readonly services: ServiceRecord[] | undefined;
}

/** What `--from` reads, as its messages say it. */
export const SAVED_LISTING_COMMAND = 'kubectl get servicecidrs,ipaddresses,services -A -o json';

/** The kinds a saved listing holds: each one's apiVersions, as a cluster's listing asks for them, and its conversion. */
const SAVED_KINDS: Record<string, { apiVersions: readonly string[]; namespaced?: true; convert: (o: unknown) => unknown }> = {
  ServiceCIDR: { apiVersions: [`${GROUP}/v1`, `${GROUP}/v1beta1`], convert: toListedServiceCIDR },
  IPAddress: { apiVersions: [`${GROUP}/v1`, `${GROUP}/v1beta1`], convert: toListed },
  Service: { apiVersions: ['v1'], namespaced: true, convert: toService },
};

/**
 * A saved listing's text as records: kubectl's generic List (JSON) whose items are ServiceCIDRs,
 * IPAddresses and Services, each checked as an item of a cluster's listing is (itemProblem,
 * namespaceProblem) and converted by the same functions. An item of networking.k8s.io/v1beta1 is
 * read as the v1beta1 listing of a cluster is; a ServiceCIDR listed twice is one, the later item
 * (IPAddresses and Services listed twice are left to status and check, which say so). Anything else — text that is no JSON, JSON that is
 * no List, an item of another kind or apiVersion, a malformed item (named by its index) — throws
 * a CliError naming the file as `said`.
 */
export function readSavedListing(text: string, said: string): SavedListing {
  const not = (why: string) => new CliError(`${said} is not a saved listing (${SAVED_LISTING_COMMAND}): ${why}`);
  let body: unknown;
  try {
    // a byte order mark, as some editors on Windows save UTF-8, is no part of the JSON
    body = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch {
    const empty = text.trim() === '';
    // its size as the file's: bytes, counted without taking the text apart (YAML of a large cluster is 10^8 of them)
    throw not(
      empty ? 'it is empty' : `it is not JSON (${counted(Buffer.byteLength(text, 'utf8'), 'byte')} of text; YAML is not read: use -o json)`,
    );
  }
  // kubectl writes metav1's List, of apiVersion "v1"
  const list = listShape(body, 'List', 'v1');
  if (typeof list === 'string') throw not(list);
  const listing = { serviceCIDRs: [] as ListedServiceCIDR[], ipAddresses: [] as ListedIPAddress[], services: [] as ServiceRecord[] };
  const into: Record<string, unknown[]> = {
    ServiceCIDR: listing.serviceCIDRs,
    IPAddress: listing.ipAddresses,
    Service: listing.services,
  };
  const cidrAt = new Map<string, number>();
  for (let i = 0; i < list.items.length; i++) {
    const item: unknown = list.items[i];
    const kind = (item as { kind?: unknown } | null)?.kind;
    const known = typeof kind === 'string' && Object.hasOwn(SAVED_KINDS, kind) ? SAVED_KINDS[kind]! : undefined;
    if (known === undefined) throw not(`its item ${i} is ${describeBody(item)}: only ServiceCIDRs, IPAddresses and Services are read`);
    let problem = itemProblem(item, kind as string, { apiVersion: known.apiVersions });
    if (problem === undefined && known.namespaced) problem = namespaceProblem(item);
    if (problem !== undefined) throw not(`its item ${i} is ${problem}`);
    const record = known.convert(item);
    if (kind !== 'ServiceCIDR') into[kind as string]!.push(record);
    else {
      // one ServiceCIDR per name, the later item (listed as v1 and as v1beta1, or two listings
      // pasted into one), where the first was: status would count its range twice
      const name = (record as ListedServiceCIDR).name;
      const at = cidrAt.get(name);
      if (at === undefined) cidrAt.set(name, listing.serviceCIDRs.push(record as ListedServiceCIDR) - 1);
      else listing.serviceCIDRs[at] = record as ListedServiceCIDR;
    }
  }
  return { ...listing, services: listing.services.length === 0 ? undefined : listing.services };
}
