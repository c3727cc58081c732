// The command line's view of a cluster: a kubeconfig context, and complete, paged listings of
// ServiceCIDRs, IPAddresses and Services as plain records. Only this file (and what it imports
// from adapters/kubernetes/) loads @kubernetes/client-node; main.ts imports it lazily, so `map
// --snapshot` runs without the peer dependency.
//
// Listings page with limit/continue (500 per page, client-go's pager default) through the
// library's pager (adapters/kubernetes/pager.ts) and report progress after each page. A continue
// token that expired (410) restarts the listing once, as one list without paging. networking.k8s.io is asked at v1 first and at v1beta1 when v1 is not served
// (Kubernetes 1.31–1.32).
//
// Every request has a deadline (requestTimeoutMs, default 30 s, as the library's; see
// adapters/kubernetes/requests.ts): a server that accepts the connection and never answers ends
// the command with a CliError instead of holding it for ever.
//
// Failures become CliErrors that say what to do: the server could not be reached (a network
// error: where it is), did not answer in time (or kept throttling the request, 429, until then),
// answered with a body that cannot be read or is not what was asked for (a proxy's login page, `{}`, a
// list item without a name, a Service without a namespace: see answers.ts and namespacedList), the
// request was never sent (client-node refused the kubeconfig, e.g. http:// without
// insecure-skip-tls-verify), the credentials were refused (401),
// or the identity lacks a permission (403: the verb and the resource). Which of the last three
// failures without an HTTP status it was, a probe middleware on each request tells. Messages never
// carry request or response headers, nor tokens; a server URL carrying credentials, a query or a
// fragment is refused before any request (config.ts serverURLProblem), and never quoted whole.
import { MAX_ANSWER_BODY_BYTES } from '../adapters/kubernetes/answer-body.ts';
import { answerProbe, notTheApiServersAnswer } from '../adapters/kubernetes/answer-probe.ts';
import {
  type ConfigurationOptions,
  CoreV1Api,
  KubeConfig,
  loadAllYaml,
  loadYaml,
  NetworkingV1Api,
  NetworkingV1beta1Api,
  Observable,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { ErrDestroyed, NotFoundError } from '../adapters/errors.ts';
import { quoteText } from '../adapters/quote.ts';
import {
  defaultKubeconfigFiles,
  isClientNodeFallback,
  KubeconfigNotReadError,
  kubeConfigAsSent,
  kubeconfigLoadFailure,
  kubeconfigNamed,
  loadDefaultKubeconfig,
  loadGivenKubeconfig,
  readKubeconfigFile,
  serverURLProblem,
  shownServer,
  unsetKubeconfigVariable,
} from '../adapters/kubernetes/config.ts';
import { setAsideInUse } from '../adapters/kubernetes/kubeconfig-shape.ts';
import { goesToPlainHttp } from '../adapters/kubernetes/plain-http.ts';
import {
  answeredBy,
  blockedPort,
  blockedPortWhy,
  blockedRedirectWhy,
  causeChain,
  deniedByRuntime,
  describeAnswer,
  execOutputProblem,
  execPluginFailure,
  hasInvalidHeader,
  KubernetesApiError,
  messages,
  redirectedTo,
  redirectLocation,
  redirectedToBlockedPort,
  terminalEchoLeftOut,
  translate,
} from '../adapters/kubernetes/errors.ts';
import {
  ApiRequests,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type Redirected,
  type RequestTarget,
  requestNotSent,
} from '../adapters/kubernetes/requests.ts';
import { execPluginCommand, execPluginUser } from '../adapters/kubernetes/exec-plugins.ts';
import { insecureWithCA, tlsFileProblem, transportProblem } from '../adapters/kubernetes/tls-material.ts';
import { KubeconfigCredentialError, missingUser, userProblem } from '../adapters/kubernetes/user-checks.ts';
import { checkDeleteAnswer, checkList, checkObject, isJson } from '../adapters/kubernetes/answers.ts';
import { cutMessage, describeText } from '../adapters/kubernetes/bodies.ts';
import { deleteOutcome, GROUP, isPathSegmentName, type IPAddressObject } from '../adapters/kubernetes/objects.ts';
import { listPages } from '../adapters/kubernetes/pager.ts';
import { closeReusedConnections } from '../adapters/kubernetes/reused-connections.ts';
import { CliError, ClusterError, ListForbiddenError, ObjectForbiddenError, unreadableFile } from './errors.ts';
import {
  type ListedIPAddress,
  type ListedServiceCIDR,
  namespaceProblem,
  type ServiceRecord,
  toListed,
  toListedServiceCIDR,
  toService,
} from './listing.ts';
import { counted, formatCount, markedForDeletion } from './text.ts';

/** Objects per list request. */
export const PAGE_SIZE = 500;

/**
 * The longest names the API server accepts: an object's metadata.name (a DNS subdomain, as an
 * IPAddress's), and a Service's or a namespace's (a DNS label, RFC 1035 and RFC 1123). A get or
 * delete carries the name in its URL, and one past these limits names no object there can be:
 * a request for it is not sent (100,000 characters fill the request line past what servers and
 * proxies take: 431, 414).
 */
const MAX_NAME = 253;
const MAX_LABEL = 63;

export interface ClusterOptions {
  /** A kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then the in-cluster config. */
  kubeconfig?: string | undefined;
  /** A context of the kubeconfig; default its current-context. */
  context?: string | undefined;
  /** How long one request may wait for its answer, in ms; Infinity for ever. Default 30 000. */
  requestTimeoutMs?: number | undefined;
  /** Called after every page: the resource, objects so far, and the server's estimate of the rest. */
  onProgress?: ((resource: string, listed: number, remaining: number | undefined) => void) | undefined;
}

/** One API resource, for messages: its plural and group ("" = core). */
interface ResourceRef {
  plural: string;
  group: string;
  /** The kind of its objects (its list's kind adds "List"). */
  kind: string;
  /** Its objects live in a namespace (a Service): each must name one. */
  namespaced?: true;
}

/**
 * A checked list page of a namespaced resource whose every item names its namespace, else why
 * not: an item without one is malformed (listing.ts namespaceProblem), as an item without a name is.
 */
function namespacedList<L extends { items: unknown[] }>(list: L | string, resource: ResourceRef): L | string {
  if (typeof list === 'string' || resource.namespaced !== true) return list;
  const i = list.items.findIndex((item) => namespaceProblem(item) !== undefined);
  return i < 0 ? list : `a ${resource.kind}List whose item ${i} is ${namespaceProblem(list.items[i])}`;
}

const IPADDRESSES: ResourceRef = { plural: 'ipaddresses', group: 'networking.k8s.io', kind: 'IPAddress' };
const SERVICECIDRS: ResourceRef = { plural: 'servicecidrs', group: 'networking.k8s.io', kind: 'ServiceCIDR' };
const SERVICES: ResourceRef = { plural: 'services', group: '', kind: 'Service', namespaced: true };

interface Page {
  items?: unknown[];
  metadata?: { _continue?: string; continue?: string; remainingItemCount?: number };
}

type NetworkingApi = {
  listIPAddress(p: { limit?: number; _continue?: string }, o: ConfigurationOptions): Promise<Page>;
  listServiceCIDR(p: { limit?: number; _continue?: string }, o: ConfigurationOptions): Promise<Page>;
  readIPAddress(p: { name: string }, o: ConfigurationOptions): Promise<IPAddressObject>;
  deleteIPAddress(p: { name: string; body?: unknown }, o: ConfigurationOptions): Promise<unknown>;
};

/** The kubeconfig's context names, quoted, for a message (at most ten). */
function contextNames(kc: KubeConfig): string {
  const names = kc.getContexts().map((c) => quoteText(c.name));
  if (names.length === 0) return 'none';
  return names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${formatCount(names.length - 10)} more` : names.join(', ');
}

/** Why the selected context leads to no server: what the kubeconfig is missing. */
function noCluster(kc: KubeConfig, file: string): string {
  const current = kc.getCurrentContext();
  if (!current) return `${file} names no current-context: choose one with --context (contexts: ${contextNames(kc)})`;
  // a context without a cluster, or whose cluster has no server, set aside as it was loaded
  const setAside = setAsideInUse(kc, current);
  if (setAside !== undefined) return `${setAside} in ${file}: complete it, or choose another context with --context`;
  const context = kc.getContextObject(current);
  if (context === null) {
    return `the current-context ${quoteText(current)} is not in ${file}: choose one with --context (contexts: ${contextNames(kc)})`;
  }
  const cluster = kc.getCluster(context.cluster);
  if (cluster === null)
    return `context ${quoteText(current)} names the cluster ${quoteText(String(context.cluster))}, which is not in ${file}`;
  return `the cluster ${quoteText(cluster.name)} of context ${quoteText(current)} has no server in ${file}`;
}

/** A file a kubeconfig is read from, and how the command line came to it, for a message. */
export interface KubeconfigFile {
  readonly path: string;
  /** `--kubeconfig "k"`, `$KUBECONFIG names "/x/k"`, or `~/.kube/config`: a path quoted (quoteText). */
  readonly said: string;
}

/**
 * The files a kubeconfig is read from: the one given, else the default ones, found by the one
 * loader's rule (config.ts defaultKubeconfigFiles): each of $KUBECONFIG, else ~/.kube/config.
 */
export function kubeconfigFiles(given: string | undefined): KubeconfigFile[] {
  if (given !== undefined) return [{ path: given, said: `--kubeconfig ${quoteText(given)}` }];
  const { files, list } = defaultKubeconfigFiles();
  return files.map((path) => ({ path, said: list === undefined ? '~/.kube/config' : `$KUBECONFIG names ${quoteText(path)}` }));
}

/**
 * What a kubeconfig file's text holds when it is no kubeconfig — no YAML document, or one that is
 * no mapping: a scalar (`hello`, `null`, `0`) or a list —, said for a message; undefined when it
 * is a mapping, or cannot be parsed here. What it is, never what it says: the file may be a
 * token or a key given by mistake.
 *
 * The parse is client-node's (loadYaml, with loadAllYaml where that refuses): a document that is
 * null, false, 0, "" or NaN makes loadYaml throw a bare Error, while the KubeConfig reads false,
 * 0 and "" as a kubeconfig holding nothing and fails on null, as on a file without a document,
 * with a message about neither (a TypeError on `clusters`, "expected a document").
 */
function notAKubeconfig(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (e) {
    if (e instanceof Error && e.name === 'YAMLException') {
      // malformed, several documents, or (js-yaml 5) none: only the last is said here
      let documents: number | undefined;
      try {
        documents = loadAllYaml(text).length;
      } catch {}
      return documents === 0 ? NO_DOCUMENT : undefined;
    }
    // one document, and a falsy one: loadAllYaml hands it back as it is, except null (and
    // js-yaml 4's undefined for a file without a document), whose apiVersion it fails to read
    try {
      [doc] = loadAllYaml(text);
    } catch {
      doc = null;
    }
  }
  // js-yaml 4 (client-node 1.x) reads a file of only whitespace and comments as a null document,
  // js-yaml 5 (2.x) as none: said alike whichever is installed. A null that parsed from text
  // with anything else on a line (`null`, `~`, `---`) is a document.
  if (doc === undefined || (doc === null && text.split('\n').every(isBlankOrComment))) return NO_DOCUMENT;
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) return undefined;
  const what = Array.isArray(doc)
    ? 'a list'
    : doc === null
      ? 'null'
      : `a single ${typeof doc === 'string' ? `string (${counted(doc.length, 'character')})` : typeof doc}`;
  return `its YAML is ${what}, not a mapping of clusters, contexts, users and current-context`;
}

const NO_DOCUMENT = 'it holds no YAML document (it is empty, or only whitespace and comments)';

/** A line of YAML that holds nothing: blank, or a comment. */
function isBlankOrComment(line: string): boolean {
  const rest = line.trimStart();
  return rest === '' || rest.startsWith('#');
}

/** The text of the --kubeconfig file (readKubeconfigFile); one that cannot be opened is said as unreadableFile says it. */
function readGivenKubeconfig(path: string): string {
  try {
    return readKubeconfigFile(path);
  } catch (e) {
    if (e instanceof KubeconfigNotReadError) throw e;
    throw unreadableFile('--kubeconfig', path, e);
  }
}

/**
 * The first of the kubeconfig files (kubeconfigFiles) that is no kubeconfig (notAKubeconfig), as
 * a CliError. The file given is judged by the text read from it (`givenText`); one of the default
 * files is read again (readKubeconfigFile reads only a regular file).
 */
function firstNotAKubeconfig(given: string | undefined, givenText: string | undefined): CliError | undefined {
  for (const { path: f } of kubeconfigFiles(given)) {
    let text = given === undefined ? undefined : givenText;
    if (text === undefined) {
      try {
        text = readKubeconfigFile(f);
      } catch {
        // the load's own error says why (ENOENT, not a regular file)
      }
    }
    const not = text === undefined ? undefined : notAKubeconfig(text);
    if (not !== undefined) return new CliError(`${quoteText(f)} is not a kubeconfig: ${not}`);
  }
  return undefined;
}

export class Cluster {
  readonly context: string;
  readonly server: string;
  /** The files the kubeconfig was read from (a command that writes a file must not write over one). */
  readonly kubeconfigFiles: readonly KubeconfigFile[];
  private readonly kc: KubeConfig;
  private readonly core: CoreV1Api;
  private networking: NetworkingApi;
  private networkingVersion: 'v1' | 'v1beta1' = 'v1';
  private readonly onProgress: ClusterOptions['onProgress'];
  private readonly requests: ApiRequests;
  /** The kubeconfig as messages name it (kubeconfigNamed): `the kubeconfig "/path"`. */
  private readonly file: string;

  /** Loads the kubeconfig and selects the context. Throws CliError when there is none to use. */
  constructor(options: ClusterOptions = {}) {
    const kc = new KubeConfig();
    this.kubeconfigFiles = kubeconfigFiles(options.kubeconfig);
    let givenText: string | undefined;
    try {
      if (options.kubeconfig !== undefined) {
        // loadFromFile, with the file read once, and only a regular file (readKubeconfigFile); a
        // file that names no cluster to use gives way to a pod's service account, as with kubectl
        givenText = readGivenKubeconfig(options.kubeconfig);
        loadGivenKubeconfig(kc, givenText, options.kubeconfig, '', options.context);
      } else loadDefaultKubeconfig(kc, '', options.context);
    } catch (e) {
      if (e instanceof CliError) throw e;
      if (e instanceof KubeconfigNotReadError) throw new CliError(`${quoteText(e.path)} is not a kubeconfig: ${e.reason}`);
      // KUBECONFIG=":" names no file, and kubectl reads none (nor ~/.kube/config): no kubeconfig at all
      if (options.kubeconfig === undefined && this.kubeconfigFiles.length === 0) {
        throw new CliError(`found no kubeconfig: ${kubeconfigLoadFailure(e)}; pass --kubeconfig FILE`);
      }
      // a file without a document, or whose document is null, fails in client-node's load
      throw (
        firstNotAKubeconfig(options.kubeconfig, givenText) ??
        new CliError(
          `cannot read ${options.kubeconfig === undefined ? 'the default kubeconfig ($KUBECONFIG or ~/.kube/config)' : quoteText(options.kubeconfig)}: ${kubeconfigLoadFailure(e)}`,
        )
      );
    }
    if (options.kubeconfig === undefined && isClientNodeFallback(kc)) {
      throw new CliError(
        `found no kubeconfig: ${unsetKubeconfigVariable()}, ~/.kube/config does not exist, and this is not a pod with a service account; pass --kubeconfig FILE`,
      );
    }
    // client-node reads a file whose YAML is no mapping ("hello", 0, a list) as a kubeconfig
    // holding nothing, which then names no current-context nor the --context asked for: say what it is
    if (kc.getContexts().length === 0 && kc.getClusters().length === 0 && !kc.getCurrentContext()) {
      const not = firstNotAKubeconfig(options.kubeconfig, givenText);
      if (not !== undefined) throw not;
    }
    const file = kubeconfigNamed(options.kubeconfig, kc);
    this.file = file;
    if (options.context !== undefined) {
      const setAside = setAsideInUse(kc, options.context);
      if (setAside !== undefined) throw new CliError(`${setAside} in ${file}: complete it, or choose another context`);
      if (kc.getContextObject(options.context) === null) {
        // the command line is right; the kubeconfig lacks the context: no pointer to --help
        throw new CliError(`context ${quoteText(options.context)} is not in ${file} (contexts: ${contextNames(kc)})`);
      }
      kc.setCurrentContext(options.context);
    }
    const cluster = kc.getCurrentCluster();
    if (cluster === null || !cluster.server) throw new CliError(noCluster(kc, file));
    // refused before client-node sees it: its fetch quotes a URL with a password whole
    const problem = serverURLProblem(cluster.server);
    if (problem !== undefined) {
      throw new CliError(
        `cannot use context ${quoteText(kc.getCurrentContext())} of ${file}: the server URL of cluster ${quoteText(cluster.name)} (${shownServer(cluster.server)}) ${problem}`,
      );
    }
    const insecure = insecureWithCA(cluster);
    if (insecure !== undefined) {
      throw new CliError(
        `cannot use context ${quoteText(kc.getCurrentContext())} of ${file}: the cluster ${quoteText(cluster.name)} ${insecure}`,
      );
    }
    const tlsFile = tlsFileProblem(kc);
    if (tlsFile !== undefined) throw new CliError(`cannot use context ${quoteText(kc.getCurrentContext())} of ${file}: ${tlsFile}`);
    // as kubectl does, and the library (kubeConfigOrDefault): no request goes out anonymous
    const noUser = missingUser(kc);
    if (noUser !== undefined) throw new CliError(`cannot use context ${quoteText(kc.getCurrentContext())} of ${file}: ${noUser}`);
    const badUser = userProblem(kc);
    if (badUser !== undefined) throw new CliError(`cannot use context ${quoteText(kc.getCurrentContext())} of ${file}: ${badUser}`);
    // the context as it is now, its server's scheme in lower case as kubectl reads it, the proxy of
    // the environment (HTTPS_PROXY …) for a cluster without a proxy-url, connections
    // shared by the requests, the impersonation client-node drops (as-uid, as-groups,
    // as-user-extra), and a request its exec credential plugin gave nothing for is not sent anonymous
    this.kc = kubeConfigAsSent(kc);
    // text: a name YAML reads as a number (`current-context: 7`) was refused as the kubeconfig was read
    this.context = kc.getCurrentContext();
    this.server = shownServer(cluster.server);
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.networking = this.kc.makeApiClient(NetworkingV1Api) as unknown as NetworkingApi;
    this.onProgress = options.onProgress;
    this.requests = new ApiRequests(this.server, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, kc);
  }
  /**
   * Closes the connections this cluster's requests opened (they are kept for the next request):
   * a command run in-process (run(), the tests) leaves none open behind it, and opens none after.
   */
  close(): void {
    closeReusedConnections(this.kc, () => new ErrDestroyed(`the connection to ${this.server}`));
  }

  /** Every ServiceCIDR, as the MetaAllocator reads them, with what its Ready condition says. */
  async serviceCIDRs(): Promise<ListedServiceCIDR[]> {
    return this.listNetworking(SERVICECIDRS, (api, p, o) => api.listServiceCIDR(p, o), toListedServiceCIDR);
  }

  /** Every IPAddress object, as the store reads them, with its deletion when started. */
  async ipAddresses(): Promise<ListedIPAddress[]> {
    return this.listNetworking(IPADDRESSES, (api, p, o) => api.listIPAddress(p, o), toListed);
  }

  /** Every Service of every namespace. */
  async services(): Promise<ServiceRecord[]> {
    return this.listAll(SERVICES, 'v1', (p, o) => this.core.listServiceForAllNamespaces(p, o) as Promise<Page>, toService);
  }

  /**
   * One IPAddress, or undefined when it does not exist. A name longer than the API server allows
   * (the listing was malformed: no such object can exist) is refused with a CliError, unsent.
   * Read only for a name the listing (ipAddresses, in the same API version) gave: any 404 Status
   * is the object's (isGone).
   */
  async readIPAddress(name: string): Promise<ListedIPAddress | undefined> {
    refuseImpossibleName('get', name);
    try {
      const target: RequestTarget = { verb: 'get', resource: qualified(IPADDRESSES), name };
      const [api, version] = [this.networking, `${GROUP}/${this.networkingVersion}`];
      const obj = await this.request(
        target,
        (o) => api.readIPAddress({ name }, o),
        (answer) => checkObject(answer, IPADDRESSES.kind, name, undefined, version) ?? answer,
      );
      return toListed(obj);
    } catch (e) {
      if (e instanceof CliError) throw e; // already says what went wrong
      if (isGone(e)) return undefined;
      throw this.explain(e, 'get', IPADDRESSES, name);
    }
  }

  /**
   * One Service, or undefined when it does not exist — unasked when its name or namespace is
   * longer than the API server allows for them (an IPAddress's parentRef may name one: the API
   * server checks only that its name and namespace are path segments), or is no path segment at
   * all ("", ".", "..": a listing that names one is malformed, and the URL would name something
   * else), since no such Service can exist.
   */
  async readService(namespace: string, name: string): Promise<ServiceRecord | undefined> {
    if (name.length > MAX_LABEL || namespace.length > MAX_LABEL) return undefined;
    if (!isPathSegmentName(name) || !isPathSegmentName(namespace)) return undefined;
    try {
      const target: RequestTarget = { verb: 'get', resource: qualified(SERVICES), name: `${namespace}/${name}` };
      const obj = await this.request(
        target,
        (o) => this.core.readNamespacedService({ namespace, name }, o),
        (answer) => checkObject(answer, SERVICES.kind, name, namespace, 'v1') ?? answer,
      );
      return toService(obj);
    } catch (e) {
      if (e instanceof CliError) throw e; // already says what went wrong
      if (isNotFound(e)) return undefined;
      throw this.explain(e, 'get', SERVICES, `${namespace}/${name}`);
    }
  }

  /**
   * Deletes an IPAddress if it is still the object that was examined (a uid precondition: the
   * server refuses with 409 Conflict when the name now belongs to a new object): 'deleted',
   * 'gone' when there is none, 'changed' when the precondition failed, or `{ kept }` saying why
   * the object is still there.
   *
   * A finished delete answers a Status. kube-apiserver answers with the object itself when it only
   * marked it for deletion (finalizers hold it); the object is read again to say what holds it
   * now. Any other answer (checkDeleteAnswer) is malformed (a CliError: something else answered,
   * and nothing is known to be deleted). A delete whose connection was lost after it was sent
   * may have been carried out: the object is read again to know; when that read fails too, the
   * error thrown says the delete may have happened or not, of the read's kind (a ClusterError
   * when it got no answer either).
   */
  async deleteIPAddress(name: string, uid: string | undefined): Promise<'deleted' | 'gone' | 'changed' | { kept: string }> {
    refuseImpossibleName('delete', name);
    let reply: unknown;
    try {
      const body = uid === undefined ? undefined : { preconditions: { uid } };
      const target: RequestTarget = { verb: 'delete', resource: qualified(IPADDRESSES), name };
      const [api, version] = [this.networking, `${GROUP}/${this.networkingVersion}`];
      reply = await this.request(
        target,
        (o) => api.deleteIPAddress({ name, body }, o),
        // a Status (deleted), or the object marked for deletion (held by a finalizer)
        (answer) => checkDeleteAnswer(answer, IPADDRESSES.kind, name, version) ?? (answer as object),
        // without the uid a resent delete could remove another owner's new object: a 5xx is the answer
        uid !== undefined,
      );
    } catch (e) {
      if (e instanceof CliError) throw e; // already says what went wrong
      if (isGone(e)) return 'gone';
      if (uid !== undefined && apiServerStatus(e) === 409) return 'changed';
      const explained = this.explain(e, 'delete', IPADDRESSES, name);
      // a failure of the TLS material or on the way to the proxy: explain says it was not sent
      if (!connectionLostAfterSending(e) || transportProblem(this.kc, e) !== undefined) throw explained;
      return this.afterDelete(name, uid, { lost: explained });
    }
    if (deleteOutcome(reply).finished) return 'deleted';
    return this.afterDelete(name, uid, undefined);
  }

  /**
   * What a delete left, read from the object again: 'deleted' when it is gone or the name holds
   * another object, else `{ kept }` saying what holds it. `lost`: the delete's connection was lost
   * (its error), so the delete may not have reached the server; otherwise the server answered it
   * with the object (marked for deletion).
   */
  private async afterDelete(
    name: string,
    uid: string | undefined,
    lost: { lost: ClusterError } | undefined,
  ): Promise<'deleted' | { kept: string }> {
    let left: { metadata?: { uid?: unknown; finalizers?: unknown; deletionTimestamp?: unknown } };
    try {
      const target: RequestTarget = { verb: 'get', resource: qualified(IPADDRESSES), name };
      const [api, version] = [this.networking, `${GROUP}/${this.networkingVersion}`];
      left = await this.request(
        target,
        (o) => api.readIPAddress({ name }, o),
        (answer) => checkObject(answer, IPADDRESSES.kind, name, undefined, version) ?? answer,
      );
    } catch (e) {
      if (e instanceof CliError && lost === undefined) throw e;
      if (!(e instanceof CliError) && isGone(e)) return 'deleted';
      const failed = e instanceof CliError ? e : this.explain(e, 'get', IPADDRESSES, name);
      if (lost === undefined)
        return { kept: `the server answered the delete with the object, and reading it again failed: ${failed.message}` };
      // the outcome of the delete is unknown, whatever the read met; which error says so is the
      // read's kind: no answer again (a ClusterError) stops --fix, a 403 on it counts as refused
      const message = `${lost.lost.message}, and reading it again failed too (${failed.message}); ${DELETE_OUTCOME_UNKNOWN}`;
      if (failed instanceof ClusterError) throw new ClusterError(message);
      if (failed instanceof ObjectForbiddenError) throw new ObjectForbiddenError(message);
      throw new CliError(message);
    }
    const leftUid = left.metadata?.uid;
    if (uid !== undefined && typeof leftUid === 'string' && leftUid !== '' && leftUid !== uid) return 'deleted'; // ours is gone; the name holds a new object
    const finalizers = Array.isArray(left.metadata?.finalizers) ? (left.metadata.finalizers as unknown[]) : [];
    if (left.metadata?.deletionTimestamp) return { kept: markedForDeletion(finalizers) };
    if (lost !== undefined) return { kept: `${lost.lost.message}; read again, the object is still there` };
    return { kept: 'the server answered the delete with the object, which is still there, not marked for deletion' };
  }

  /**
   * One request through ApiRequests (its deadline, and 429s — or 5xx with Retry-After — waited
   * out). When the deadline passes after the server asked the request to wait, the timeout error
   * is remembered with the status of each answer waited out, for explain().
   */
  private async request<T, R extends object>(
    target: RequestTarget,
    call: (o: ConfigurationOptions) => Promise<T>,
    read: (answer: T) => R | string,
    resendAfterServerError = true,
  ): Promise<R> {
    const waited: number[] = [];
    // How far the last attempt got: client-node builds the request (kubeconfig, credentials)
    // before its middleware runs, and runs `post` only on an answer.
    let phase: Phase = 'unsent';
    // the HTTP status of the last attempt's answer once it began (its body still to come)
    let began: number | undefined;
    const probe = answerProbe();
    const sent: ObservableMiddleware = {
      pre(context) {
        phase = 'sent';
        return new Observable(Promise.resolve(context));
      },
      post: (context) => {
        began = context.httpStatusCode;
        return new Observable(Promise.resolve(context));
      },
    };
    let answer: T;
    let redirected: Redirected | undefined;
    try {
      answer = await this.requests.run(
        target,
        (o) => {
          phase = 'unsent';
          began = undefined;
          probe.reset();
          // client-node runs `post` in reverse order: the probe, first here, reads the body last,
          // after requests.ts's middleware has let the fetch end it on a lost connection (Deno)
          return call({ ...o, middleware: [probe.middleware, ...(o.middleware ?? []), sent], middlewareMergeStrategy: 'append' });
        },
        (answer) => waited.push(answer.code ?? 0),
        { resendAfterServerError, onRedirect: (redirect) => (redirected = redirect) },
      );
    } catch (e) {
      if (waited.length > 0 && e instanceof KubernetesApiError && e.timeoutMs !== undefined) waitedAnswers.set(e, waited);
      if (began !== undefined && e instanceof KubernetesApiError && e.timeoutMs !== undefined) unfinishedAnswers.set(e, began);
      if (typeof e === 'object' && e !== null) phases.set(e, probe.answered ? 'answered' : phase);
      throw e;
    }
    // A 200 whose body is not what was asked for (a proxy's login page, `{}`, a Status) is no
    // answer to read: taken as an empty list it would make every IPAddress an orphan.
    // client-node hands back text that is not JSON as it is, or as an empty typed object: the
    // content type says which it was.
    // The answer is read from the JSON the probe parsed (answer-probe.ts), never from client-node's
    // typed decoding of it, which reads a field of the wrong type as if it were right.
    const contentType = probe.contentType;
    // JSON cut short (probe.notJson) is no JSON either: said with its content type
    const json = !probe.notJson && (contentType === undefined || isJson(contentType));
    if (probe.json !== undefined) answer = probe.json.value as T;
    const checked = json ? read(answer) : typeof answer === 'string' ? describeText(answer) : 'not JSON';
    const what = target.name === undefined ? target.resource : `${target.resource} "${target.name}"`;
    if (typeof checked === 'string') {
      const type = json ? '' : ` (content type ${contentType})`;
      throw new ClusterError(
        `${answeredBy(redirected?.origin, `${this.server} (context ${quoteText(this.context)})`)}${redirected?.origin === undefined ? '' : ','} answered ${target.verb} ${what} with a malformed body${type}: ${checked}`,
      );
    }
    if (redirected !== undefined) {
      throw new ClusterError(
        `the API server at ${this.server} (context ${quoteText(this.context)}) answered ${target.verb} ${what} with ${notTheApiServersAnswer(redirected, target.verb)}`,
      );
    }
    return checked;
  }

  /** A networking.k8s.io listing, falling back to v1beta1 when v1 is not served. */
  private async listNetworking<T>(
    resource: ResourceRef,
    call: (api: NetworkingApi, p: { limit?: number; _continue?: string }, o: ConfigurationOptions) => Promise<Page>,
    convert: (item: unknown) => T,
  ): Promise<T[]> {
    // the client and its version taken together: a list is checked against the version it asked for
    const api = this.networking;
    try {
      return await this.listAll(resource, `${GROUP}/${this.networkingVersion}`, (p, o) => call(api, p, o), convert, true);
    } catch (e) {
      if (!(e instanceof ResourceNotServed) || this.networkingVersion === 'v1beta1') {
        throw e instanceof ResourceNotServed
          ? new CliError(
              `the API server at ${this.server} serves no ${resource.plural}.${resource.group} (v1 or v1beta1): ServiceCIDRs and IPAddresses need Kubernetes 1.31 or later with the MultiCIDRServiceAllocator feature, or 1.33 or later`,
            )
          : e;
      }
      this.networkingVersion = 'v1beta1';
      this.networking = this.kc.makeApiClient(NetworkingV1beta1Api) as unknown as NetworkingApi;
      return this.listNetworking(resource, call, convert);
    }
  }

  /**
   * A complete listing through the pager (adapters/kubernetes/pager.ts): an expired continue
   * token restarts it once, without paging. With `mayBeUnserved`, a 404 before any page throws
   * ResourceNotServed (the caller tries another version). Each page must be a list in
   * `apiVersion`, the version it was asked in ("v1" for Services; a generic List is metav1's "v1").
   * Each page's items are `convert`ed as the page comes: a listing holds the records the commands
   * read, not every object as the server sent it (a Service's annotations and managedFields are
   * kilobytes: at 10^5 Services the whole objects took most of the command's memory).
   */
  private async listAll<T>(
    resource: ResourceRef,
    apiVersion: string,
    fetchPage: (p: { limit?: number; _continue?: string }, o: ConfigurationOptions) => Promise<Page>,
    convert: (item: unknown) => T,
    mayBeUnserved = false,
  ): Promise<T[]> {
    const target: RequestTarget = { verb: 'list', resource: qualified(resource) };
    let pages = 0; // pages answered
    try {
      const listing = await listPages(
        async (request) => {
          const p = {
            ...(request.limit !== undefined ? { limit: request.limit } : {}),
            ...(request.continue !== undefined ? { _continue: request.continue } : {}),
          };
          const page = await this.request(
            target,
            (o) => fetchPage(p, o),
            (answer) => namespacedList(checkList(answer, `${resource.kind}List`, apiVersion), resource),
          );
          pages++;
          return { ...page, items: page.items.map(convert) };
        },
        {
          pageSize: PAGE_SIZE,
          onPage: (listed, remaining) => this.onProgress?.(resource.plural, listed, remaining),
          fail: (reason) => new CliError(`list ${target.resource}: ${reason}`),
        },
      );
      return listing.items as T[];
    } catch (e) {
      if (e instanceof CliError) throw e; // already says what went wrong
      if (mayBeUnserved && apiServerStatus(e) === 404 && pages === 0) throw new ResourceNotServed();
      throw this.explain(e, 'list', resource);
    }
  }

  /** A request the kubeconfig kept from going out: said with the context and the kubeconfig to correct. */
  private notSent(why: string): ClusterError {
    return new ClusterError(`cannot use context ${quoteText(this.context)} of ${this.file}: ${requestNotSent(this.server, why)}`);
  }

  /**
   * A client-node failure as a CliError that says what went wrong and what is missing: a
   * ClusterError when every further request would fail too (no answer, 401, 403).
   */
  private explain(err: unknown, verb: 'list' | 'get' | 'delete', resource: ResourceRef, name?: string): CliError {
    const explained = this.explained(err, verb, resource, name);
    // an exec plugin's line on stderr already shown on the terminal this error goes to: not twice
    explained.message = terminalEchoLeftOut(explained.message);
    return explained;
  }

  private explained(err: unknown, verb: 'list' | 'get' | 'delete', resource: ResourceRef, name?: string): CliError {
    const apiError = translate(err, verb, qualified(resource), name);
    const code = apiError instanceof KubernetesApiError ? apiError.code : httpStatus(err);
    // the Status's message cut as the library cuts it in KubernetesApiError's message
    const serverSaid = apiError instanceof KubernetesApiError && apiError.status?.message ? cutMessage(apiError.status.message) : undefined;
    const target = name === undefined ? qualified(resource) : `${qualified(resource)} "${cutMessage(name)}"`;
    // after a redirect to another host, that host: it is the one that failed or answered
    const where = answeredBy(redirectedTo(err), `${this.server} (context ${quoteText(this.context)})`);
    // the same as the subject of a sentence going on (a comma closes the clause of a redirect)
    const subject = redirectedTo(err) === undefined ? where : `${where},`;
    if (apiError instanceof KubernetesApiError && apiError.resends !== undefined) {
      // the server asked for a wait as often as kubectl waits: given up, the last answer quoted
      const busy = code === 429 ? ' it is overloaded:' : '';
      return new ClusterError(`${subject} kept asking to come back later: ${apiError.message};${busy} try again later`);
    }
    if (apiError instanceof KubernetesApiError && apiError.timeoutMs !== undefined) {
      // not sent when the deadline passed: the exec credential plugin never answered (ApiRequests stopped it)
      const pluginUser = phases.get(apiError) === 'unsent' ? execPluginUser(this.kc) : undefined;
      if (pluginUser !== undefined) {
        return this.notSent(
          `the exec credential plugin of its user ${quoteText(pluginUser)}${this.pluginCommand()} did not answer within ${duration(apiError.timeoutMs)}${this.requests.stopsPlugins ? ' and was stopped' : ''} (${verb} ${target}); to wait longer, pass --request-timeout`,
        );
      }
      const waited = waitedAnswers.get(apiError);
      if (waited !== undefined) {
        const times = waited.length === 1 ? 'once' : `${waited.length} times`;
        if (waited.every((c) => c === 429)) {
          return new ClusterError(
            `${subject} kept turning the request away as too busy (429 Too Many Requests, ${times}, each waited out as it asked) until the ${duration(apiError.timeoutMs)} request timeout passed (${verb} ${target}); it is overloaded: try again later, or pass a longer --request-timeout`,
          );
        }
        // a 5xx with Retry-After is no throttling: the server (or a proxy) asked to come back later
        const codes = [...new Set(waited)].join(' and ');
        return new ClusterError(
          `${subject} kept answering HTTP ${codes} with a Retry-After (${times}, each waited out as it asked) until the ${duration(apiError.timeoutMs)} request timeout passed (${verb} ${target}); try again later, or pass a longer --request-timeout`,
        );
      }
      // a delete sent and not answered in time may have been carried out all the same (it is
      // not read again: a server that does not answer would cost a second timeout)
      const outcome = verb === 'delete' && phases.get(apiError) !== 'unsent' ? `; ${DELETE_OUTCOME_UNKNOWN}` : '';
      // it answered, and the deadline passed while its body came: not a server that is down
      const began = unfinishedAnswers.get(apiError);
      if (began !== undefined) {
        return new ClusterError(
          `${subject} answered ${verb} ${target} (HTTP ${began}), but its answer did not end within ${duration(apiError.timeoutMs)} (a slow network, or a server or proxy sending slowly)${outcome}; to wait longer, pass --request-timeout`,
        );
      }
      return new ClusterError(
        `${subject} did not answer within ${duration(apiError.timeoutMs)} (${verb} ${target})${outcome}; to wait longer, pass --request-timeout`,
      );
    }
    if (code === undefined) {
      const noCredential = causes(err).find((e) => e instanceof KubeconfigCredentialError);
      if (noCredential !== undefined)
        return new ClusterError(`cannot use context ${quoteText(this.context)} of ${this.file}: ${noCredential.message}`);
      // the kubeconfig's TLS material or proxy, not the server: said with the field that is wrong
      const transport = transportProblem(this.kc, err);
      if (transport !== undefined) {
        return this.notSent(transport);
      }
      // Deno's refusal to run an exec credential plugin is no failure to reach the server: said
      // below, as the plugin's
      const denied = causes(err).some((e) => execPluginFailure(e) !== undefined) ? undefined : deniedByRuntime(err);
      const network = networkFailure(err);
      const phase = typeof err === 'object' && err !== null ? phases.get(err) : undefined;
      // reached, and answering: the connection was lost while its answer was being read
      if (denied === undefined && network !== undefined && phase === 'answered') {
        return new ClusterError(`${subject} began to answer ${verb} ${target}, then the connection was lost: ${network}`);
      }
      // a delete sent on a connection then lost may have been carried out: not "cannot reach"
      if (denied === undefined && verb === 'delete' && connectionLostAfterSending(err)) {
        return new ClusterError(`the connection to ${where} was lost during ${verb} ${target}: ${network}`);
      }
      if (denied !== undefined || network !== undefined) return new ClusterError(`cannot reach ${where}: ${denied ?? network}`);
      // fetch's refusal quotes the header whole, the bearer token in it (messages says it without).
      // Only a control character (a line break, a NUL, a DEL) or a character beyond U+00FF inside the value gets here with client-node 2.x: its fetch strips spaces and line breaks
      // around a header value (the Fetch standard's normalisation, in Node and Deno alike), so a
      // token saved with a line ending is sent without it, and works; 1.x's node-fetch refuses that too.
      if (hasInvalidHeader(err)) {
        return this.notSent(
          `the credential of its user ${quoteText(this.kc.getCurrentUser()?.name ?? '')} (a token, a password, or an exec plugin's) has a control character (a line break, a NUL, a DEL) or a character beyond U+00FF inside it, which no HTTP header may hold (it is not shown; with @kubernetes/client-node 2.x a line break at its end is left out, as its fetch leaves it out of every header; 1.x sends it as it is); remove it`,
        );
      }
      // cut off here, past the cap on an answer's body: nothing malformed was read
      const cut = apiError instanceof KubernetesApiError ? apiError.cutOffStatus : undefined;
      if (cut !== undefined) {
        const outcome = verb === 'delete' ? DELETE_OUTCOME_UNKNOWN : 'nothing was changed';
        return new ClusterError(
          `the answer of ${subject} to ${verb} ${target} (HTTP ${cut}) went on past ${MAX_ANSWER_BODY_BYTES / MiB} MiB, more than any answer of the API server holds, and was not read further (a server or proxy sending without end?); ${outcome}`,
        );
      }
      if (phase === 'answered') return new ClusterError(`${subject} answered ${verb} ${target} with a malformed body: ${messages(err)}`);
      if (phase === 'unsent') {
        // an exec credential plugin that could not be run, exited with a failure, or exited
        // with status 0 printing no JSON: said as such, with its command (as the kubeconfig
        // names it; its args are not shown, a secret may be among them) and what it wrote on stderr.
        // JSON.parse's message quotes the output: a plugin printing a bare token would have it
        // printed here (execOutputProblem says it without)
        const plugin = causes(err)
          .map((e) => execPluginFailure(e) ?? execOutputProblem(e))
          .find((said) => said !== undefined);
        if (plugin !== undefined) {
          return this.notSent(
            `the exec credential plugin of its user ${quoteText(this.kc.getCurrentUser()?.name ?? '')}${this.pluginCommand()} ${plugin}`,
          );
        }
        // JSON but no ExecCredential (a JSON string) fails in client-node with a TypeError
        // naming its internals: messages says it as NO_EXEC_CREDENTIAL
        return new ClusterError(
          `cannot use context ${quoteText(this.context)} of ${this.file}: the request to ${this.server} was not sent, @kubernetes/client-node refused it: ${messages(err)}`,
        );
      }
      // a port fetch never connects to: no request to this server can be sent, on any retry
      const port = blockedPort(err, this.server);
      if (port !== undefined) {
        return this.notSent(blockedPortWhy(port));
      }
      // the API server's own port is fine: a redirect led there
      const redirectedPort = redirectedToBlockedPort(err, this.server);
      if (redirectedPort !== undefined) {
        return new ClusterError(`${verb} ${target} failed: ${blockedRedirectWhy(where, redirectedPort, redirectLocation(err))}`);
      }
      return new ClusterError(`${verb} ${target} failed without an answer from ${where}: ${messages(err)}`);
    }
    if (redirectedTo(err) !== undefined) {
      // a host a redirect took the request to (a login page): its answer says nothing of the
      // credentials, the RBAC or the resources of the cluster, and it is named
      const { body, headers } = err as { body?: unknown; headers?: unknown };
      const answer = describeAnswer(code, apiError instanceof KubernetesApiError ? apiError.status : undefined, body, headers);
      return new ClusterError(`${subject} answered ${verb} ${target}: ${answer}`);
    }
    if (code === 401) {
      // none were sent to an http:// server (plain-http.ts): its refusal is no word on them
      if (goesToPlainHttp(this.kc)) {
        return new ClusterError(
          `the API server at ${this.server} refused the requests of context ${quoteText(this.context)} (401 Unauthorized): ` +
            'no credentials are sent to an http:// server (kubectl sends none either); use its https:// address',
        );
      }
      return new ClusterError(
        `the API server at ${this.server} refused the credentials of context ${quoteText(this.context)} (401 Unauthorized)`,
      );
    }
    // an answer that is no Status (a proxy's error page) described: its type, size, first words
    const { body, headers } = err as { body?: unknown; headers?: unknown };
    const answer = describeAnswer(code, apiError instanceof KubernetesApiError ? apiError.status : undefined, body, headers);
    if (code === 403 && name !== undefined) {
      // RBAC may grant this verb for some objects (resourceNames) or namespaces and not others
      const group = resource.group === '' ? 'the core API group' : `API group "${resource.group}"`;
      const rule = `RBAC verb "${verb}" on resource "${resource.plural}" (${group})`;
      return new ObjectForbiddenError(
        `permission denied: context ${quoteText(this.context)} may not ${verb} ${target}; ` +
          `grant ${rule} for it` +
          (serverSaid ? `; the server said: ${serverSaid}` : body !== undefined ? `; the answer: ${answer}` : ''),
        resource.namespaced
          ? undefined
          : { request: `${verb} ${qualified(resource)}`, rule: `context ${quoteText(this.context)} needs ${rule}` },
      );
    }
    if (code === 403) {
      const group = resource.group === '' ? 'the core API group' : `API group "${resource.group}"`;
      return new ListForbiddenError(
        `permission denied: context ${quoteText(this.context)} may not ${verb} ${resource.plural} (${group}); ` +
          `grant RBAC verb "${verb}" on resource "${resource.plural}"` +
          (serverSaid ? `; the server said: ${serverSaid}` : body !== undefined ? `; the answer: ${answer}` : ''),
      );
    }
    // any other answer: the server that gave it (which cluster, when several are configured), and what it said
    return new CliError(`${verb} ${target} failed: ${where} answered ${serverSaid ? `HTTP ${code} ${serverSaid}` : answer}`);
  }
  /** ` (command "…")`: the current user's exec plugin as the kubeconfig names it (never its args: a secret may be among them), or "". */
  private pluginCommand(): string {
    const command = execPluginCommand(this.kc);
    return command === undefined ? '' : ` (command ${quoteText(command)})`;
  }
}

class ResourceNotServed extends Error {}

/**
 * Refuses, unsent, a request for an IPAddress whose name no object can have: longer than the API
 * server allows for any object (MAX_NAME), or "", "." or "..", which a URL resolves away — the
 * request would reach the collection, and a DELETE there is a delete of the whole collection. The listing that
 * gave it was malformed. A failure about that one object: --fix goes on with the others.
 */
function refuseImpossibleName(verb: 'get' | 'delete', name: string): void {
  if (!isPathSegmentName(name)) {
    throw new CliError(
      `${verb} ${qualified(IPADDRESSES)} ${quoteText(name)} not sent: no object can have that name (in a URL it would name the collection); the listing that named it is malformed`,
    );
  }
  if (name.length <= MAX_NAME) return;
  throw new CliError(
    `${verb} ${qualified(IPADDRESSES)} "${cutMessage(name)}" not sent: the name is ${formatCount(name.length)} characters long, and the API server allows at most ${MAX_NAME}; the listing that named it is malformed`,
  );
}

/** Timeout errors of requests the server asked to wait meanwhile: the status of each answer waited out (429, 5xx). */
const waitedAnswers = new WeakMap<KubernetesApiError, number[]>();

/** Timeout errors of requests whose answer began (status and headers in) and did not end in time: that answer's HTTP status. */
const unfinishedAnswers = new WeakMap<KubernetesApiError, number>();

/** 30000 → "30s", 250 → "250ms" (the --request-timeout forms). */
export function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function qualified(r: ResourceRef): string {
  return r.group === '' ? r.plural : `${r.plural}.${r.group}`;
}

function httpStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; body?: unknown } | null;
  return typeof e === 'object' && e !== null && typeof e.code === 'number' && 'body' in e ? e.code : undefined;
}

/**
 * The HTTP status of the API server's own answer: undefined for one from a host a redirect took
 * the request to (a login page's 404 or 409 says nothing of the cluster), as translate reads it.
 */
function apiServerStatus(err: unknown): number | undefined {
  return redirectedTo(err) === undefined ? httpStatus(err) : undefined;
}

/**
 * A 404 whose Status names the object (kube-apiserver's NotFound): no such object. A 404 naming
 * none — an API version not served, a proxy's page — says nothing about the object.
 */
function isNotFound(err: unknown): boolean {
  return httpStatus(err) === 404 && translate(err, 'get', '', 'the object') instanceof NotFoundError;
}

/**
 * A failed request about an IPAddress that `check --fix` has just listed or read in the same API
 * version (the read again before its delete, the delete, the read after it): gone when the API
 * server answered 404 with a Status, whether or not the Status names the object — the version is
 * served, so the 404 can only be the object's (isNotFound alone takes a Status without details for
 * a version not served). A 404 whose body is no Status (a proxy's page) says nothing about the object.
 */
function isGone(err: unknown): boolean {
  if (isNotFound(err)) return true;
  if (apiServerStatus(err) !== 404) return false;
  let body: unknown = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return false;
    }
  }
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}

/** What a failed delete that may have been carried out says of its IPAddress. */
const DELETE_OUTCOME_UNKNOWN = 'the IPAddress may have been deleted or not: run check again to see';

/** How far a request got before it failed: not sent (built from the kubeconfig), sent, answered. */
type Phase = 'unsent' | 'sent' | 'answered';

/** The phase each failed request's error was thrown in. */
const phases = new WeakMap<object, Phase>();

const MiB = 1024 * 1024;

/** Error codes (Node's, undici's) that mean the server could not be reached, or the connection was lost. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed for now',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed',
  EHOSTUNREACH: 'host unreachable',
  EHOSTDOWN: 'host down',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network down',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_SOCKET: 'connection closed by the other side',
};

/**
 * Codes of a connection lost after it was made: a request sent on it may have reached the server.
 * The others of NETWORK_CODES mean no connection was made (refused, no such host, unreachable),
 * or are timeouts, whose wait a second request would pay again.
 */
const LOST_CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'UND_ERR_SOCKET']);

/** Whether a request was sent and its connection then lost before the answer was read. */
function connectionLostAfterSending(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || phases.get(err) === 'unsent') return false;
  return causeChain(err).some(({ code }) => typeof code === 'string' && LOST_CONNECTION_CODES.has(code));
}

/** The network failure in an error's causes, in a few words with its code; undefined when there is none. */
function networkFailure(err: unknown): string | undefined {
  for (const { code } of causeChain(err)) {
    if (typeof code === 'string' && Object.hasOwn(NETWORK_CODES, code)) return `${NETWORK_CODES[code]} (${code})`;
  }
  return undefined;
}

/** An error and its causes (at most four, as `messages` reads them). */
function causes(err: unknown): unknown[] {
  return causeChain(err, 4);
}
