// KubernetesServiceCIDRs: the ServiceCIDRSource (adapters/service-cidrs.ts) over networking.k8s.io
// ServiceCIDR objects, read through the same list + watch informer as the store (informer.ts).
//
//   list  → GET /apis/networking.k8s.io/{v1|v1beta1}/servicecidrs             (paged, consistent)
//   watch → GET /apis/networking.k8s.io/{v}/servicecidrs?watch=true&resourceVersion=…
//                      │ ADDED / MODIFIED ──► onAdd(sc)      (an update is onAdd again)
//                      │ DELETED          ──► onDelete(sc)   (the finalizer has run)
//                      └ 410 / error ──► re-list, differences delivered as onAdd / onDelete
//
// Object → ServiceCIDR: service-cidr-objects.ts (toServiceCIDR), which loads no client-node.
//
// Creation order (subscribe's replay and list()): creationTimestamp, ties broken by the order the
// informer first saw the objects (a list arrives in name order, then watch order). The API's
// timestamps have second precision, so objects created within one second tie.
//
// Lifecycle (lifecycle.ts): after close() every method throws or rejects ErrDestroyed
// ('KubernetesServiceCIDRs') and subscribers get no further events. Each list request has a
// deadline (requestTimeoutMs, requests.ts), as have the create/delete helpers.
//
// RBAC: list and watch on servicecidrs.networking.k8s.io for the source; create, get (to read
// back a name already taken, or a delete whose answer was lost) and delete for the
// createServiceCIDR / deleteServiceCIDR helpers.
import { type ConfigurationOptions, type KubeConfig, NetworkingV1Api, NetworkingV1beta1Api } from '@kubernetes/client-node';
import { compareCreation, validateServiceCIDRSpec, type ServiceCIDRSource, type ServiceCIDRWatcher } from '../service-cidrs.ts';
import { requestJson } from './answer-probe.ts';
import { type ServiceCIDRObject, type ServiceCIDRRecord, toServiceCIDR } from './service-cidr-objects.ts';
import { checkDeleteAnswer, checkObject } from './answers.ts';
import { KubernetesApiError, namesObject, redirectedTo, translate } from './errors.ts';
import { Informer } from './informer.ts';
import { clientNodeListerWatcher, type ListParams } from './lister-watcher.ts';
import { checkThis, INFORMER, InformerLifecycle, REQUESTS } from './lifecycle.ts';
import { malformedWriteAnswer, outcomeUnknown, withDetail } from './read-back.ts';
import { ApiRequests, mayHaveTakenEffect, requestTimeoutOption } from './requests.ts';
import {
  checkInformerOptions,
  kubeConfigOrDefault,
  optionsObject,
  SHARED_OPTIONS,
  type SharedOptions,
  selectorOption,
  shownServer,
} from './config.ts';
import {
  checkApiVersion,
  checkedLabels,
  GROUP,
  isPathSegmentName,
  parseLabelSelector,
  type ApiVersion,
  type LabelSelector,
} from './objects.ts';
import { checkWatcher, notAName } from '../store.ts';
import { ErrDestroyed, InvalidArgumentError } from '../errors.ts';
import { formatCount, quoteInput } from '../quote.ts';
import { unboundCall } from '../input.ts';
import { isDNS1123Subdomain } from '../label-rules.ts';
import { readOnlyFields } from '../types.ts';

const RESOURCE = `servicecidrs.${GROUP}`;

export {
  readyCondition,
  SERVICE_CIDR_READY,
  type ServiceCIDRObject,
  type ServiceCIDRRecord,
  toServiceCIDR,
} from './service-cidr-objects.ts';

export interface KubernetesServiceCIDRsOptions extends SharedOptions {
  /** Only ServiceCIDRs matching this label selector (default: all, like upstream). */
  labelSelector?: string | undefined;
}

/** The part of the generated NetworkingV1Api / NetworkingV1beta1Api used here. */
interface ServiceCIDRApi {
  createServiceCIDR(param: { body: never }, options: ConfigurationOptions): Promise<unknown>;
  readServiceCIDR(param: { name: string }, options: ConfigurationOptions): Promise<unknown>;
  deleteServiceCIDR(param: { name: string }, options: ConfigurationOptions): Promise<unknown>;
  listServiceCIDR(param: ListParams, options: ConfigurationOptions): Promise<unknown>;
}

function apiFor(kc: KubeConfig, version: ApiVersion): ServiceCIDRApi {
  return (version === 'v1' ? kc.makeApiClient(NetworkingV1Api) : kc.makeApiClient(NetworkingV1beta1Api)) as unknown as ServiceCIDRApi;
}

/**
 * A header-free KubernetesApiError naming the ServiceCIDR. Unlike the store, 409 and 404 stay
 * KubernetesApiErrors (code 409 reason AlreadyExists, code 404 reason NotFound): the allocator's
 * AlreadyExistsError / NotFoundError speak of IPAddresses.
 */
function apiError(err: unknown, verb: 'create' | 'delete' | 'get', name: string, requests: ApiRequests): KubernetesApiError {
  if (err instanceof KubernetesApiError) return err; // a timed-out request: it names the ServiceCIDR already
  const e = translate(err, verb, RESOURCE, undefined, requests.server) as KubernetesApiError; // without a name translate never maps 409/404
  const prefix = `${verb} ${RESOURCE}: `;
  const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new KubernetesApiError(verb, RESOURCE, name, e.code, e.status, detail, (e as { cause?: unknown }).cause);
}

/**
 * Whether `e` (apiError of `err`) is the API server's own answer with HTTP status `code`: not one
 * from a host a redirect took the request to (a login page's 404 or 409 says nothing of the
 * ServiceCIDR, even in a Status that names it), as translate reads the store's answers.
 */
function saidByApiServer(err: unknown, e: KubernetesApiError, code: 404 | 409): boolean {
  return e.code === code && redirectedTo(err) === undefined;
}

export interface CreateServiceCIDROptions {
  apiVersion?: ApiVersion | undefined;
  labels?: Record<string, string> | undefined;
  /**
   * How long each request may wait for its answer, in ms (as KubernetesStoreOptions). Default
   * 30 000. A create whose answer is lost is sent once more, and one answered 409 is read back:
   * the call may take up to about three times this (twice against a server that answers nothing).
   */
  requestTimeoutMs?: number | undefined;
}

/** Requests to the current cluster of `kc` with the timeout of `options`. */
function requestsFor(kc: KubeConfig, requestTimeoutMs: unknown, owner: string): ApiRequests {
  const cluster = kc.getCurrentCluster();
  return new ApiRequests(cluster ? shownServer(cluster.server) : 'the API server', requestTimeoutOption(requestTimeoutMs, owner), kc);
}

/**
 * Creates the ServiceCIDR `name` with `spec.cidrs` = `cidrs` (one, or one per family; checked
 * here as the API server would, throwing InvalidArgumentError / InvalidCIDRError). Resolves to the
 * stored object — also when the name is taken by a ServiceCIDR that is already as asked (the
 * same spec.cidrs, in the same order, and every label asked for), read back after the 409: a
 * create whose answer was lost (a dropped connection, a ServerTimeout answered after the write,
 * which is sent again) stored it, and calling again finds it, as kubectl apply finds an object
 * already as wanted. A create whose own answer was lost, or came as a 500, 502, 503 or 504 naming
 * no wait, is sent once more by this call, which then finds it so. Whether that object came from this caller or another cannot be told, and
 * does not matter: it is the one asked for. A ServiceCIDR of that name with other cidrs or
 * labels, or being deleted, rejects with a KubernetesApiError (409 AlreadyExists) saying how it
 * differs; any other API failure with a KubernetesApiError. The Ready condition is
 * kube-controller-manager's to set.
 */
export async function createServiceCIDR(
  kc: KubeConfig,
  name: string,
  cidrs: readonly string[],
  options: CreateServiceCIDROptions = {},
): Promise<ServiceCIDRRecord> {
  const opts = optionsObject<CreateServiceCIDROptions>(options, 'createServiceCIDR', {
    apiVersion: true,
    labels: true,
    requestTimeoutMs: true,
  });
  const version = checkApiVersion(opts.apiVersion);
  const config = kubeConfigOrDefault(kc, 'createServiceCIDR');
  const api = apiFor(config, version);
  const requests = requestsFor(config, opts.requestTimeoutMs, 'createServiceCIDR');
  // metadata.name must be a DNS subdomain (NameIsDNSSubdomain), as InMemoryServiceCIDRs requires:
  // the API server refuses any other (`A`, `a_b`, 254 characters), and `a/b` would not even be a name
  if (typeof name !== 'string' || !isDNS1123Subdomain(name)) {
    throw new InvalidArgumentError(
      `createServiceCIDR: a ServiceCIDR name must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters), got ${quoteInput(name)}`,
    );
  }
  validateServiceCIDRSpec(cidrs);
  const metadata: { name: string; labels?: Record<string, string> } = { name };
  if (opts.labels !== undefined) metadata.labels = checkedLabels(opts.labels, 'createServiceCIDR');
  const body: ServiceCIDRObject = { apiVersion: `${GROUP}/${version}`, kind: 'ServiceCIDR', metadata, spec: { cidrs: [...cidrs] } };
  // A 2xx whose body is not the object (a proxy's page, `{}`, a field of the wrong type) is no
  // ServiceCIDR to return.
  const malformed = (what: string) => malformedWriteAnswer('create', RESOURCE, name, what);
  let created: unknown;
  try {
    // A create whose answer was lost, or answered 500, 502, 503 or 504 and not sent again, may
    // have stored the object (mayHaveTakenEffect): it is sent once more, and meets it as a 409,
    // read back below, as a second call would; not stored, the second send stores it.
    // the failure of the first send, when it may have stored the object
    let first: KubernetesApiError | undefined;
    for (;;) {
      try {
        created = await requestJson(
          requests,
          { verb: 'create', resource: RESOURCE, name },
          (opts) => api.createServiceCIDR({ body: body as never }, opts),
          malformed,
        );
        break;
      } catch (err) {
        const e = apiError(err, 'create', name, requests);
        if (first === undefined && mayHaveTakenEffect(err)) {
          first = e;
          continue;
        }
        if (saidByApiServer(err, e, 409) && (e.reason === undefined || e.reason === 'AlreadyExists')) {
          return await existingAsAsked(api, requests, body, e);
        }
        throw first === undefined ? e : afterFirstSend(e, first);
      }
    }
  } finally {
    // the connections are this call's own (kubeConfigOrDefault): no later call reuses them
    requests.closeConnections(() => new ErrDestroyed('createServiceCIDR'));
  }
  const problem = checkObject(created, 'ServiceCIDR', name, undefined, body.apiVersion);
  if (problem !== undefined) throw malformed(problem);
  return toServiceCIDR(created as ServiceCIDRObject);
}

/**
 * The failure `second` of a create sent again after `first`, which may have stored the object:
 * `second`'s message and fields, then what the first send left open — e.g. `create
 * servicecidrs.networking.k8s.io "extra": HTTP 502 …; sent a second time: the first send may have
 * stored the object (it failed: fetch failed: other side closed …)`, or `…; sent a second time, it
 * failed the same way: the first send may have stored the object` when both failed alike.
 */
function afterFirstSend(second: KubernetesApiError, first: KubernetesApiError): KubernetesApiError {
  const name = second.resourceName;
  const prefix = `create ${RESOURCE} "${name}": `;
  const detail = (e: Error) => (e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message);
  return new KubernetesApiError(
    'create',
    RESOURCE,
    name,
    second.code,
    second.status,
    detail(second) === detail(first)
      ? `${detail(second)}; sent a second time, it failed the same way: the first send may have stored the object`
      : `${detail(second)}; sent a second time: the first send may have stored the object (it failed: ${detail(first)})`,
    second.cause,
    second.timeoutMs,
    second.resends,
    second.cutOffStatus,
  );
}

/**
 * The ServiceCIDR a create was answered 409 AlreadyExists for (`taken`), read back: resolved
 * when it is as `wanted` (spec.cidrs equal, each label asked for present with its value, not
 * being deleted); otherwise a KubernetesApiError with the 409's code and Status saying how it
 * differs, or what the read met.
 */
async function existingAsAsked(
  api: ServiceCIDRApi,
  requests: ApiRequests,
  wanted: ServiceCIDRObject,
  taken: KubernetesApiError,
): Promise<ServiceCIDRRecord> {
  const name = wanted.metadata!.name!;
  const fail = (detail: string) => new KubernetesApiError('create', RESOURCE, name, taken.code, taken.status, detail);
  const malformed = (what: string) => fail(`it already exists, and reading it back was answered with ${what}`);
  let found: unknown;
  try {
    found = await requestJson(
      requests,
      { verb: 'get', resource: RESOURCE, name },
      (opts) => api.readServiceCIDR({ name }, opts),
      malformed,
    );
  } catch (err) {
    const e = apiError(err, 'get', name, requests);
    if (saidByApiServer(err, e, 404) && namesObject(e.status))
      throw fail('it already exists, and was gone when read back (deleted meanwhile)');
    throw fail(`it already exists, and reading it back failed: ${e.message}`);
  }
  const problem = checkObject(found, 'ServiceCIDR', name, undefined, wanted.apiVersion);
  if (problem !== undefined) throw malformed(problem);
  const existing = toServiceCIDR(found as ServiceCIDRObject);
  const cidrs = wanted.spec!.cidrs!;
  if (existing.cidrs.length !== cidrs.length || existing.cidrs.some((c, i) => c !== cidrs[i])) {
    throw fail(`it already exists with spec.cidrs ${quoteList(existing.cidrs)}, not ${quoteList(cidrs)}`);
  }
  for (const [key, value] of Object.entries(wanted.metadata!.labels ?? {})) {
    if (existing.labels[key] === value) continue;
    const has = Object.hasOwn(existing.labels, key) ? `the label ${key}=${quoteInput(existing.labels[key])}` : `no label ${key}`;
    throw fail(`it already exists with ${has}, not ${key}=${quoteInput(value)}`);
  }
  if (existing.deletionTimestamp !== null) {
    throw fail(
      `it already exists and is being deleted (deletionTimestamp ${quoteInput(existing.deletionTimestamp)}); create it again once it is gone`,
    );
  }
  return existing;
}

/** A list of CIDRs for a message, each quoted (escaped, cut), at most four shown: the server's text reaches a terminal. */
function quoteList(list: readonly string[]): string {
  return `[${list
    .slice(0, 4)
    .map((c) => quoteInput(c))
    .join(', ')}${list.length > 4 ? `, … (${formatCount(list.length)} in all)` : ''}]`;
}

/**
 * Deletes the ServiceCIDR `name`. Resolves true once the server accepted the delete (with its
 * finalizer the object stays, with a deletionTimestamp, until kube-controller-manager finds no
 * IPAddress left in its ranges), false when there was no such object; other failures reject with
 * a KubernetesApiError, and so does an answer that is neither a Status nor that ServiceCIDR.
 *
 * A delete whose answer was lost after it went out (its connection dropped, its deadline passed),
 * or that was answered 500, 502, 503 or 504, may have taken effect: the ServiceCIDR is read back
 * by name. Gone, or marked for deletion, it resolves true — gone after a lost answer is true
 * whether this delete removed it or there was no ServiceCIDR of that name at all, which the
 * read-back cannot tell apart (false is only ever the delete's own 404). There and not being deleted, it cannot
 * be told from one created under that name since, which a second delete would remove: it is not
 * deleted again, and the failure stands, saying what is there. A read-back that fails rejects with
 * a KubernetesApiError saying that whether it was deleted is unknown.
 */
export async function deleteServiceCIDR(
  kc: KubeConfig,
  name: string,
  options: { apiVersion?: ApiVersion | undefined; requestTimeoutMs?: number | undefined } = {},
): Promise<boolean> {
  const opts = optionsObject<{ apiVersion?: ApiVersion | undefined; requestTimeoutMs?: number | undefined }>(options, 'deleteServiceCIDR', {
    apiVersion: true,
    requestTimeoutMs: true,
  });
  const config = kubeConfigOrDefault(kc, 'deleteServiceCIDR');
  const version = checkApiVersion(opts.apiVersion);
  const api = apiFor(config, version);
  const requests = requestsFor(config, opts.requestTimeoutMs, 'deleteServiceCIDR');
  // "", "." or ".." would send the DELETE to the collection: every ServiceCIDR
  if (!isPathSegmentName(name)) throw new InvalidArgumentError(`deleteServiceCIDR: a ServiceCIDR needs a name, got ${quoteInput(name)}`);
  // A 2xx that is neither a Status nor the ServiceCIDR marked for deletion says nothing about
  // what was deleted.
  const malformed = (what: string) => malformedWriteAnswer('delete', RESOURCE, name, what);
  try {
    // Not sent again after a 5xx, which may have deleted it already: by then the name may belong
    // to a new ServiceCIDR, which a second delete would remove.
    const reply = await requestJson(
      requests,
      { verb: 'delete', resource: RESOURCE, name },
      (opts) => api.deleteServiceCIDR({ name }, opts),
      malformed,
      undefined,
      { resendAfterServerError: false },
    );
    const problem = checkDeleteAnswer(reply, 'ServiceCIDR', name, `${GROUP}/${version}`);
    if (problem !== undefined) throw malformed(problem);
    return true;
  } catch (err) {
    const e = apiError(err, 'delete', name, requests);
    if (saidByApiServer(err, e, 404) && namesObject(e.status)) return false; // no such ServiceCIDR (not: the version is not served)
    // Sent, and its answer lost, or a 5xx that does not say it was left undone: read back.
    if (!mayHaveTakenEffect(err)) throw e;
    return await deletedWhenReadBack(api, requests, name, `${GROUP}/${version}`, e);
  } finally {
    // the connections are this call's own (kubeConfigOrDefault): no later call reuses them
    requests.closeConnections(() => new ErrDestroyed('deleteServiceCIDR'));
  }
}

/**
 * The ServiceCIDR `name`, read back after its delete failed with `failure` in a way that may have
 * taken effect: true when it is gone or marked for deletion (the delete, this one or another,
 * went through); else `failure` rejects, followed by what the read-back found — the ServiceCIDR
 * there, not being deleted (its uid: whether it is the one this delete was for cannot be told, so
 * it is not deleted again), or the read's own failure.
 */
async function deletedWhenReadBack(
  api: ServiceCIDRApi,
  requests: ApiRequests,
  name: string,
  apiVersion: string,
  failure: KubernetesApiError,
): Promise<true> {
  const unread = (why: string) => outcomeUnknown(failure, RESOURCE, why);
  let found: unknown;
  let malformed: Error | undefined;
  try {
    found = await requestJson(
      requests,
      { verb: 'get', resource: RESOURCE, name },
      (opts) => api.readServiceCIDR({ name }, opts),
      (what) => (malformed = unread(`it was answered with ${what}`)),
    );
  } catch (err) {
    if (err === malformed) throw err;
    const e = apiError(err, 'get', name, requests);
    if (saidByApiServer(err, e, 404) && namesObject(e.status)) return true;
    throw outcomeUnknown(failure, RESOURCE, e);
  }
  const problem = checkObject(found, 'ServiceCIDR', name, undefined, apiVersion);
  if (problem !== undefined) throw unread(`it was answered with ${problem}`);
  const there = toServiceCIDR(found as ServiceCIDRObject);
  if (there.deletionTimestamp !== null) return true;
  const uid = there.uid ? ` (uid ${quoteInput(there.uid)})` : '';
  throw withDetail(
    failure,
    RESOURCE,
    `read back, a ServiceCIDR of that name is there${uid}, not marked for deletion: the delete did not take, or the name was ` +
      'given to a new ServiceCIDR since, which cannot be told apart, so it was not deleted again',
  );
}

export class KubernetesServiceCIDRs extends InformerLifecycle<ServiceCIDRRecord> implements ServiceCIDRSource {
  readonly apiVersion: ApiVersion;
  /** The collection path, e.g. /apis/networking.k8s.io/v1/servicecidrs. */
  readonly path: string;
  readonly selector: LabelSelector | undefined;
  /** @internal */
  protected readonly [INFORMER]: Informer<ServiceCIDRRecord>;
  /** @internal */
  protected readonly [REQUESTS]: ApiRequests;
  /** One entry per subscribe() call (the same watcher subscribed twice is two), as MemoryStore keeps them. */
  private readonly subscriptions = new Set<{ readonly watcher: ServiceCIDRWatcher }>();
  /** Where a subscriber's throw goes (options.onWatcherError, else console.error). */
  private readonly report: (err: unknown) => void;

  /**
   * A source over the cluster of `kubeConfig` (default: $KUBECONFIG or ~/.kube/config). Starts
   * listing and watching at once unless `start: false`. Wrong arguments throw
   * InvalidArgumentError before any request.
   */
  constructor(kubeConfig?: KubeConfig, options: KubernetesServiceCIDRsOptions = {}) {
    super();
    const kc = kubeConfigOrDefault(kubeConfig, 'KubernetesServiceCIDRs');
    options = optionsObject<KubernetesServiceCIDRsOptions>(options, 'KubernetesServiceCIDRs', SHARED_OPTIONS);
    const backoff = checkInformerOptions(options, 'KubernetesServiceCIDRs');
    this.apiVersion = checkApiVersion(options.apiVersion);
    const api = apiFor(kc, this.apiVersion);
    const requests = (this[REQUESTS] = requestsFor(kc, options.requestTimeoutMs, 'KubernetesServiceCIDRs'));
    const path = (this.path = `/apis/${GROUP}/${this.apiVersion}/servicecidrs`);
    const text = selectorOption(options.labelSelector);
    this.selector = text !== undefined ? parseLabelSelector(text) : undefined;

    const lw = clientNodeListerWatcher(kc, requests, RESOURCE, path, (params, opts) => api.listServiceCIDR(params, opts));
    this[INFORMER] = new Informer<ServiceCIDRRecord>(lw, RESOURCE, {
      owner: 'KubernetesServiceCIDRs',
      kind: 'ServiceCIDR',
      apiVersion: `${GROUP}/${this.apiVersion}`,
      convert: (obj) => toServiceCIDR(obj as ServiceCIDRObject),
      ...(this.selector ? { selector: this.selector } : {}),
      ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
      ...(backoff ? { backoff } : {}),
      ...(options.watchTimeoutSeconds !== undefined ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
      ...(options.onWatcherError ? { onWatcherError: options.onWatcherError } : {}),
    });
    // One fan-out subscription; a subscriber that throws is reported and does not stop the others.
    this.report = options.onWatcherError ?? ((e: unknown) => console.error('ipallocator: a ServiceCIDR watcher threw', e));
    const fanOut = (kind: 'onAdd' | 'onDelete', sc: ServiceCIDRRecord) => {
      for (const sub of [...this.subscriptions]) {
        // else unsubscribed by an earlier watcher of this event (subscribed again: replayed already)
        if (this.subscriptions.has(sub)) this.deliver(sub.watcher, kind, sc);
      }
    };
    this[INFORMER].subscribe({ onAdd: (sc) => fanOut('onAdd', sc), onDelete: (sc) => fanOut('onDelete', sc) });
    // read-only at run time too, as KubernetesStore's (store.ts)
    readOnlyFields(this, 'apiVersion', 'path', 'selector');
    if (options.start ?? true) this[INFORMER].start();
  }

  // --- ServiceCIDRSource -----------------------------------------------------------------------

  /** onAdd for every known object in creation order (synchronously), then every change in order. */
  subscribe(this: object, watcher: ServiceCIDRWatcher): () => void;
  subscribe(this: KubernetesServiceCIDRs, watcher: ServiceCIDRWatcher): () => void {
    checkSource(this, 'subscribe');
    this.assertOpen();
    checkWatcher(watcher, 'KubernetesServiceCIDRs.subscribe');
    for (const sc of this.list()) {
      if (this.closed) break; // the replay's watcher closed the source
      this.deliver(watcher, 'onAdd', sc);
    }
    this.assertOpen(); // a closed source keeps no subscriber, and says so as every call after close() does
    const sub = { watcher };
    this.subscriptions.add(sub);
    return () => {
      this.subscriptions.delete(sub);
    };
  }

  /** One event to one subscriber: a throw is reported and stops neither the others nor the replay. */
  private deliver(watcher: ServiceCIDRWatcher, kind: 'onAdd' | 'onDelete', sc: ServiceCIDRRecord): void {
    try {
      watcher[kind](sc);
    } catch (err) {
      this.report(err);
    }
  }

  /** True once the first list has been applied (stays true while re-listing). */
  hasSynced(this: object): boolean;
  hasSynced(this: KubernetesServiceCIDRs): boolean {
    checkSource(this, 'hasSynced');
    this.assertOpen();
    return this[INFORMER].hasSynced();
  }

  /** The objects known now, in creation order. */
  list(this: object): ServiceCIDRRecord[];
  list(this: KubernetesServiceCIDRs): ServiceCIDRRecord[] {
    checkSource(this, 'list');
    this.assertOpen();
    return this[INFORMER].list().sort(compareCreation); // as a MetaAllocator orders its ranges
  }

  /** The object named `name` as last seen, or undefined. */
  get(this: object, name: string): ServiceCIDRRecord | undefined;
  get(this: KubernetesServiceCIDRs, name: string): ServiceCIDRRecord | undefined {
    checkSource(this, 'get');
    this.assertOpen();
    if (typeof name !== 'string') throw notAName(name, 'KubernetesServiceCIDRs.get'); // named here, not as the informer's cache.get
    return this[INFORMER].get(name);
  }

  /** Stops the informer (aborting its watch); subscribers get no further events. */
  override close(this: object): void;
  override close(this: KubernetesServiceCIDRs): void {
    checkThis(this, 'close'); // before its first read of a field
    this.subscriptions.clear();
    super.close();
  }
}

/**
 * Refuses a method of KubernetesServiceCIDRs called without its object (unboundCall): taken off
 * it or passed as a callback, where `this` is undefined or another object. Checked first: none is
 * on the allocation path (a MetaAllocator asks hasSynced only until it answers true).
 */
function checkSource(self: unknown, method: string): void {
  if (!(self instanceof KubernetesServiceCIDRs)) throw unboundCall(self, 'KubernetesServiceCIDRs', method);
}

// Compile-time conformance (upstream style `var _ Interface = &T{}`).
const _conforms: (s: KubernetesServiceCIDRs) => ServiceCIDRSource = (s) => s;
void _conforms;
