// A ServiceCIDR object as a record: what KubernetesServiceCIDRs delivers and the command line
// reads, from a listing or from a saved one. It loads no @kubernetes/client-node: the command
// reads a saved listing without it.
//
// Object → ServiceCIDR (what a MetaAllocator reads):
//   name              metadata.name
//   cidrs             spec.cidrs, as written (the MetaAllocator canonicalises and validates)
//   ready             the `Ready` condition: status "True" → true; any other status ("False",
//                     "Unknown") → false; no Ready condition → undefined, which upstream counts
//                     as ready ("kcm not running")
//   deletionTimestamp metadata.deletionTimestamp (deletion started, finalizer pending) or null
//   creationTimestamp metadata.creationTimestamp (RFC 3339, second precision)
// Records also carry uid, resourceVersion and labels (the informer orders changes by them).
import type { ServiceCIDR } from '../service-cidrs.ts';
import type { CachedRecord } from './informer.ts';
import { type ObjectMetadata, readObject, timestamp } from './objects.ts';

/** The Ready condition type of a ServiceCIDR. */
export const SERVICE_CIDR_READY = 'Ready';

/** A ServiceCIDR as this source delivers it: the allocator's view plus the informer's identity. */
export interface ServiceCIDRRecord extends ServiceCIDR, CachedRecord {
  readonly labels: Readonly<Record<string, string>>;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
  readonly deletionTimestamp: string | null;
}

/** The JSON of a ServiceCIDR as the API serves it (timestamps may arrive as Date from client-node). */
export interface ServiceCIDRObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetadata & { deletionTimestamp?: string | Date | null; finalizers?: string[] };
  spec?: { cidrs?: string[] };
  status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };
}

/** A condition of a ServiceCIDR's status, as the API serves it. */
type ServiceCIDRCondition = NonNullable<NonNullable<ServiceCIDRObject['status']>['conditions']>[number];

/**
 * The Ready condition: true for status "True", false for any other status, undefined when absent.
 * Given anything but an object, or one whose reading throws, InvalidArgumentError (readObject).
 */
export function readyCondition(obj: ServiceCIDRObject): boolean | undefined {
  return readObject(obj, 'readyCondition', 'ServiceCIDR', readyOf);
}

function readyOf(obj: ServiceCIDRObject): boolean | undefined {
  const c = findReadyCondition(obj);
  return c === undefined ? undefined : c.status === 'True';
}

/**
 * The Ready condition of a ServiceCIDR object (the first condition of type Ready), undefined
 * when it has none; its fields as the object holds them (answers.ts checks the conditions are
 * objects). The one place the condition is looked for: readyCondition reads its status, the
 * command line its reason and message.
 * @internal
 */
export function findReadyCondition(obj: ServiceCIDRObject): ServiceCIDRCondition | undefined {
  const conditions = obj.status?.conditions;
  return Array.isArray(conditions) ? conditions.find((c) => c?.type === SERVICE_CIDR_READY) : undefined;
}

/**
 * A frozen record from an object served by the API (list item, watch event, create answer),
 * checked first (answers.ts). Given anything but an object, or one whose reading throws,
 * InvalidArgumentError (readObject).
 */
export function toServiceCIDR(obj: ServiceCIDRObject): ServiceCIDRRecord {
  return readObject(obj, 'toServiceCIDR', 'ServiceCIDR', serviceCIDROf);
}

function serviceCIDROf(obj: ServiceCIDRObject): ServiceCIDRRecord {
  const meta = obj.metadata ?? {};
  const cidrs = Array.isArray(obj.spec?.cidrs) ? obj.spec!.cidrs!.map(String) : [];
  const record: { -readonly [K in keyof ServiceCIDRRecord]: ServiceCIDRRecord[K] } = {
    name: meta.name ?? '',
    cidrs: Object.freeze(cidrs),
    ready: readyOf(obj),
    deletionTimestamp: timestamp(meta.deletionTimestamp) ?? null,
    labels: Object.freeze({ ...(meta.labels ?? {}) }),
  };
  const created = timestamp(meta.creationTimestamp);
  if (created !== undefined) record.creationTimestamp = created;
  if (meta.uid !== undefined) record.uid = meta.uid;
  if (meta.resourceVersion !== undefined) record.resourceVersion = meta.resourceVersion;
  return Object.freeze(record);
}
