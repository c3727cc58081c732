// Listed objects as the records `status` and `check` read: ServiceCIDRs, IPAddresses and Services.
// An item is checked (answers.ts itemProblem, and a Service's namespace: namespaceProblem) and
// converted (toListedServiceCIDR, toListed, toService) here, whatever listing gave it.
//
// This file loads no @kubernetes/client-node.
import { type IPAddressObject, toRecord } from '../adapters/kubernetes/objects.ts';
import {
  SERVICE_CIDR_READY,
  type ServiceCIDRObject,
  type ServiceCIDRRecord,
  toServiceCIDR,
} from '../adapters/kubernetes/service-cidr-objects.ts';
import type { IPAddressRecord } from '../adapters/store.ts';

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
  return { ...toServiceCIDR(o as ServiceCIDRObject), ...readyCondition(o) };
}

/** The Ready condition's reason and message, each when it is non-empty text (anything else says nothing). */
function readyCondition(obj: unknown): { readyReason?: string; readyMessage?: string } {
  const conditions = (obj as ServiceCIDRObject).status?.conditions;
  if (!Array.isArray(conditions)) return {};
  const ready = conditions.find((c: unknown) => (c as { type?: unknown } | null)?.type === SERVICE_CIDR_READY) as
    | { reason?: unknown; message?: unknown }
    | undefined;
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
