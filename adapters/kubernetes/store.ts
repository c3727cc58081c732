// KubernetesStore: the Store contract over IPAddress objects of networking.k8s.io, through
// @kubernetes/client-node (imported only under adapters/kubernetes/, so the core never loads it).
//
//   create → POST   /apis/networking.k8s.io/{v1|v1beta1}/ipaddresses         409 → AlreadyExistsError
//            (?fieldManager=ipallocator-<random>: its own mark, read back after a 409 to a
//            resend, or after a lost answer: GET by name)
//   delete → DELETE /apis/networking.k8s.io/{v}/ipaddresses/{name}           404 → NotFoundError
//            (after a lost answer or a 5xx that may have taken effect: read back by name, and
//            sent once more, conditional on the uid, when the object meant is still there)
//   get    → GET    /apis/networking.k8s.io/{v}/ipaddresses/{name}           404 → undefined
//   cache  → list + watch of /apis/networking.k8s.io/{v}/ipaddresses (see informer.ts)
// (a 404 that names no object is the API version not being served: a KubernetesApiError saying
// so, never NotFoundError or undefined — errors.ts namesObject). Every other failure rejects with
// a KubernetesApiError naming the verb, the address and the HTTP status — never headers or tokens.
// A 2xx answer is read from its JSON as the server sent it (answer-probe.ts) and checked first
// (answers.ts): anything but the IPAddress asked for (for a delete: a Status, or that IPAddress
// marked for deletion) rejects with a KubernetesApiError saying what came back, and the cache is
// left as it was. Each request has a deadline (requestTimeoutMs, see requests.ts): a server that
// accepts and never answers yields a KubernetesApiError too.
//
// Lifecycle (lifecycle.ts): after close() every method throws or rejects ErrDestroyed
// ('KubernetesStore'), the cache's included (as MemoryStore's), and so do the calls still in
// flight (their requests are aborted); unsubscribe functions still work.
// Wrong constructor arguments and malformed records (validateRecord, as MemoryStore) are refused
// before any request.
//
// RBAC: get, list, watch, create, delete on ipaddresses.networking.k8s.io.
import { type ConfigurationOptions, type KubeConfig, NetworkingV1Api, NetworkingV1beta1Api } from '@kubernetes/client-node';
import type { IPAddressRecord, NewIPAddressRecord, Store, StoreCache } from '../store.ts';
import { type IPFamily, readOnlyFields } from '../types.ts';
import { CACHE_LEAVES_OUT, LABEL_IP_FAMILY, notAName } from '../store.ts';
import { AlreadyExistsError, InvalidArgumentError, NotFoundError } from '../errors.ts';
import { quoteInput } from '../quote.ts';
import { unboundOr, unboundRead } from '../input.ts';
import { validateFields } from '../records.ts';
import {
  checkInformerOptions,
  kubeConfigOrDefault,
  optionsObject,
  SHARED_OPTIONS,
  type SharedOptions,
  selectorOption,
  shownServer,
} from './config.ts';
import { requestJson } from './answer-probe.ts';
import { checkDeleteAnswer, checkObject } from './answers.ts';
import { KubernetesApiError, malformedAnswer, redirectedTo, translate } from './errors.ts';
import { detailOf, malformedWriteAnswer, outcomeUnknown, withDetail } from './read-back.ts';
import { answerBegan, ApiRequests, mayHaveTakenEffect, requestTimeoutOption } from './requests.ts';
import { Informer } from './informer.ts';
import { clientNodeListerWatcher, type ListParams } from './lister-watcher.ts';
import { INFORMER, InformerLifecycle, REQUESTS } from './lifecycle.ts';
import {
  GROUP,
  deleteOutcome,
  type DeleteOutcome,
  isPathSegmentName,
  ownRecord,
  bodyOf,
  checkApiVersion,
  matchesSelector,
  parseLabelSelector,
  toRecord,
  type ApiVersion,
  type IPAddressObject,
  type LabelSelector,
} from './objects.ts';

const RESOURCE = `ipaddresses.${GROUP}`;

export interface KubernetesStoreOptions extends SharedOptions {
  /**
   * Narrows the cache to IPAddresses labelled with this family. Off by default: upstream's
   * informer sees every IPAddress (an address taken by another controller is taken for us too).
   */
  family?: IPFamily | undefined;
  /** A label selector for the cache (combined with `family`), e.g. `ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io`. */
  labelSelector?: string | undefined;
  /** Apply this store's own successful creates/deletes to the cache at once. Default true. */
  readYourWrites?: boolean | undefined;
}

/** The part of the generated NetworkingV1Api / NetworkingV1beta1Api this store uses. */
interface IPAddressApi {
  createIPAddress(param: { body: never; fieldManager?: string }, options: ConfigurationOptions): Promise<unknown>;
  readIPAddress(param: { name: string }, options: ConfigurationOptions): Promise<unknown>;
  deleteIPAddress(param: { name: string; body?: { preconditions: { uid: string } } }, options: ConfigurationOptions): Promise<unknown>;
  listIPAddress(param: ListParams, options: ConfigurationOptions): Promise<unknown>;
}

export class KubernetesStore extends InformerLifecycle<IPAddressRecord> implements Store {
  readonly apiVersion: ApiVersion;
  /** The collection path, e.g. /apis/networking.k8s.io/v1/ipaddresses. */
  readonly path: string;
  readonly selector: LabelSelector | undefined;
  private readonly api: IPAddressApi;
  /** @internal */
  protected readonly [INFORMER]: Informer;
  /** @internal */
  protected readonly [REQUESTS]: ApiRequests;
  private readonly readYourWrites: boolean;

  /**
   * A store over the cluster of `kubeConfig` (default: $KUBECONFIG or ~/.kube/config). Starts
   * listing and watching at once unless `start: false`; await `waitForSync()` before allocating.
   * Wrong arguments throw InvalidArgumentError before any request.
   */
  constructor(kubeConfig?: KubeConfig, options: KubernetesStoreOptions = {}) {
    super();
    const kc = kubeConfigOrDefault(kubeConfig, 'KubernetesStore');
    options = optionsObject<KubernetesStoreOptions>(options, 'KubernetesStore', { ...SHARED_OPTIONS, family: true, readYourWrites: true });
    const backoff = checkInformerOptions(options, 'KubernetesStore');
    this.apiVersion = checkApiVersion(options.apiVersion);
    this.path = `/apis/${GROUP}/${this.apiVersion}/ipaddresses`;
    this.api = (this.apiVersion === 'v1'
      ? kc.makeApiClient(NetworkingV1Api)
      : kc.makeApiClient(NetworkingV1beta1Api)) as unknown as IPAddressApi;
    if (options.readYourWrites !== undefined && typeof options.readYourWrites !== 'boolean') {
      throw new InvalidArgumentError(
        `KubernetesStore: options.readYourWrites must be true or false, got ${quoteInput(options.readYourWrites)}`,
      );
    }
    this.readYourWrites = options.readYourWrites ?? true;
    const cluster = kc.getCurrentCluster();
    const requests = (this[REQUESTS] = new ApiRequests(
      cluster ? shownServer(cluster.server) : 'the API server',
      requestTimeoutOption(options.requestTimeoutMs, 'KubernetesStore'),
      kc,
    ));

    const parts: string[] = [];
    if (options.family !== undefined) {
      if (options.family !== 'IPv4' && options.family !== 'IPv6') {
        throw new InvalidArgumentError(`family must be "IPv4" or "IPv6", got ${quoteInput(options.family)}`);
      }
      parts.push(`${LABEL_IP_FAMILY}=${options.family}`);
    }
    const selector = selectorOption(options.labelSelector);
    if (selector !== undefined) parts.push(selector);
    this.selector = parts.length > 0 ? parseLabelSelector(parts.join(',')) : undefined;

    const lw = clientNodeListerWatcher(kc, requests, RESOURCE, this.path, (params, opts) => this.api.listIPAddress(params, opts));
    this[INFORMER] = new Informer(lw, RESOURCE, {
      owner: 'KubernetesStore',
      kind: 'IPAddress',
      apiVersion: `${GROUP}/${this.apiVersion}`,
      ...(this.selector ? { selector: this.selector } : {}),
      ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
      ...(backoff ? { backoff } : {}),
      ...(options.watchTimeoutSeconds !== undefined ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
      ...(options.onWatcherError ? { onWatcherError: options.onWatcherError } : {}),
    });
    // what the store was made with, which its informer lists by: read-only at run time too, as an
    // allocator's fields are (the selector itself is frozen: parseLabelSelector)
    readOnlyFields(this, 'apiVersion', 'path', 'selector');
    if (options.start ?? true) this[INFORMER].start();
  }

  /** The selector's text when the cache leaves out a record with `labels` (see CACHE_LEAVES_OUT). @internal */
  [CACHE_LEAVES_OUT](labels: Readonly<Record<string, string>>): string | undefined {
    return this.selector === undefined || matchesSelector(this.selector, labels) ? undefined : this.selector.text;
  }

  /** The informer view (its methods throw ErrDestroyed after close()). */
  get cache(): StoreCache {
    // read without the store, `this[INFORMER]` of another object would be undefined, no error
    if (!(this instanceof KubernetesStore)) throw unboundRead(this, 'KubernetesStore', 'cache');
    return this[INFORMER];
  }

  /**
   * Creates the IPAddress; 409 → AlreadyExistsError — except when the create was sent again after
   * a 5xx and the object there is the one its earlier send stored (read back: it carries this
   * create's own fieldManager), which is then the success. A create whose answer was lost after it
   * went out (its connection dropped, its deadline passed), or that was answered 500, 502, 503 or
   * 504 and not sent again (mayHaveTakenEffect), reads the object back too: its own is
   * the success, another's AlreadyExistsError; none there, it is sent once more. A read-back that
   * fails rejects with a KubernetesApiError saying that whether the object was created is unknown.
   * The created record is in the cache when this resolves (read-your-writes).
   */
  create(this: object, given: NewIPAddressRecord): Promise<IPAddressRecord>;
  async create(this: KubernetesStore, given: NewIPAddressRecord): Promise<IPAddressRecord> {
    try {
      this.assertOpen();
      // Refused at the door as MemoryStore refuses it (InvalidRecordError), before any request; a
      // null parentRef passes here and the server answers 422, as kube-apiserver requires one. The
      // fields are read once and the labels and parentRef copied (ownRecord): what is sent is what
      // was checked, whatever a getter would answer to a second read.
      const own = ownRecord(given);
      validateFields(own.name, own.labels, own.parentRef);
      const record = own as IPAddressRecord;
      const body = bodyOf(own, this.apiVersion);
      const history = this[INFORMER].history;
      // A 2xx whose body is not the object (a proxy's page, `{}`, an object of another name or with
      // a field of the wrong type): nothing to cache or return. The request may have created it, as
      // after a timeout; the watch will show it.
      const malformed = (what: string) => malformedWriteAnswer('create', RESOURCE, record.name, what, true);
      // This create's own mark (readBack): a fieldManager no other request carries, sent with each
      // of its sends and kept by the server as the object's managedFields manager.
      const manager = createManager();
      let created: unknown;
      // whether the send answered now is not this create's first (after a 5xx, or a read-back)
      let sendIsResend = false;
      // the answers earlier sends were waited out on, in words, once a 5xx was among them
      let waitedOut: string | undefined;
      // the failure of the first send, when it was sent again after a read-back
      let earlier: Error | undefined;
      for (let sentAgainAfterReadBack = false; ; ) {
        try {
          created = await requestJson(
            this[REQUESTS],
            { verb: 'create', resource: RESOURCE, name: record.name },
            (opts, serverErrorsWaitedOut) => {
              waitedOut = serverErrorsWaitedOut;
              sendIsResend = sentAgainAfterReadBack || serverErrorsWaitedOut !== undefined;
              return this.api.createIPAddress({ body: body as never, fieldManager: manager }, opts);
            },
            malformed,
          );
          break;
        } catch (err) {
          const e = translate(err, 'create', RESOURCE, record.name, this[REQUESTS].server);
          // Sent again, after a 5xx or a lost answer, either of which may have stored it: the
          // object there may be our own earlier send's. Read back, it is the success only when it
          // carries this create's mark.
          if (e.name === 'AlreadyExistsError') {
            if (!sendIsResend) throw e;
            const found = await this.readBack(body, manager);
            // not read: the object there may be this create's own, which a collision would leave behind
            if (found.failed !== undefined) throw outcomeUnknown(metOnResend(record.name, earlier, waitedOut), RESOURCE, found.failed);
            if (found.own === undefined) throw e;
            created = found.own;
            break;
          }
          // Sent, and its answer lost (the connection dropped, the deadline passed) or a 5xx that
          // does not say it was left undone (mayHaveTakenEffect): read back.
          if (!mayHaveTakenEffect(err)) throw e;
          const found = await this.readBack(body, manager);
          if (found.failed !== undefined) throw outcomeUnknown(e, RESOURCE, found.failed, answerBegan(err));
          if (found.other) throw new AlreadyExistsError(record.name);
          if (found.own !== undefined) {
            created = found.own;
            break;
          }
          // Not there: not stored, or not yet (kube-apiserver may still be writing it). Sent once
          // more, with the same mark: whichever send is stored is this create's, and the other
          // meets it (409, read back). Lost again and still not there: the failure stands.
          if (sentAgainAfterReadBack) throw e;
          sentAgainAfterReadBack = true;
          earlier = e;
        }
      }
      const problem = checkObject(created, 'IPAddress', record.name, undefined, `${GROUP}/${this.apiVersion}`);
      if (problem !== undefined) throw malformed(problem);
      if (this.readYourWrites) this[INFORMER].appliedCreate(created as IPAddressObject, history);
      return toRecord(created as IPAddressObject);
    } catch (e) {
      throw orUnbound(e, this, 'create'); // on the allocation path: checked on failure only
    }
  }

  /**
   * The object of the name a create sent, read back from the API server after a send of it met
   * an object there (409) or lost its answer: `own`, the object, when it is the one a send of
   * that create stored — its managedFields name the create's own `manager`, it has the labels and
   * parentRef sent, and it is not being deleted; `other` when it is anything else (another
   * writer's object, for another Service or the same one; one without managedFields); neither
   * when there is none (404); `failed`, the read's error, when the read failed or its answer is
   * no IPAddress of that name.
   *
   * Why the manager and not the object's fields: two allocators (replicas) may create the same
   * address for the same Service at once, with the same labels and parentRef. Were the loser to
   * take the winner's object as its own, both would hold it, and the first release would delete
   * it while the other still hands the address out. Only this create's sends carry its manager
   * (createManager), and the object's own fields stay upstream's (labels, spec), which
   * kube-apiserver's repair loop and kubectl read.
   */
  private async readBack(this: KubernetesStore, sent: IPAddressObject, manager: string): Promise<ReadBack> {
    const found = await this.readObject(sent.metadata!.name!);
    if (found.failed !== undefined || found.obj === undefined) return found.failed === undefined ? {} : { failed: found.failed };
    return isOwnCreate(found.obj, sent, manager) ? { own: found.obj } : { other: true };
  }

  /**
   * The IPAddress `name` read from the API server after a write of it lost its answer: `obj` when
   * there is one, neither field when there is none (404), `failed`, the read's error, when the
   * read failed or its answer is no IPAddress of that name.
   */
  private async readObject(this: KubernetesStore, name: string): Promise<{ obj?: IPAddressObject; failed?: Error }> {
    this.assertOpen(); // closed meanwhile: ErrDestroyed, as for every call in flight
    let obj: unknown;
    try {
      obj = await requestJson(
        this[REQUESTS],
        { verb: 'get', resource: RESOURCE, name },
        (opts) => this.api.readIPAddress({ name }, opts),
        (what) => malformedAnswer('get', RESOURCE, name, what),
      );
    } catch (err) {
      this.assertOpen();
      const e = translate(err, 'get', RESOURCE, name, this[REQUESTS].server);
      return e.name === 'NotFoundError' ? {} : { failed: e };
    }
    const problem = checkObject(obj, 'IPAddress', name, undefined, `${GROUP}/${this.apiVersion}`);
    if (problem !== undefined) return { failed: malformedAnswer('get', RESOURCE, name, problem) };
    return { obj: obj as IPAddressObject };
  }

  /**
   * Deletes the IPAddress `name`; 404 → NotFoundError. Gone from the cache when this resolves
   * (read-your-writes) — unless a finalizer holds the object: the server then only marks it for
   * deletion, and it stays in the cache until the watch reports it gone. A delete whose answer was
   * lost, or that was answered 500, 502, 503 or 504 and not sent again, or that was sent again
   * naming the uid the cache holds (after a 5xx, or after a read-back) and met another object
   * there (409), reads the object back: gone, it resolves; another object (another uid) there, it resolves with
   * readYourWrites on (that object is someone else's, and is not deleted) and rejects saying so
   * with it off (the cache may lag behind this store's own create of that object, which is not
   * deleted either); the object of the uid the cache holds still there, it is sent once more
   * naming that uid. Without a uid known, an object there leaves the failure standing; a read-back that fails
   * rejects with a KubernetesApiError saying that whether the object was deleted is unknown.
   */
  delete(this: object, name: string): Promise<void>;
  async delete(this: KubernetesStore, name: string): Promise<void> {
    try {
      this.assertOpen();
      // "." and ".." (and "") cannot name an object; in a URL path they would be resolved away and
      // the DELETE would hit the collection (a deletecollection on a real API server).
      // A name that is not a string is refused as MemoryStore refuses it (not read: it may be a
      // revoked Proxy, whose String() throws).
      if (typeof name !== 'string') throw notAName(name, 'KubernetesStore.delete');
      if (!isPathSegmentName(name)) throw new NotFoundError(name);
      // The record this delete is meant for, as the cache holds it now: the one to drop when the
      // answer does not name the object it removed.
      const sent = this[INFORMER].get(name);
      const history = this[INFORMER].history;
      // A delete sent again after a 5xx (which may have taken effect) names the object it meant by
      // its uid: the name may belong to a new object by then — another owner's allocation, which a
      // plain delete would remove, freeing its address for a second owner. Without a uid known (the
      // cache does not hold the name) the 5xx answer is final.
      const uid = sent?.uid;
      // A 2xx that is neither a Status nor the object marked for deletion says nothing about what
      // was deleted: the cache is left to the watch.
      const malformed = (what: string) => malformedWriteAnswer('delete', RESOURCE, name, what, true);
      let outcome: DeleteOutcome;
      // whether the send answered now names `uid` as a precondition: sent again after a 5xx, or
      // after a read-back found the object it meant still there
      let sendIsResend = false;
      // the answers earlier sends were waited out on, in words, once a 5xx was among them
      let waitedOut: string | undefined;
      // the failure of the first send, when it was sent again after a read-back
      let earlier: Error | undefined;
      for (let sentAgainAfterReadBack = false; ; ) {
        try {
          const reply = await requestJson(
            this[REQUESTS],
            { verb: 'delete', resource: RESOURCE, name },
            (opts, serverErrorsWaitedOut) => {
              waitedOut = serverErrorsWaitedOut;
              sendIsResend = sentAgainAfterReadBack || serverErrorsWaitedOut !== undefined;
              return this.api.deleteIPAddress(sendIsResend ? { name, body: { preconditions: { uid: uid! } } } : { name }, opts);
            },
            malformed,
            undefined,
            { resendAfterServerError: uid !== undefined },
          );
          const problem = checkDeleteAnswer(reply, 'IPAddress', name, `${GROUP}/${this.apiVersion}`);
          if (problem !== undefined) throw malformed(problem);
          // An object a finalizer holds is only marked for deletion: it stays in the cache (as
          // upstream's lister keeps it, its address taken) until the watch reports it gone.
          outcome = deleteOutcome(reply);
          break;
        } catch (err) {
          let e = translate(err, 'delete', RESOURCE, name, this[REQUESTS].server);
          // A 409 to a send naming the uid: its precondition failed, another object of that name is
          // there (404 when there is none). Not one from a host a redirect took the request to,
          // which says nothing of this object.
          const conflict = sendIsResend && e instanceof KubernetesApiError && e.code === 409 && redirectedTo(err) === undefined;
          // Sent again and gone (404): the earlier send deleted it.
          if (sendIsResend && e.name === 'NotFoundError') {
            outcome = { finished: true, uid: uid! };
            break;
          }
          // Sent, and its answer lost (the connection dropped, the deadline passed) or a 5xx that
          // does not say it was left undone (mayHaveTakenEffect): read back. So is a 409 to a
          // send naming the uid — after a 5xx, or after a read-back that found the object meant
          // still there: the object meant is gone (deleted by an earlier send, or by another
          // client) and another has the name, which may be this store's own create when the
          // cache lags (readYourWrites off), or the uid the cache held may be stale; what is
          // there tells, as after a lost answer.
          if (conflict) e = conflictOnResend(name, e as KubernetesApiError, earlier, waitedOut);
          else if (!mayHaveTakenEffect(err)) throw e;
          const found = await this.readObject(name);
          if (found.failed !== undefined) throw outcomeUnknown(e, RESOURCE, found.failed);
          const there = found.obj?.metadata?.uid;
          // Gone: deleted.
          if (found.obj === undefined) {
            outcome = uid === undefined ? { finished: true } : { finished: true, uid };
            break;
          }
          // Another object of that name (another uid): the one meant is gone too, and this one is
          // not deleted. With readYourWrites on, the cache holds this store's own creates as they
          // resolve, so an older uid there means someone else made this object since — another
          // owner's allocation — and the caller's address is released. With it off, the cache
          // learns of this store's own creates from the watch only and may lag behind one: the
          // object there may be this store's, made since, and resolving would leave it behind.
          if (uid !== undefined && there !== uid) {
            if (!this.readYourWrites) throw anotherThere(e, uid, there);
            outcome = { finished: true, uid };
            break;
          }
          const deletionTimestamp = (found.obj.metadata as { deletionTimestamp?: unknown } | undefined)?.deletionTimestamp;
          const deleting = deletionTimestamp !== undefined && deletionTimestamp !== null;
          // Without the uid known, the object there cannot be told from one made since, which a
          // second delete would remove: the failure stands, saying what is there.
          if (uid === undefined) throw stillThere(e, there, deleting);
          // The one meant, marked for deletion: a finalizer holds it (as deleteOutcome).
          if (deleting) {
            outcome = { finished: false };
            break;
          }
          // The one meant, still there: the delete did not take (or not yet). Sent once more,
          // naming it by its uid; lost again and still there, the failure stands.
          if (sentAgainAfterReadBack) throw e;
          sentAgainAfterReadBack = true;
          earlier = e;
        }
      }
      if (this.readYourWrites && outcome.finished) this[INFORMER].appliedDelete(name, outcome.uid, sent, history);
    } catch (e) {
      throw orUnbound(e, this, 'delete');
    }
  }

  /**
   * Reads the IPAddress `name` from the API server (not the cache); undefined when it does not
   * exist. A name that is not a string is refused as MemoryStore refuses it, before any request.
   */
  get(this: object, name: string): Promise<IPAddressRecord | undefined>;
  async get(this: KubernetesStore, name: string): Promise<IPAddressRecord | undefined> {
    try {
      this.assertOpen();
      if (typeof name !== 'string') throw notAName(name, 'KubernetesStore.get');
      if (!isPathSegmentName(name)) return undefined; // would GET the collection (a list)
      const malformed = (what: string) => malformedAnswer('get', RESOURCE, name, what);
      try {
        const obj = await requestJson(
          this[REQUESTS],
          { verb: 'get', resource: RESOURCE, name },
          (opts) => this.api.readIPAddress({ name }, opts),
          malformed,
        );
        const problem = checkObject(obj, 'IPAddress', name, undefined, `${GROUP}/${this.apiVersion}`);
        if (problem !== undefined) throw malformed(problem);
        return toRecord(obj as IPAddressObject);
      } catch (err) {
        const e = translate(err, 'get', RESOURCE, name, this[REQUESTS].server);
        if (e.name === 'NotFoundError') return undefined;
        throw e;
      }
    } catch (e) {
      throw orUnbound(e, this, 'get');
    }
  }
}

/** What KubernetesStore.readBack found under a create's name. */
interface ReadBack {
  own?: IPAddressObject;
  other?: true;
  failed?: Error;
}

/**
 * The error of a create sent again — after a read-back that found nothing once `earlier` had
 * failed (its answer lost, or a 5xx), else after the answers `waitedOut` says (in words, a 5xx
 * among them) — that met an object of its name (409), which may be the one its earlier send
 * stored: `create ipaddresses.networking.k8s.io "10.96.0.10": fetch failed: …; sent again, it met
 * an object of that name (409 AlreadyExists)`, or `…: the server answered 500 once with a
 * Retry-After, waited out as it asked; sent again, it met …`; both when the send after the
 * read-back waited out a 5xx too (`fetch failed: …; sent again, the server answered 500 once …;
 * sent again, it met …`). Its cause is `earlier`.
 */
function metOnResend(name: string, earlier: Error | undefined, waitedOut: string | undefined): KubernetesApiError {
  const before =
    earlier === undefined
      ? afterWaits(waitedOut, 'create', name)
      : detailOf(earlier, 'create', RESOURCE, name) + (waitedOut === undefined ? '' : `; sent again, ${waitedOut}`);
  return new KubernetesApiError(
    'create',
    RESOURCE,
    name,
    409,
    undefined,
    `${before}; sent again, it met an object of that name (409 AlreadyExists)`,
    earlier,
  );
}

/**
 * `waitedOut`, ApiRequests.run's words for the answers waited out before a create or delete sent
 * again when no read-back came before that send (no `earlier` failure). It is always there: such a
 * send counts as a resend (sendIsResend) only when ApiRequests.run handed its call those words —
 * sendIsResend and waitedOut are both set by that call, from the same argument, and a 409 is
 * the answer to the send that call made. A read-back sets `earlier` before its resend. Undefined
 * here is a bug, and said so, where a made-up wording would hide it.
 */
function afterWaits(waitedOut: string | undefined, verb: 'create' | 'delete', name: string): string {
  if (waitedOut === undefined) {
    throw new Error(
      `KubernetesStore: ${verb} ${quoteInput(name)} was sent again with neither a read-back nor a 5xx waited out before it: a bug in ipallocator`,
    );
  }
  return waitedOut;
}

/**
 * The error of a delete sent again naming the uid it meant — after a read-back found that object
 * still there once `earlier` had failed (its answer lost, or a 5xx), else after the answers
 * `waitedOut` says (in words, a 5xx among them) — that met another object of its name
 * (`conflict`: 409, the uid precondition failed): `delete ipaddresses.networking.k8s.io
 * "10.96.0.10": the server answered 500 once with a Retry-After, waited out as it asked; sent again
 * naming the uid it meant, it met another object of that name (409 Conflict)`, or `…: fetch
 * failed: …; read back, the object it meant was still there; sent again naming …`; both when the
 * send after the read-back waited out a 5xx too (`…; read back, the object it meant was still
 * there; sent again, the server answered 500 once …; sent again naming …`). Its code and Status
 * are the 409's.
 */
function conflictOnResend(
  name: string,
  conflict: KubernetesApiError,
  earlier: Error | undefined,
  waitedOut: string | undefined,
): KubernetesApiError {
  const before =
    earlier === undefined
      ? afterWaits(waitedOut, 'delete', name)
      : `${detailOf(earlier, 'delete', RESOURCE, name)}; read back, the object it meant was still there` +
        (waitedOut === undefined ? '' : `; sent again, ${waitedOut}`);
  return new KubernetesApiError(
    'delete',
    RESOURCE,
    name,
    conflict.code,
    conflict.status,
    `${before}; sent again naming the uid it meant, it met another object of that name (409 Conflict)`,
    conflict,
  );
}

/**
 * The error of a delete that may have taken effect (`failure`: its answer lost, or a 5xx),
 * without the uid of the object it meant, when an object of that name was there when read back:
 * `failure`'s own message, then that it is there (its `uid`, when it has one; marked for deletion,
 * when `deleting`) and that it cannot be told for the one meant — so not deleted again, unless
 * it is being deleted already. Its fields and cause are `failure`'s.
 */
function stillThere(failure: Error, uid: string | undefined, deleting: boolean): Error {
  if (!(failure instanceof KubernetesApiError)) return failure;
  const said = [...(uid ? [`uid ${quoteInput(uid)}`] : []), ...(deleting ? ['marked for deletion'] : [])];
  const cannotTell = 'whether it is the one this delete was for cannot be told (the cache does not hold the name)';
  return withDetail(
    failure,
    RESOURCE,
    `read back, an object of that name is there${said.length === 0 ? '' : ` (${said.join(', ')})`}; ${cannotTell}` +
      (deleting ? '' : ', so it was not deleted again'),
  );
}

/**
 * The error of a delete that may have taken effect (`failure`) that found, read back, an object
 * of that name with another uid (`there`) than the one the cache holds (`meant`), in a store
 * without read-your-writes: `failure`'s own message, then `read back, an object of that name is
 * there with another uid ("…") than the one the cache holds ("…"); it was not deleted: with
 * readYourWrites off the cache may not yet hold this store's own create of it`. Its fields and
 * cause are `failure`'s.
 */
function anotherThere(failure: Error, meant: string, there: string | undefined): Error {
  if (!(failure instanceof KubernetesApiError)) return failure;
  return withDetail(
    failure,
    RESOURCE,
    `read back, an object of that name is there with another uid (${quoteInput(there ?? '')}) than the one the cache holds ` +
      `(${quoteInput(meant)}); it was not deleted: with readYourWrites off the cache may not yet hold this store's own create of it`,
  );
}

/**
 * A fieldManager of its own for one create: `ipallocator-` and the 32 hex digits of a random UUID
 * (within the 128 characters kube-apiserver takes). kube-apiserver keeps it as the manager of the object's
 * managedFields entry, which kubectl shows only with --show-managed-fields.
 */
function createManager(): string {
  return `ipallocator-${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * Whether `obj` is the object a create of `sent` with `manager` stored: a managedFields entry of
 * that manager, every label sent with its value, the parentRef sent field for field, and no
 * deletionTimestamp (an object being deleted is going away: no allocation can rest on it).
 */
function isOwnCreate(obj: IPAddressObject, sent: IPAddressObject, manager: string): boolean {
  const meta = obj.metadata as { managedFields?: unknown; deletionTimestamp?: unknown; labels?: Record<string, string> } | undefined;
  if (meta === undefined || (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null)) return false;
  const fields = meta.managedFields;
  if (!Array.isArray(fields) || !fields.some((f) => typeof f === 'object' && f !== null && f.manager === manager)) return false;
  const labels = meta.labels ?? {};
  for (const [k, v] of Object.entries(sent.metadata?.labels ?? {})) if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  const want = (sent.spec?.parentRef ?? {}) as Record<string, unknown>;
  const got = (obj.spec?.parentRef ?? {}) as Record<string, unknown>;
  const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
  for (const k of keys) if ((want[k] ?? '') !== (got[k] ?? '')) return false;
  return true;
}

/**
 * What create, delete and get reject with once they failed: unboundOr's answer (called without a
 * KubernetesStore: taken off it, or passed as a callback). They are on the allocation path, so
 * checked only on failure, as MemoryStore's are: a call on its store pays nothing for it.
 */
function orUnbound(error: unknown, self: unknown, method: string): unknown {
  return unboundOr(error, self, KubernetesStore, 'KubernetesStore', method);
}
