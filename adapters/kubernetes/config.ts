// What a kubeconfig says and how it is read, for the library and the command line: the
// KubeConfig and the options that KubernetesStore, KubernetesServiceCIDRs and the ServiceCIDR
// helpers take, checked in one place (a wrong one fails with InvalidArgumentError before any
// request is made); its server URL; the default kubeconfig, loaded as kubectl loads it. Parts have
// modules of their own: kubeconfig-shape.ts refuses a file kubectl cannot decode, yaml-dates.ts
// reads its unquoted dates as kubectl does, token-files.ts reads the users' token-files before
// client-node does, and user-checks.ts refuses a current user that would send requests without
// credentials.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { type Cluster, KubeConfig, type User } from '@kubernetes/client-node';
import { withEnvironmentProxy } from './proxy-environment.ts';
import { withReusedConnections } from './reused-connections.ts';
import { readFileBounded } from '../bounded-read.ts';
import { InvalidArgumentError } from '../errors.ts';
import { fsFailure } from '../fs-failure.ts';
import { optionsObject as checkOptions, readMember } from '../input.ts';
import { formatCount, quoteInput, quoteText } from '../quote.ts';
import type { BackoffOptions } from './backoff.ts';
import { IMPERSONATION_KEYS, impersonatesWithoutUser, readImpersonation, withImpersonation } from './impersonation.ts';
import type { ApiVersion } from './objects.ts';
import { withoutCredentialsOverPlainHttp } from './plain-http.ts';
import { insecureWithCA, tlsFileProblem, withClientCertificateCheck, withKubectlNameCheck } from './tls-material.ts';
import { readTokenFileInUse, readTokenFiles, TOKEN_FILE_KEYS, TokenFileError } from './token-files.ts';
import {
  documentOnce,
  documentText,
  duplicateName,
  forgetSetAside,
  isIncompleteEntryRefusal,
  type KubeconfigDocument,
  kubeConfigObjectProblem,
  kubeconfigShapeProblem,
  mergeSetAside,
  setAsideInUse,
  setAsideNamesNoCluster,
  withoutIncompleteEntries,
} from './kubeconfig-shape.ts';
import { datesSpelledIn, spellKubeConfigDates } from './yaml-dates.ts';
import {
  execEntryProblem,
  missingUser,
  moreThanOneAuthMethod,
  nonTextCredential,
  userProblem,
  withCredentialCheck,
  withEmptyPassword,
} from './user-checks.ts';

/**
 * The KubeConfig to use: the one given, or — when undefined — $KUBECONFIG / ~/.kube/config
 * (client-node's loadFromDefault). Anything else (null, a path string, a plain object, an object
 * without one of the methods every entry point calls: makeApiClient, getCurrentCluster,
 * applySecurityAuthentication) is refused: a KubeConfig from another copy of client-node is
 * accepted by its shape.
 * @internal
 */
export function kubeConfigOrDefault(kubeConfig: unknown, owner: string): KubeConfig {
  const given = 'kubeConfig';
  let kc: KubeConfig;
  if (kubeConfig === undefined) {
    kc = new KubeConfig();
    try {
      loadDefaultKubeconfig(kc);
    } catch (e) {
      // client-node's own error is a bare ENOENT, EISDIR or YAMLException naming no setting. It is
      // not kept as the `cause`: Node prints an uncaught error's cause with its message, and a
      // YAMLException's message quotes the lines up to the error, a token among them.
      throw new InvalidArgumentError(
        `${owner}: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${kubeconfigLoadFailure(e)}; ` +
          'fix it, or pass a KubeConfig loaded yourself',
      );
    }
  } else {
    kc = kubeConfig as KubeConfig;
  }
  // Each method read once (a read that throws is refused, naming it), and then each field the
  // methods read (KUBECONFIG_FIELDS); only the reads are guarded: a method that throws when called
  // (a KubeConfig subclass of the caller's) is the caller's own failure, and passes through as it
  // was thrown.
  const isObject = typeof kc === 'object' && kc !== null;
  const makeApiClient = isObject ? readMember(kc, 'makeApiClient', given) : undefined;
  const current = isObject && typeof makeApiClient === 'function' ? currentOf(kc, given) : undefined;
  const applyAuth = current?.cluster !== undefined ? readMember(kc, 'applySecurityAuthentication', given) : undefined;
  if (current?.cluster === undefined || typeof applyAuth !== 'function') {
    // the methods every entry point calls: a KubeConfig from another copy of client-node has them
    const missing = !isObject
      ? undefined
      : current === undefined
        ? 'makeApiClient'
        : current.cluster === undefined
          ? 'getCurrentCluster'
          : 'applySecurityAuthentication';
    const why = missing === undefined ? '' : ` (it has no method ${missing})`;
    throw new InvalidArgumentError(
      `${owner}: kubeConfig must be a KubeConfig from @kubernetes/client-node or undefined, got ${shownKubeConfig(kubeConfig)}${why}`,
    );
  }
  // what client-node's methods read of it: a getter or Proxy trap that throws (a KubeConfig
  // subclass, a Proxy of the caller's) is refused naming the field, with what it threw as the
  // cause, where the methods below would let it out as it was thrown
  for (const field of KUBECONFIG_FIELDS) readMember(kc, field, given);
  // a KubeConfig the caller loaded with client-node 1.x may hold an unquoted date as a Date (one
  // loaded here was given back its text): its text is not known here, and a Date would reach a
  // header or a plugin as Date.toString()
  const date = kubeConfig === undefined ? undefined : spellKubeConfigDates(kc, undefined);
  if (date !== undefined) throw new InvalidArgumentError(`${owner}: the KubeConfig: ${date}`);
  if (isFallback(current)) {
    // every request would fail with a refused connection to a server nobody named
    throw new InvalidArgumentError(
      `${owner}: the KubeConfig is client-node's placeholder (server http://localhost:8080), which loadFromDefault() ` +
        `loads when it finds no kubeconfig: ${unsetKubeconfigVariable()}, ~/.kube/config does not exist, and this is not a pod ` +
        'with a service account; load one, e.g. kc.loadFromFile(path)',
    );
  }
  const cluster = current.cluster();
  // client-node's own answer, later, is a bare Error('No active cluster!')
  if (cluster === null) {
    const context = current.context?.() ?? '';
    // loaded here: advice to load one would not apply; what the files lack, as the command line says it
    if (kubeConfig === undefined) {
      // a context without a cluster, or whose cluster has no server (kubectl refuses it in use)
      const setAside = setAsideInUse(kc, context, `its current-context ${quoteText(context)}`);
      if (setAside !== undefined) {
        throw new InvalidArgumentError(
          `${owner}: the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${setAside}: complete it, or choose another ` +
            'context, or pass a KubeConfig loaded yourself',
        );
      }
      throw new InvalidArgumentError(
        `${owner}: the default kubeconfig ($KUBECONFIG, else ~/.kube/config) ` +
          (context === ''
            ? 'names no current-context: set one (kubectl config use-context NAME)'
            : `has no cluster for its current-context ${quoteText(context)}: add the context, and its cluster, or choose another`) +
          ', or pass a KubeConfig loaded yourself',
      );
    }
    throw new InvalidArgumentError(
      `${owner}: the KubeConfig has no current cluster (context ${quoteText(context)}): load one first, e.g. kc.loadFromDefault()`,
    );
  }
  // a KubeConfig loaded here was refused for it already, naming its file (loadKubeconfigText)
  const twice = kubeConfig === undefined ? undefined : duplicateName(kc);
  if (twice !== undefined) throw new InvalidArgumentError(`${owner}: the KubeConfig: ${twice}`);
  const problem = serverURLProblem(cluster.server);
  if (problem !== undefined) {
    throw new InvalidArgumentError(
      `${owner}: the server URL of the KubeConfig's current cluster ${quoteText(cluster.name)} (${shownServer(cluster.server)}) ${problem}`,
    );
  }
  const insecure = insecureWithCA(cluster);
  if (insecure !== undefined) {
    throw new InvalidArgumentError(`${owner}: the KubeConfig's current cluster ${quoteText(cluster.name)} ${insecure}`);
  }
  const tlsFile = tlsFileProblem(kc);
  if (tlsFile !== undefined) throw new InvalidArgumentError(`${owner}: ${tlsFile}`);
  const noUser = missingUser(kc);
  if (noUser !== undefined) throw new InvalidArgumentError(`${owner}: ${noUser}: add the user to the KubeConfig, or use another context`);
  const badUser = userProblem(kc);
  if (badUser !== undefined) throw new InvalidArgumentError(`${owner}: ${badUser}`);
  // the rest of what the loader refuses in a file (loadKubeconfigText), of a KubeConfig the caller
  // loaded, as far as its objects show it; the user in use was named with its context above
  const shape = kubeConfig === undefined ? undefined : kubeConfigObjectProblem(kc);
  if (shape !== undefined) throw new InvalidArgumentError(`${owner}: the KubeConfig: ${shape}`);
  const sent = kubeConfigAsSent(kc);
  // loaded here: the failures of its requests can name the file to correct, as the command line does
  if (kubeConfig === undefined) LOADED_FROM.set(sent, kubeconfigNamed(undefined, kc));
  return sent;
}

/** The fields of a KubeConfig its methods read (getCurrentCluster, getCurrentUser, …), read once each by kubeConfigOrDefault. */
const KUBECONFIG_FIELDS = ['clusters', 'contexts', 'users', 'currentContext'] as const;

/** The kubeconfig a KubeConfig kubeConfigOrDefault loaded itself was read from, as kubeconfigNamed names it. */
const LOADED_FROM = new WeakMap<KubeConfig, string>();

/**
 * The kubeconfig as messages name it, with the file a user can open to correct it: `the
 * kubeconfig "/path"` for the file given (the command line's --kubeconfig), or for the one default
 * file read; `the kubeconfig merged from "/a", "/b" ($KUBECONFIG)` for several; `the kubeconfig`
 * alone when none was read (a pod's service account, taken as kubectl takes it: client-node names
 * its context inClusterContext). The library's messages and the command line's alike.
 * @internal
 */
export function kubeconfigNamed(given: string | undefined, kc: KubeConfig): string {
  if (kc.getCurrentContext() === 'inClusterContext' && kc.getCurrentCluster()?.name === 'inCluster') return 'the kubeconfig';
  if (given !== undefined) return `the kubeconfig ${quoteText(given)}`;
  const read = defaultKubeconfigFiles().files.filter((path) => existsSync(path));
  if (read.length === 0) return 'the kubeconfig';
  if (read.length === 1) return `the kubeconfig ${quoteText(read[0]!)}`;
  return `the kubeconfig merged from ${read.map((path) => quoteText(path)).join(', ')} ($KUBECONFIG)`;
}

/**
 * `context "x" of the kubeconfig "/path"`: the current context of `kc` and the kubeconfig
 * kubeConfigOrDefault loaded it from (kubeconfigNamed), for a message about a request the
 * kubeconfig did not let go out (its TLS material, its exec plugin), as the command line says
 * it; undefined for a KubeConfig the caller loaded, whose file is not known here.
 * @internal
 */
export function kubeconfigInUse(kc: KubeConfig | undefined): string | undefined {
  const file = kc === undefined ? undefined : LOADED_FROM.get(kc);
  return file === undefined ? undefined : `context ${quoteText(kc!.getCurrentContext())} of ${file}`;
}

/**
 * `kc` as every request of the library and the command line is sent with it: through the
 * environment's proxy for a cluster without a proxy-url (proxy-environment.ts), never with a client
 * certificate or key that does not parse (tls-material.ts), on connections shared by its requests
 * (reused-connections.ts), without the user's credentials to an http:// server, as kubectl sends
 * none there (plain-http.ts), with the impersonation client-node drops
 * (impersonation.ts), a username without a password as kubectl sends it, and never anonymous when
 * its exec credential plugin gave nothing (user-checks.ts). The owner of what it sends closes its
 * connections with closeReusedConnections.
 * @internal
 */
export function kubeConfigAsSent(kc: KubeConfig): KubeConfig {
  return withCredentialCheck(
    withEmptyPassword(
      withImpersonation(
        withoutCredentialsOverPlainHttp(
          withReusedConnections(withClientCertificateCheck(withKubectlNameCheck(withEnvironmentProxy(withContextAsMade(kc))))),
        ),
      ),
    ),
  );
}

/**
 * `kc` with the context current now, whatever context is made current on `kc` later (and that
 * context's server URL with its scheme in lower case, as kubectl reads it; a context without a
 * user given an empty one, so its cluster's TLS settings are used). client-node's
 * API clients keep the server they were made for but read the user anew for each request, and a
 * watch reads the cluster anew: a store whose KubeConfig was switched to another context after
 * it was made sent that context's credentials to the first cluster, and watched the other
 * cluster while it listed and wrote to the first, its user never checked (userProblem runs as the
 * store is made). Every client-node method reads the context through `currentContext`, so this
 * one field, kept here, holds them all to it; a store for another context is another store.
 */
function withContextAsMade(kc: KubeConfig): KubeConfig {
  const context: unknown = (kc as { currentContext?: unknown }).currentContext;
  if (typeof context !== 'string') return kc; // not a KubeConfig of client-node's: refused by the caller
  const pinned = Object.create(kc) as KubeConfig;
  Object.defineProperty(pinned, 'currentContext', { value: context, writable: true, enumerable: true });
  // A URL's scheme is case-insensitive (RFC 3986 3.1), and kubectl reads HTTPS://host as
  // https://host; client-node compares the text with "https://" and "http://" and sends nothing to
  // any other ("You need to define an absolute base url"): its cluster is given the scheme in
  // lower case here, the caller's own objects left as they are. (The URL parsed as http(s) when
  // the caller checked it, serverURLProblem, so its scheme is the text before the first ':'.)
  // client-node reads the cluster's insecure-skip-tls-verify, certificate-authority and
  // tls-server-name only for a user (applyHTTPSOptions returns at once without one): a context
  // that names none, which kubectl takes as no credentials, is given a user with nothing in it,
  // so its cluster's TLS settings are used as kubectl uses them
  const getCurrentUser: unknown = (kc as { getCurrentUser?: unknown }).getCurrentUser;
  if (typeof getCurrentUser === 'function') {
    pinned.getCurrentUser = function (this: KubeConfig) {
      return (getCurrentUser.call(this) as User | null) ?? { name: '' };
    };
  }
  const cluster = kc.getCurrentCluster();
  const server = cluster?.server;
  if (typeof server === 'string' && Array.isArray(kc.clusters)) {
    const scheme = server.slice(0, Math.max(0, server.indexOf(':')));
    if (scheme !== scheme.toLowerCase()) {
      const lower = { ...cluster, server: scheme.toLowerCase() + server.slice(scheme.length) };
      const clusters = kc.clusters.map((c) => (c === cluster ? lower : c));
      Object.defineProperty(pinned, 'clusters', { value: clusters, writable: true, enumerable: true });
    }
  }
  return pinned;
}

/**
 * The most a kubeconfig file may hold: 16 MiB. A kubeconfig is a few KiB (a few hundred with
 * many clusters and inline certificates); a large file named by mistake would otherwise be read
 * whole into memory (a device without end, such as /dev/zero, is no regular file: not read).
 * @internal
 */
export const KUBECONFIG_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A kubeconfig file that is not read: it holds more than KUBECONFIG_MAX_BYTES, or is no regular
 * file (a named pipe, a device, a directory). Its message names the file and why, never its content.
 * @internal
 */
export class KubeconfigNotReadError extends Error {
  override name = 'KubeconfigNotReadError';
  constructor(
    readonly path: string,
    /** Why, as the end of a sentence naming the file: "it is a named pipe (FIFO), not a regular file". */
    readonly reason: string,
  ) {
    super(`${quoteText(path)} is not a kubeconfig: ${reason}`);
  }
}

/** Why a file over the bound is refused, as the end of a sentence naming it. @internal */
export const KUBECONFIG_TOO_LARGE = 'it holds more than 16 MiB (a kubeconfig is a few KiB)';

/**
 * A kubeconfig file's text as UTF-8, read once and at most KUBECONFIG_MAX_BYTES (readFileBounded);
 * KubeconfigNotReadError beyond it, or when the file is no regular file: a named pipe nothing
 * writes to would hold the read for ever, a device such as /dev/zero has no end. Other failures
 * (ENOENT, EACCES) are Node's, naming the file.
 * @internal
 */
export function readKubeconfigFile(path: string): string {
  return readFileBounded(
    path,
    KUBECONFIG_MAX_BYTES,
    () => new KubeconfigNotReadError(path, KUBECONFIG_TOO_LARGE),
    (what) => new KubeconfigNotReadError(path, `it is ${what}, not a regular file`),
  );
}

/**
 * A kubeconfig file that could not be loaded, or a $KUBECONFIG list that names none to load.
 * Its message names the file (or the list) and why, never the file's content: a YAML error is
 * said by its place and kind (kubeconfigLoadFailure).
 * @internal
 */
export class KubeconfigFileError extends Error {
  override name = 'KubeconfigFileError';
}

/**
 * The kubeconfig files read when none is named, found as kubectl finds them (client-go's
 * clientcmd loading rules): when $KUBECONFIG is set, each file of it — a path list, split on
 * the platform's delimiter (`:`, `;` on Windows), empty entries skipped, a file named twice read
 * once —, else ~/.kube/config. `list` says which: a file of the list that does not exist is
 * skipped (loadKubeconfigFiles), ~/.kube/config that does not exist leaves client-node's own
 * fallbacks.
 * @internal
 */
export function defaultKubeconfigFiles(): { files: string[]; list: string | undefined } {
  const list = process.env['KUBECONFIG'];
  if (list) return { files: [...new Set(list.split(delimiter).filter((f) => f !== ''))], list };
  return { files: [join(homedir(), '.kube', 'config')], list: undefined };
}

/** A pod's service account token, where client-go's rest.InClusterConfig (and client-node) look for it. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Whether this is a pod whose service account can be used, asked as kubectl asks it
 * (clientcmd's client_config.go, inClusterClientConfig.Possible): KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT set, and the service account token there and no folder. The token is
 * looked for under `pathPrefix`, as client-node's loadFromCluster(pathPrefix) reads it.
 */
function inClusterPossible(pathPrefix: string): boolean {
  const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port } = process.env;
  if (!host || !port) return false;
  try {
    return !statSync(`${pathPrefix}${SERVICE_ACCOUNT_TOKEN}`).isDirectory();
  } catch {
    return false;
  }
}

/**
 * $KUBECONFIG as it stands when no kubeconfig was found through it: `$KUBECONFIG is not set`, or,
 * for a variable set to "" (read as not set, as kubectl and defaultKubeconfigFiles read it), that
 * it is empty — "not set" alone would contradict an operator who sees it set. The one wording,
 * for the library and the command line.
 * @internal
 */
export function unsetKubeconfigVariable(): string {
  return process.env['KUBECONFIG'] === '' ? '$KUBECONFIG is empty (read as not set, as kubectl reads it)' : '$KUBECONFIG is not set';
}

/**
 * client-node's loadFromDefault as kubectl loads the default kubeconfig, each file read by
 * readKubeconfigFile (bounded, once). The files of $KUBECONFIG (defaultKubeconfigFiles) are
 * merged by kubectl's rules, not client-node's: a file that does not exist, or is empty (no
 * bytes), is skipped (only when none is left does loading fail, naming them all; kubectl warns,
 * then has no configuration); files that name no cluster to use (preferences only, no
 * current-context: namesNoCluster) are no configuration either, inside a pod; the first file to name a cluster, user or context wins, and a later entry of the same name is
 * ignored whole (client-node refuses the load: "Duplicate cluster"); the first file that sets a
 * current-context wins (client-node takes the last). A file that cannot be read or parsed fails
 * the load with KubeconfigFileError naming it (or KubeconfigNotReadError). Without $KUBECONFIG:
 * ~/.kube/config when it can be opened, else loadFromDefault's own fallbacks (a pod's service
 * account, the placeholder) and errors. A $KUBECONFIG of separators only (`:`) names no file:
 * a pod's service account, else KubeconfigFileError. So does one whose files all are missing or
 * empty: kubectl's loading rules skip them and, the merged configuration being empty, take the
 * pod's service account (clientcmd's merged_client_builder.go, DeferredLoadingClientConfig
 * .ClientConfig, when inClusterClientConfig.Possible). `pathPrefix` is where the service account's
 * files are looked for, as client-node's loadFromCluster(pathPrefix) takes it: '' (the pod's own).
 * `context`: the context the caller will use instead of the current-context (kubectl --context,
 * clientcmd's contextName), which decides whether the files name a cluster to use, and whose
 * user's token-file is read now (token-files.ts readTokenFileInUse; the others' are not, as with
 * kubectl).
 * @internal
 */
export function loadDefaultKubeconfig(kc: KubeConfig, pathPrefix = '', context?: string): void {
  const { files, list } = defaultKubeconfigFiles();
  if (list === undefined) {
    try {
      // not opened: opening a named pipe there would wait for a writer (readKubeconfigFile refuses it)
      accessSync(files[0]!, constants.R_OK);
    } catch {
      // absent or unreadable: loadFromDefault says so, or falls back
      kc.loadFromDefault();
      return;
    }
  } else if (files.length === 0) {
    // kubectl (clientcmd's loading rules) skips the empty entries and so loads no file — never
    // ~/.kube/config —, and then takes a pod's service account (rest.InClusterConfig), as
    // client-node does when it finds no kubeconfig
    if (inClusterPossible(pathPrefix)) {
      kc.loadFromCluster(pathPrefix);
      return;
    }
    throw new KubeconfigFileError(
      `$KUBECONFIG (${quoteText(list)}) names no file: it holds only path separators, and this is not a pod with a service account`,
    );
  }
  const missing: string[] = [];
  const skipped: string[] = [];
  // the file each user was taken from (the first to name it), for the failure of its token-file
  const userFiles = new Map<string, string>();
  let loaded = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readKubeconfigFile(file);
    } catch (e) {
      if (list !== undefined && (e as { code?: unknown }).code === 'ENOENT') {
        missing.push(file);
        skipped.push(`${quoteText(file)} does not exist`);
        continue;
      }
      throw fileFailure(file, e);
    }
    // kubectl reads a file of no bytes as an empty configuration (clientcmd's Load), one a
    // command such as `touch` leaves: it adds nothing to the others
    if (list !== undefined && text.length === 0) {
      skipped.push(`${quoteText(file)} is empty`);
      continue;
    }
    const into = loaded === 0 ? kc : new KubeConfig();
    try {
      loadKubeconfigText(into, text, file);
    } catch (e) {
      throw fileFailure(file, e);
    }
    if (into !== kc) mergeFirstWins(kc, into);
    for (const user of into.users) if (!userFiles.has(user.name)) userFiles.set(user.name, file);
    loaded++;
  }
  // a configuration that names no cluster to use (preferences only, no current-context) is empty
  // to kubectl too, which then takes the pod's service account
  if (loaded > 0 && !(namesNoCluster(kc, context) && inClusterPossible(pathPrefix))) {
    try {
      readTokenFileInUse(kc, context);
    } catch (e) {
      const file = e instanceof TokenFileError ? userFiles.get(e.user) : undefined;
      throw file === undefined ? e : fileFailure(file, e);
    }
    return;
  }
  // nothing loaded, and nothing failed: kubectl has an empty configuration, and uses a pod's
  // service account instead when there is one
  if (inClusterPossible(pathPrefix)) {
    kc.loadFromCluster(pathPrefix);
    return;
  }
  const notPod = ', and this is not a pod with a service account';
  if (missing.length === skipped.length) {
    throw new KubeconfigFileError(`none of the files $KUBECONFIG names exists: ${missing.map((f) => quoteText(f)).join(', ')}${notPod}`);
  }
  throw new KubeconfigFileError(`none of the files $KUBECONFIG names holds a kubeconfig: ${skipped.join(', ')}${notPod}`);
}

/**
 * Whether kubectl reads the merged kubeconfig `kc` as no configuration at all (clientcmd's
 * ErrEmptyConfig), and so takes a pod's service account instead (DeferredLoadingClientConfig
 * .ClientConfig): no context to use (`contextName`, else the current-context), or one the
 * kubeconfig holds whose cluster it does not hold — and nothing else wrong. A file of preferences
 * alone (no clusters, no contexts) is one. DirectClientConfig.ConfirmUsable finds the configuration
 * empty only when the missing cluster is all it finds: a context named that the kubeconfig does
 * not hold, or a user of the context that validateAuthInfo refuses (userRefusedByKubectl), makes
 * it invalid, an error, and no service account is taken.
 */
function namesNoCluster(kc: KubeConfig, contextName: string | undefined): boolean {
  const name = contextName || kc.getCurrentContext();
  // a context without a cluster, or naming one that holds nothing, as the loader set them aside
  if (name && setAsideNamesNoCluster(kc, name)) return true;
  const context = name ? kc.getContextObject(name) : null;
  if (name && context === null) return false;
  if (context?.cluster && kc.getCluster(context.cluster) !== null) return false;
  return context === null || !userRefusedByKubectl(kc, context.name);
}

/**
 * Whether clientcmd's validateAuthInfo refuses the user of context `contextName` of `kc`: a
 * field that is no text (kubectl cannot even decode it: nonTextCredential), an exec entry it
 * refuses (execEntryProblem: one with an env entry without a name, say), one next to an
 * auth-provider, a client certificate without a key, a client certificate or key given both by file and by
 * data, a client certificate or key file that cannot be opened, a token beside a username or
 * password (moreThanOneAuthMethod), or an as-uid, as-groups or
 * as-user-extra without `as` (impersonatesWithoutUser).
 */
function userRefusedByKubectl(kc: KubeConfig, contextName: string): boolean {
  // the checks read the current context's user: that context made current on a view of `kc`
  const view = Object.create(kc) as KubeConfig & { currentContext: string };
  view.currentContext = contextName;
  if (nonTextCredential(view) !== undefined || execEntryProblem(view) !== undefined) return true;
  if (moreThanOneAuthMethod(view) !== undefined) return true;
  const user = view.getCurrentUser();
  if (user === null) return false;
  if (impersonatesWithoutUser(user)) return true;
  if (user.exec && user.authProvider) return true;
  if (!(user.certFile || user.certData)) return false;
  if (!(user.keyFile || user.keyData)) return true;
  if ((user.certFile && user.certData) || (user.keyFile && user.keyData)) return true;
  return [user.certFile, user.keyFile].some((file) => {
    if (!file) return false;
    try {
      accessSync(file, constants.R_OK);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Loads the text of the kubeconfig file `file` (read by the caller with readKubeconfigFile, once:
 * it may be a pipe) as kubectl --kubeconfig loads it (clientcmd's loading rules with an
 * ExplicitPath: that file alone), by loadKubeconfigText, its failures theirs. A file that names no
 * cluster to use (namesNoCluster: preferences only, say) is, to kubectl, no configuration, as from
 * $KUBECONFIG: inside a pod with a service account the pod's is taken instead
 * (DeferredLoadingClientConfig.ClientConfig makes no exception for an explicit file); outside one
 * it is left as loaded, for the caller to say what it lacks. `pathPrefix` and `context` as
 * loadDefaultKubeconfig takes them (the token-file of the user in use read now).
 * @internal
 */
export function loadGivenKubeconfig(kc: KubeConfig, text: string, file: string, pathPrefix = '', context?: string): void {
  loadKubeconfigText(kc, text, file);
  if (namesNoCluster(kc, context) && inClusterPossible(pathPrefix)) kc.loadFromCluster(pathPrefix);
  else readTokenFileInUse(kc, context);
}

/** A kubeconfig file's failure to load, naming the file (KubeconfigNotReadError already does). */
function fileFailure(file: string, e: unknown): Error {
  if (e instanceof KubeconfigNotReadError) return e;
  // fs's failure on the file itself: the file is named once, as kubeconfigLoadFailure names it
  const said = kubeconfigLoadFailure(e);
  return new KubeconfigFileError(fsFailedOn(e) === file ? said : `${quoteText(file)}: ${said}`);
}

/**
 * Loads a kubeconfig file's text into `kc` (replacing what it held), its relative paths resolved
 * against the file's folder, as kubectl resolves them (clientcmd ResolveLocalPaths): a cluster's
 * certificate-authority, a user's client-certificate, client-key and token-file, and an exec
 * plugin's command when it holds a path separator (`./bin/token`; a bare name is looked up on
 * the PATH). client-node resolves the first three itself (makePathsAbsolute). It reads a
 * token-file as it parses the text, whole, synchronously and from the working directory, every
 * user's: here each is taken out of the text (token-files.ts readTokenFiles) and handed to
 * client-node as the user's token, read bounded when first asked for (the loaders read the one of
 * the user in use: readTokenFileInUse) and again as client-go reads it (TokenFileSource).
 * A file that names a cluster, user or context twice is refused, as kubectl refuses it, and so is
 * one with a field kubectl cannot read (kubeconfig-shape.ts kubeconfigShapeProblem). The entries
 * client-node would refuse the whole file for, and kubectl takes unless they are in use — a
 * context without a cluster, a cluster without a server, an entry without a name — are set aside
 * (kubeconfig-shape.ts withoutIncompleteEntries); the context in use is refused naming them
 * (setAsideInUse: kubeConfigOrDefault, the command line). An unquoted date, which
 * client-node 1.x reads as a Date, is read as kubectl reads it, as the text the file spells it with,
 * or refused when that cannot be told (yaml-dates.ts spellKubeConfigDates).
 * The users' as-uid, as-groups and as-user-extra, which client-node drops, are read from the text
 * (impersonation.ts readImpersonation).
 * @internal
 */
export function loadKubeconfigText(kc: KubeConfig, text: string, file: string): void {
  const folder = resolve(dirname(file));
  const spelled = datesSpelledIn(text);
  const parsed = documentOnce(text, spelled);
  const withUsers = (): { users: unknown[] } | undefined => {
    const doc = parsed();
    return Array.isArray(doc?.users) ? (doc as { users: unknown[] }) : undefined;
  };
  forgetSetAside(kc);
  // the document client-node is given: without the entries it would refuse the file for and no
  // one may use (withoutIncompleteEntries), so that it builds the others one for one from its
  // lists, and an index of its users is one of kc.users
  let given: { doc: KubeconfigDocument | undefined; setAside: boolean } | undefined;
  const givenDoc = () => {
    if (given === undefined) {
      const doc = parsed();
      const usable = doc === undefined ? undefined : withoutIncompleteEntries(doc, kc);
      given = { doc: usable ?? doc, setAside: usable !== undefined };
    }
    return given;
  };
  const users = (): { users: unknown[] } | undefined => {
    const { doc } = givenDoc();
    return Array.isArray(doc?.users) ? (doc as { users: unknown[] }) : undefined;
  };
  // parsed only when a user may name a token-file or impersonate: the key in the text, or an
  // escape, which a double-quoted key may spell it with ("token\x2dfile" is token-file to YAML)
  const doc = text.includes('\\') || [...TOKEN_FILE_KEYS, ...IMPERSONATION_KEYS].some((key) => text.includes(key)) ? users() : undefined;
  const read = doc === undefined ? undefined : readTokenFiles(doc, text.length, folder);
  const textOf = (): string => {
    const { doc, setAside } = givenDoc();
    return read?.text ?? (setAside ? documentText(doc!, text.length) : text);
  };
  try {
    kc.loadFromString(given === undefined ? text : textOf());
  } catch (e) {
    // most files are parsed by client-node alone: the document is read here only for an entry it refuses
    if (given !== undefined || !isIncompleteEntryRefusal(e) || !givenDoc().setAside) throw e;
    kc.loadFromString(textOf());
  }
  // client-node 1.x reads an unquoted date as a Date: given back its text, as kubectl reads it, before anything reads it
  const date = spellKubeConfigDates(kc, spelled);
  if (date !== undefined) throw new Error(date);
  const problem = kubeconfigShapeProblem(kc, text, parsed, withUsers);
  if (problem !== undefined) throw new Error(problem);
  if (doc !== undefined) readImpersonation(kc, doc.users);
  kc.makePathsAbsolute(folder);
  // client-node built its users one for one from the list it was given (givenDoc), so an index of
  // that list is one of kc.users
  for (const [i, source] of read?.tokens ?? []) {
    const user = kc.users[i];
    if (user !== undefined) source.attachTo(user);
  }
  for (const user of kc.users) {
    const command = (user.exec as { command?: unknown } | undefined)?.command;
    if (typeof command === 'string' && command.includes(sep) && !isAbsolute(command)) {
      // client-node's own path resolution (makePathsAbsolute) writes its User objects the same way
      (user as { exec: unknown }).exec = { ...user.exec, command: join(folder, command) };
    }
  }
}

/**
 * Merges `from` into `kc` by kubectl's rules: an entry whose name `kc` already holds is ignored
 * whole (the first file to name it wins), and `from`'s current-context is taken only when `kc`
 * has none.
 */
function mergeFirstWins(kc: KubeConfig, from: KubeConfig): void {
  if (!kc.getCurrentContext() && from.getCurrentContext()) kc.setCurrentContext(from.getCurrentContext());
  // a cluster or context set aside (a context without a cluster) wins as a complete one does
  const { clusters, contexts } = mergeSetAside(kc, from);
  const users = new Set(kc.users.map((u) => u.name));
  kc.clusters.push(...from.clusters.filter((c) => !clusters.has(c.name)));
  kc.users.push(...from.users.filter((u) => !users.has(u.name)));
  kc.contexts.push(...from.contexts.filter((c) => !contexts.has(c.name)));
}

/**
 * A kubeConfig argument that is no KubeConfig, for a message: quoted (quoteInput) unless it is a
 * string that is not a path. A kubeconfig's text given where its KubeConfig belongs
 * (`readFileSync(path, 'utf8')`), or a token, is said by its length only: it may hold a
 * credential. A path (`/`, `~`, `.` or a drive letter first, one line) is quoted.
 */
function shownKubeConfig(kubeConfig: unknown): string {
  if (typeof kubeConfig !== 'string' || /^(?:[/~.]|[A-Za-z]:[\\/])[^\n\r]*$/.test(kubeConfig)) return quoteInput(kubeConfig);
  return `a string of ${formatCount(kubeConfig.length)} characters (not shown: kubeconfig text or a token may be in it; load it with kc.loadFromString(text) and pass the KubeConfig)`;
}

/**
 * Why client-node could not load a kubeconfig, for a message (the library's and the command
 * line's). A YAML error is said by its place and its kind, never with js-yaml's message, which
 * quotes the lines up to the error — a token or a client key among them — nor with the part of
 * its reason that quotes the text (a tag, an alias, a handle: yamlErrorKind). Any other failure
 * is said with its message, but fs's failure on a file by the file and why, in words
 * (adapters/fs-failure.ts): `"/home/dev/.kube/config": permission denied (EACCES)`.
 * @internal
 */
export function kubeconfigLoadFailure(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // client-node reads each cluster's server with .replace(): one that is no text (`server:
  // 6443`) fails the load with a TypeError naming its internals
  if (e instanceof TypeError && /\bserver\.replace is not a function/.test(e.message)) {
    return `a cluster's server is not text (a number, as in server: 6443, true, a list): ${SERVER_URL_FORM}`;
  }
  const failedOn = fsFailedOn(e);
  if (failedOn !== undefined) return `${quoteText(failedOn)}: ${fsFailure(e)}`;
  if (e.name !== 'YAMLException') return e.message;
  const { reason, mark } = e as { reason?: unknown; mark?: { line?: unknown; column?: unknown } };
  const kind = typeof reason === 'string' ? yamlErrorKind(reason) : '';
  const at =
    typeof mark?.line === 'number' && typeof mark.column === 'number' ? ` at line ${mark.line + 1}, column ${mark.column + 1}` : '';
  return `its YAML is malformed${at}${kind === '' ? '' : `: ${kind}`} (the text is not shown: it may hold a credential)`;
}

/** The file fs failed to open or read, for an error of fs's that names one (not spawn's: a command); undefined for any other. */
function fsFailedOn(e: unknown): string | undefined {
  const { code, path, syscall } = (e ?? {}) as { code?: unknown; path?: unknown; syscall?: unknown };
  const named = typeof code === 'string' && typeof path === 'string' && path !== '' && typeof syscall === 'string';
  return named && !syscall.startsWith('spawn') ? path : undefined;
}

/**
 * js-yaml's reasons that quote the text, each said as a whole phrase without it: cutting them
 * at the quote left a fragment ("cannot resolve a node with").
 */
const YAML_REASONS: readonly (readonly [RegExp, string])[] = [
  [/^cannot resolve a node with .* explicit tag$/s, 'cannot resolve a node with its explicit tag'],
  [/^there is a previously declared suffix for .* tag handle$/s, 'a %TAG directive declares a tag handle declared before'],
];

/**
 * A YAML error's kind, from js-yaml's reason: a reason known to quote the text (YAML_REASONS)
 * said as a whole phrase; any other without the parts that quote (a "…" name, a !<…> or !… tag,
 * and everything after `: `), which leaves a phrase whole where they end it (`undeclared tag
 * handle "!x!"`, `unknown scalar tag !<x>`, `unidentified alias "x"`).
 */
function yamlErrorKind(reason: string): string {
  for (const [pattern, said] of YAML_REASONS) if (pattern.test(reason)) return said;
  return reason
    .replace(/"[^"\n]*"|!<[^>\n]*>|!\S*/g, ' ')
    .split(/["!]|: /)[0]!
    .replace(/\s+/g, ' ')
    .trim();
}

/** A KubeConfig's getCurrent* methods, each read once and bound to it; undefined where it has none. */
interface CurrentMethods {
  cluster: (() => Cluster | null) | undefined;
  context: (() => string) | undefined;
  user: (() => User | null) | undefined;
}

/**
 * The getCurrent* methods of `kc`, read once: a read that throws (a KubeConfig-shaped Proxy, a
 * getter that throws) is InvalidArgumentError naming `given` and the method (readMember).
 * Calling them is left to the caller, unguarded.
 */
function currentOf(kc: KubeConfig, given: string): CurrentMethods {
  const method = <T>(name: string): T | undefined => {
    const m = readMember(kc, name, given);
    return typeof m === 'function' ? (m.bind(kc) as T) : undefined;
  };
  return {
    cluster: method('getCurrentCluster'),
    context: method('getCurrentContext'),
    user: method('getCurrentUser'),
  };
}

/**
 * The server URL parsed as fetch will parse it, or undefined when it is no http(s) URL. Such a
 * text is never quoted: a password with an unescaped `/`, `?` or `#` (`https://admin:pw/x@host`)
 * breaks the parse at an unknown place, and a scheme-less `admin:pw@host:6443` reads as the
 * scheme `admin:` with the password in the path.
 */
function parsedServer(server: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** What a kubeconfig's server URL is, for messages that refuse one. */
const SERVER_URL_FORM = 'a server URL is scheme://host:port with an optional path';

/**
 * Why a kubeconfig cluster's server URL cannot be used, as the end of a sentence naming it;
 * undefined when it can. kubeconfig keeps credentials in the user entry: a URL carrying them
 * (`https://admin:pw@host`) is refused by fetch with a message quoting the URL whole, password
 * included; a query or fragment (`https://host?token=x`) gets the API paths appended after it
 * (`?token=x/apis/…`), so every request would go to the server's root. Neither is quoted back.
 * @internal
 */
export function serverURLProblem(server: unknown): string | undefined {
  // kubectl reads `server: 6443` as no string at all (its decoding fails), and client-node's
  // requests fail on one with a TypeError of its own (`…server.replace is not a function`)
  if (typeof server !== 'string') return `is ${server === null ? 'null' : `a ${typeof server}`}, not text: ${SERVER_URL_FORM}`;
  // new URL() drops them, client-node does not: its requests fail ("You need to define an
  // absolute base url", "Invalid URL") while the URL shown here looks right; kubectl refuses it too
  // (WHATWG URL: C0 control or space, U+0000 to U+0020)
  if (server.charCodeAt(0) <= 0x20 || server.charCodeAt(server.length - 1) <= 0x20) {
    return 'has a space or a control character before or after it, which kubeconfig does not allow: remove it';
  }
  const url = parsedServer(server);
  if (url === undefined) {
    return 'is no http:// or https:// URL, which kubeconfig needs: scheme://host:port with an optional path (it is not shown: a password may sit in it)';
  }
  if (url.username !== '' || url.password !== '') {
    return 'carries credentials (userinfo before an @ in the host), which kubeconfig does not support: put them in the user entry (token, client certificate, or username and password)';
  }
  // in a URL that parsed, a `?` or `#` can only start its query or fragment (an empty one included)
  const extra = /[?#]/.exec(server)?.[0];
  if (extra !== undefined) {
    const what = extra === '?' ? 'a query string (?…)' : 'a fragment (#…)';
    return `has ${what}, which kubeconfig does not support: a server URL is scheme://host:port with an optional path, and a token belongs in the user entry`;
  }
  return undefined;
}

/**
 * A server URL as messages show it: scheme, host, port and path, without userinfo, query or
 * fragment, where a password or a token may sit (serverURLProblem); nothing of a text that is
 * no http(s) URL.
 * @internal
 */
export function shownServer(server: unknown): string {
  const url = typeof server === 'string' ? parsedServer(server) : undefined;
  if (url === undefined) return 'not shown';
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

/**
 * Whether loadFromDefault found nothing and fell back to client-node's placeholder: context
 * "loaded-context", cluster "cluster" at http://localhost:8080 without insecure-skip-tls-verify,
 * user "user" with no credentials. The same built on purpose for `kubectl proxy --port 8080` is
 * taken when it sets skipTLSVerify (as client-node 2.x alone sent to it): it is told from the
 * placeholder by that.
 * @internal
 */
export function isClientNodeFallback(kc: KubeConfig): boolean {
  return isFallback(currentOf(kc, 'kubeConfig'));
}

function isFallback({ cluster: currentCluster, context, user: currentUser }: CurrentMethods): boolean {
  if (currentCluster === undefined || context === undefined || currentUser === undefined) return false;
  const cluster = currentCluster();
  const user = currentUser();
  return (
    context() === 'loaded-context' &&
    cluster?.name === 'cluster' &&
    cluster.server === 'http://localhost:8080' &&
    cluster.skipTLSVerify !== true &&
    user?.name === 'user' &&
    Object.entries(user).every(([k, v]) => k === 'name' || v === undefined)
  );
}

/**
 * The options object: undefined → {}; anything but a plain object, or one with a key that is not
 * in `known`, is refused (input.ts optionsObject).
 * @internal
 */
export function optionsObject<T extends object>(options: unknown, owner: string, known: Readonly<Record<keyof T, true>>): Partial<T> {
  return checkOptions(options as T | undefined, owner, known);
}

/** The options KubernetesStore and KubernetesServiceCIDRs share: the API, the informer and its requests. */
export interface SharedOptions {
  /** networking.k8s.io version: 'v1' (GA, Kubernetes ≥ 1.33; default) or 'v1beta1' (1.31–1.32). */
  apiVersion?: ApiVersion | undefined;
  /**
   * A label selector for the cache (default: every object, like upstream's informer), in the API
   * server's syntax: `a=b`, `a==b`, `a!=b`, `a in (b,c)`, `a notin (b)`, `a`, `!a`, `a>2`, `a<5`.
   */
  labelSelector?: string | undefined;
  /** List page size; 0 = one request. Default 500. */
  pageSize?: number | undefined;
  /**
   * Re-list backoff after failures. Default 200 ms doubling to 30 s, ±20 % jitter; `initialMs`
   * greater than `maxMs` is refused. A longer wait the server asks for (Retry-After, up to 60 s)
   * is waited out all the same.
   */
  backoff?: BackoffOptions | undefined;
  /**
   * How long one API request (one page of a list; for KubernetesStore also its create, delete
   * and get) may wait for its answer, in ms. Default 30 000; Infinity waits for ever. A request
   * that runs out is aborted: a KubernetesApiError naming the operation, the server and the
   * timeout (its `timeoutMs` set, `code` undefined) — a timed-out create may still have created
   * the object; a list that runs out is retried after the backoff. It bounds each request, not a
   * call: a create or delete whose answer is lost reads the object back, and may send once more
   * and read back again, so the call may take up to about four times this before it rejects
   * (twice against a server that answers nothing). Watches are not limited by it
   * (a watch request has its own 90 s timer for the answer and for quiet, and the informer's
   * deadlines).
   */
  requestTimeoutMs?: number | undefined;
  /** Server-side watch timeout (seconds). Default random 300–600. */
  watchTimeoutSeconds?: number | undefined;
  /** Called when a subscriber throws (a watcher given to the cache's subscribe, a listener given to onStateChange). Default console.error. */
  onWatcherError?: ((err: unknown) => void) | undefined;
  /** Start the informer in the constructor. Default true; otherwise call start(). */
  start?: boolean | undefined;
}

/** @internal */
export const SHARED_OPTIONS: Readonly<Record<keyof SharedOptions, true>> = {
  apiVersion: true,
  labelSelector: true,
  pageSize: true,
  backoff: true,
  requestTimeoutMs: true,
  watchTimeoutSeconds: true,
  onWatcherError: true,
  start: true,
};

/**
 * The informer's options (shared by KubernetesStore and KubernetesServiceCIDRs): values the API
 * server takes. A fractional or negative page size or watch timeout would fail every list or
 * watch at the server, and a backoff out of range would retry at once or never. Returns the
 * backoff as checked, a copy for the informer: the caller's object is not read again at a later
 * failure (where a getter could answer a delay of 0, or a Proxy revoked since could throw).
 * @internal
 */
export function checkInformerOptions(
  options: { pageSize?: unknown; watchTimeoutSeconds?: unknown; backoff?: unknown; start?: unknown; onWatcherError?: unknown },
  owner: string,
): BackoffOptions | undefined {
  const { pageSize, watchTimeoutSeconds, backoff, start, onWatcherError } = options;
  if (start !== undefined && typeof start !== 'boolean') {
    throw new InvalidArgumentError(`${owner}: start must be true or false, got ${quoteInput(start)}`);
  }
  if (onWatcherError !== undefined && typeof onWatcherError !== 'function') {
    throw new InvalidArgumentError(`${owner}: onWatcherError must be a function, got ${quoteInput(onWatcherError)}`);
  }
  if (pageSize !== undefined && !(Number.isSafeInteger(pageSize) && (pageSize as number) >= 0)) {
    throw new InvalidArgumentError(`${owner}: pageSize must be a whole number ≥ 0 (0: one request), got ${quoteInput(pageSize)}`);
  }
  if (watchTimeoutSeconds !== undefined && !(Number.isSafeInteger(watchTimeoutSeconds) && (watchTimeoutSeconds as number) >= 1)) {
    throw new InvalidArgumentError(
      `${owner}: watchTimeoutSeconds must be a whole number of seconds ≥ 1, got ${quoteInput(watchTimeoutSeconds)}`,
    );
  }
  if (backoff === undefined) return undefined;
  const b = checkOptions(backoff as BackoffOptions, owner, { initialMs: true, maxMs: true, jitter: true }, 'options.backoff');
  const ms = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v) && v > 0);
  if (!ms(b.initialMs) || !ms(b.maxMs)) {
    throw new InvalidArgumentError(
      `${owner}: backoff.initialMs and backoff.maxMs must be finite numbers of ms > 0, got ${quoteInput(b.initialMs)} and ${quoteInput(b.maxMs)}`,
    );
  }
  // A first delay above the cap would be cut to the cap at once: the backoff would never grow.
  if (b.initialMs !== undefined && b.maxMs !== undefined && b.initialMs > b.maxMs) {
    throw new InvalidArgumentError(
      `${owner}: backoff.initialMs must be at most backoff.maxMs (the first delay cannot exceed the cap), got ${b.initialMs} and ${b.maxMs}`,
    );
  }
  if (b.jitter !== undefined && !(typeof b.jitter === 'number' && b.jitter >= 0 && b.jitter <= 1)) {
    throw new InvalidArgumentError(`${owner}: backoff.jitter must be a number from 0 to 1, got ${quoteInput(b.jitter)}`);
  }
  return b;
}

/** A label selector option: undefined or a string (trimmed; '' = none). @internal */
export function selectorOption(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidArgumentError(`labelSelector must be a string, got ${quoteInput(value)}`);
  const text = value.trim();
  return text === '' ? undefined : text;
}
