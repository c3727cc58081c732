// The current context's user, checked before any request is sent, where client-node would send
// it without credentials and a 401 or 403 would read as the server refusing credentials never
// sent: a user the context names but the kubeconfig does not hold (missingUser); a field that is
// no text, an exec entry kubectl refuses, an auth-provider kubectl refuses or that gives nothing
// (auth-providers.ts), an empty token, a token no header can hold, a token beside a username or
// password, half a client certificate, one that does not parse for an http:// server, an
// impersonation that cannot be sent (userProblem);
// and, as each request is authenticated, an exec plugin that gave nothing (withCredentialCheck).
// Each says why as the end of a sentence naming the user, never with the credential. The library
// (config.ts kubeConfigOrDefault) and the command line ask the same questions.
import type { KubeConfig, User } from '@kubernetes/client-node';
import { IPAllocatorError, nameErrorClasses } from '../errors.ts';
import { quoteInput, quoteText, showUnseen } from '../quote.ts';
import {
  basicAuthorization,
  controlCharacterInside,
  hasHeaderControlCharacter,
  NO_HEADER_HOLDS_IT,
  sendsThroughNodeFetch,
} from './header-values.ts';
import { impersonationProblem } from './impersonation.ts';
import { authProviderProblem } from './auth-providers.ts';
import { execEntryNotRead, execEntryOf, notTextKind } from './kubeconfig-shape.ts';
import { goesToPlainHttp, isPlainHttp, sendsToPlainHttp } from './plain-http.ts';
import { clientCertificateProblem } from './tls-material.ts';

/**
 * kubectl's refusal of a current context whose user the kubeconfig does not hold (client-go's
 * validateContext: `user "x" was not found for context "y"`); undefined when it holds it, or the
 * context names no user (no credentials, on purpose). client-node would send every request
 * without credentials, and a 401 would then read as the server refusing them. A KubeConfig-shaped
 * object without getContextObject or getUser is not judged.
 * @internal
 */
export function missingUser(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getContextObject, getUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getContextObject !== 'function' || typeof getUser !== 'function') {
    return undefined;
  }
  const context = getCurrentContext.call(kc);
  const user = getContextObject.call(kc, context)?.user;
  if (typeof user !== 'string' || user === '' || getUser.call(kc, user) !== null) return undefined;
  return `user ${quoteText(user)} was not found for context ${quoteText(context)}`;
}

/**
 * Why the current context's user cannot be used as the kubeconfig gives it, as the end of a
 * sentence naming the user; undefined when it can. The library (kubeConfigOrDefault) and the
 * command line refuse it before any request: a field that is no text (nonTextCredential), an exec
 * entry kubectl refuses (execEntryProblem), an auth-provider that gives client-node nothing to send
 * (authProviderProblem), an empty token (emptyToken), a token no header can
 * hold (tokenNoHeaderHolds), a token beside a username or password (moreThanOneAuthMethod), a
 * token-file beside a username (tokenFileBesideUsername), a username holding a ":"
 * (usernameWithColon) — for an http:// server only what kubectl refuses whatever the scheme, since
 * no credential is sent there (sentCredentialProblem, authProviderProblem) —, half
 * a client certificate (halfClientCertificate), a client certificate or key that does not parse
 * for an http:// server (plainHttpClientCertificate), an impersonation that cannot be sent as
 * kubectl sends it (impersonation.ts impersonationProblem).
 * @internal
 */
export function userProblem(kc: KubeConfig): string | undefined {
  return (
    nonTextCredential(kc) ??
    execEntryProblem(kc) ??
    authProviderProblem(kc) ??
    sentCredentialProblem(kc) ??
    moreThanOneAuthMethod(kc) ??
    halfClientCertificate(kc) ??
    plainHttpClientCertificate(kc) ??
    impersonationProblem(kc)
  );
}

/**
 * Why the token or username the current context's user would be sent with cannot be sent as it
 * is (emptyToken, tokenNoHeaderHolds, tokenFileBesideUsername, usernameWithColon); undefined when
 * it can, or when the server is http://: no credentials go there (plain-http.ts), and kubectl,
 * which reads them only for an https:// server, takes the user without a word.
 */
function sentCredentialProblem(kc: KubeConfig): string | undefined {
  if (sendsToPlainHttp(kc)) return undefined;
  return emptyToken(kc) ?? tokenNoHeaderHolds(kc) ?? tokenFileBesideUsername(kc) ?? usernameWithColon(kc);
}

/**
 * Why the current context's user has a client certificate or key that cannot be used
 * (tls-material.ts clientCertificateProblem: one that does not parse, a key that is not the
 * certificate's) while its cluster's server is http://, as the end of a sentence naming the user
 * and the field; undefined otherwise. Over http:// no TLS connection reads them, yet client-node
 * 2.x builds its TLS options from them for every request and fails it on them: refused before any
 * request instead, saying so. (kubectl reads a user's client certificate only for an https://
 * server, and takes this user for an http:// one.) Over https:// the request fails on it, and the
 * failure names the field (transportProblem).
 * @internal
 */
export function plainHttpClientCertificate(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentCluster, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentCluster !== 'function' || typeof getCurrentUser !== 'function') {
    return undefined;
  }
  const server: unknown = getCurrentCluster.call(kc)?.server;
  const user = getCurrentUser.call(kc);
  if (!isPlainHttp(server) || typeof user !== 'object' || user === null) return undefined;
  const problem = clientCertificateProblem(user);
  if (problem === undefined) return undefined;
  return (
    `${problem}: the server is http://, where no client certificate is sent, yet @kubernetes/client-node 2.x fails ` +
    'every request on it (kubectl, which reads it only for an https:// server, takes it); correct it, or use another context'
  );
}

/**
 * Why the current context's user has a token that cannot be sent in an Authorization header, as
 * the end of a sentence naming the user and the field; undefined when it can. kubectl sends a
 * kubeconfig's token as it is (client-go trims a token-file's, not a token's), and Go's HTTP
 * client refuses a header holding a control character (header-values.ts), saying so
 * before anything is sent. Line breaks at its end are left out by the fetch of client-node 2.x
 * (spaces and line breaks around every header value, the Fetch standard's normalisation), and
 * the token is sent without them: that is left as it is, since the token of a KubeConfig loaded
 * by client-node may come from a token-file it read, whose line break kubectl leaves out too.
 * client-node 1.x's node-fetch refuses them with a message that quotes the token: refused here.
 * The token is never shown.
 * @internal
 */
export function tokenNoHeaderHolds(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  const token: unknown = user?.token;
  if (typeof token !== 'string') return undefined;
  const trimmed = token.replace(/[\t\n\r ]+$/, ''); // as fetch sends it
  if (!hasHeaderControlCharacter(sendsThroughNodeFetch(kc) ? token : trimmed)) return undefined;
  const who = `the token of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))})`;
  if (hasHeaderControlCharacter(trimmed)) return controlCharacterInside(who);
  return (
    `${who} ends in a line break, which @kubernetes/client-node 1.x sends as it is, and ${NO_HEADER_HOLDS_IT}: ` +
    'remove it from the token, or from the token-file client-node read it from, or use @kubernetes/client-node 2.x, whose fetch leaves it out'
  );
}

/**
 * Why the current context's user has a token beside a username or password, as the end of a
 * sentence naming the user; undefined otherwise. kubectl refuses such a user (clientcmd's
 * validateAuthInfo: "more than one authentication method found for …; found [token basicAuth],
 * only one is allowed"), whether its context is used or a pod's service account would be taken in
 * its stead (config.ts userRefusedByKubectl); client-node sends the token alone, and the username
 * and password the kubeconfig names would go unused without a word. Only a token the kubeconfig
 * gives counts, as for validateAuthInfo: one read from a token-file (token-files.ts attaches it as
 * a getter) does not (kubectl's transport refuses one beside a username later, "username/password
 * or bearer token may be set, but not both": tokenFileBesideUsername, which does not decide
 * whether a pod's service account is taken).
 * @internal
 */
export function moreThanOneAuthMethod(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  if (typeof user !== 'object' || user === null) return undefined;
  const token: unknown = Object.getOwnPropertyDescriptor(user, 'token')?.value;
  if (typeof token !== 'string' || token === '' || !(user.username || user.password)) return undefined;
  return (
    `the user ${quoteText(user.name)} (context ${quoteText(getCurrentContext.call(kc))}) has a token and a ` +
    `${user.username ? 'username' : 'password'}, two ways to authenticate, which kubectl refuses too ("more than one ` +
    'authentication method found"; @kubernetes/client-node would send the token alone): keep one, or use another context'
  );
}

/**
 * Why the current context's user has a token-file beside a username, as the end of a sentence
 * naming the user; undefined otherwise. kubectl's transport refuses the pair ("username/password
 * or bearer token may be set, but not both": client-go's transport counts a username, not a
 * password alone, as basic auth), where client-node would send the file's token alone. The
 * loader keeps a token-file's token as a getter on the user (token-files.ts attachTo).
 * @internal
 */
export function tokenFileBesideUsername(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  if (typeof user !== 'object' || user === null || !user.username) return undefined;
  if (Object.getOwnPropertyDescriptor(user, 'token')?.get === undefined) return undefined;
  return (
    `the user ${quoteText(user.name)} (context ${quoteText(getCurrentContext.call(kc))}) has a token-file and a ` +
    'username, two ways to authenticate, which kubectl refuses too ("username/password or bearer token may be set, but not ' +
    'both"; @kubernetes/client-node would send the token alone): keep one, or use another context'
  );
}

/**
 * Why the current context's user has a username holding a ":", as the end of a sentence naming
 * the user; undefined otherwise. HTTP basic authentication sends `username:password`, and a
 * username cannot hold a ":" (RFC 7617): the server reads the username up to the first one, and
 * the rest as part of the password, so the request authenticates someone else, or no one.
 * client-node sends it so, and kubectl too (Go's SetBasicAuth does not check it), which fails at
 * the server as a wrong password; refused here before anything is sent. The username is not
 * shown: a password put in it (`admin:secret`) would be.
 * @internal
 */
export function usernameWithColon(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  const username: unknown = user?.username;
  if (typeof username !== 'string' || !username.includes(':')) return undefined;
  return (
    `the username of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))}) holds a ":", which HTTP basic ` +
    'authentication cannot carry (RFC 7617): the server would read the username only up to it, and the rest as part of the ' +
    'password (kubectl sends it so all the same; it is not shown); put the username alone in username, and the password in password'
  );
}

/**
 * Whether `user` has a username and no password (none, or null): client-node builds its basic
 * authentication from both, `${username}:${password}`, and sends `admin:undefined`.
 */
function passwordMissing(user: User | null | undefined): user is User & { username: string } {
  return typeof user?.username === 'string' && user.username !== '' && (user.password === undefined || user.password === null);
}

/**
 * `kc` as every request sends a username without a password: as `username:` (an empty
 * password), as kubectl sends it, where client-node sends `username:undefined` (`username:null`
 * for `password:` left empty) and the server reads the password "undefined". `kc` itself when
 * none of its users has a username without a password; otherwise an object that reads everything
 * from `kc` (its prototype) and, after client-node's authentication, replaces the Authorization
 * header client-node built so for the user current as the request is sent (the one a token or a
 * plugin put there instead is left as it is). With client-node 1.x its watch, authenticated by
 * applyToFetchOptions, is sent the same way.
 * @internal
 */
export function withEmptyPassword(kc: KubeConfig): KubeConfig {
  if (typeof kc.getCurrentUser !== 'function' || !Array.isArray(kc.users) || !kc.users.some(passwordMissing)) return kc;
  const sending = Object.create(kc) as KubeConfig;
  /** The header to send instead of `sent`, or undefined when `sent` is not client-node's `username:undefined`. */
  const instead = (sent: unknown): string | undefined => {
    const user = kc.getCurrentUser();
    if (!passwordMissing(user) || sent !== basicAuthorization(`${user.username}:${user.password}`)) return undefined;
    return basicAuthorization(`${user.username}:`);
  };
  sending.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication(context);
    if (typeof context.getHeaders !== 'function') return;
    const { Authorization: sent } = context.getHeaders();
    const header = instead(sent);
    if (header !== undefined) context.setHeaderParam('Authorization', header);
  };
  const legacy = kc as unknown as { applyToFetchOptions?: (options: object) => Promise<{ headers?: unknown }> };
  if (typeof legacy.applyToFetchOptions === 'function') {
    (sending as unknown as typeof legacy).applyToFetchOptions = async (options) => {
      const init = await legacy.applyToFetchOptions!.call(kc, options);
      const headers = init.headers as { get?: (name: string) => string | null; set?: (name: string, value: string) => void } | undefined;
      if (typeof headers?.get !== 'function' || typeof headers.set !== 'function') return init;
      const header = instead(headers.get('Authorization'));
      if (header !== undefined) headers.set('Authorization', header);
      return init;
    };
  }
  return sending;
}

/**
 * Why the current context's user has a field that is no text — a token written as a list or a
 * number (`token: [a, b]`, `token: 12345`) —, as the end of a sentence naming the user and the
 * field; undefined when each is text or absent. client-node takes such a value as it is, and
 * sends `Bearer a,b`; kubectl fails to decode the kubeconfig. The value is not shown. A token the
 * loader reads from a token-file (a getter: token-files.ts attachTo) is text, and is not asked
 * for: that would read the file, which kubectl does not for an http:// server.
 * @internal
 */
export function nonTextCredential(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc) as unknown as Record<string, unknown> | null;
  if (typeof user !== 'object' || user === null) return undefined;
  for (const [property, field] of TEXT_FIELDS) {
    if (Object.getOwnPropertyDescriptor(user, property)?.get !== undefined) continue;
    const value = user[property];
    if (value === undefined || value === null || typeof value === 'string') continue;
    return (
      `the ${field} of user ${quoteText(user['name'] as string)} (context ${quoteText(getCurrentContext.call(kc))}) is ` +
      `${notTextKind(value)}, not text (it is not shown), and would be used as it is (kubectl cannot read it either); ` +
      'write it as text, quoted where YAML would read it as something else'
    );
  }
  return undefined;
}

/**
 * A user's fields client-node uses as they are, by its User property and the kubeconfig's name:
 * the token, username, password and `as` go into headers (`token: [a, b]` as "Bearer a,b"), the
 * files are read by their value (a number as a file descriptor), the data decoded from it.
 */
const TEXT_FIELDS: readonly (readonly [property: string, field: string])[] = [
  ['token', 'token'],
  ['username', 'username'],
  ['password', 'password'],
  ['impersonateUser', 'as'],
  ['certFile', 'client-certificate'],
  ['keyFile', 'client-key'],
  ['certData', 'client-certificate-data'],
  ['keyData', 'client-key-data'],
];

/** The versions of ExecCredential an exec entry may ask for, as kubectl takes them (v1alpha1 is gone since 1.24). @internal */
export const EXEC_API_VERSIONS: readonly string[] = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/**
 * Why the current context's user has an exec entry kubectl refuses — one it cannot read
 * (execEntryNotRead), no apiVersion, or one that
 * is not an ExecCredential version it takes (EXEC_API_VERSIONS), no command (commandProblem), an
 * env entry without a name (envWithoutName), or
 * an interactiveMode it refuses (interactiveModeProblem) —, as the end of a sentence naming the
 * user; undefined when it has none, or a good one. client-node runs the plugin
 * whatever the entry says, and takes whatever it prints: the version is what it is checked against.
 * @internal
 */
export function execEntryProblem(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  const entry = execEntryOf(user);
  const notRead = execEntryNotRead(entry);
  if (notRead !== undefined) {
    return `the exec entry of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))}) ${notRead}`;
  }
  const exec = entry as { apiVersion?: unknown; command?: unknown; env?: unknown; interactiveMode?: unknown } | undefined;
  if (typeof exec !== 'object' || exec === null) return undefined;
  const version = exec.apiVersion;
  if (typeof version === 'string' && EXEC_API_VERSIONS.includes(version)) {
    const wrong =
      commandProblem(exec, String(user!.name)) ??
      envWithoutName(exec, String(user!.name)) ??
      interactiveModeProblem(exec, String(user!.name));
    return wrong === undefined
      ? undefined
      : `the exec entry of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))}) ${wrong}`;
  }
  const has =
    version === undefined || version === null || version === ''
      ? 'has no apiVersion'
      : typeof version === 'string'
        ? `has apiVersion ${quoteInput(version)}`
        : `has an apiVersion that is ${notTextKind(version)}`;
  return (
    `the exec entry of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))}) ${has}, ` +
    `which kubectl refuses too ("exec plugin: invalid apiVersion"): set it to the version of ExecCredential its plugin prints, ${EXEC_API_VERSIONS.join(' or ')}`
  );
}

/**
 * Why kubectl refuses the command of `exec`, the exec entry of kubeconfig user `user`: it names
 * none (absent, null or empty), as the end of a sentence naming the entry; undefined when it names
 * one. As clientcmd's validateAuthInfo; client-node refuses it only as a request is sent ("No
 * command was specified for exec authProvider!"), naming neither the user nor the field. A
 * command that is no text is refused before (execEntryNotRead). In kubectl's words here and below
 * the user's name stands bare, so what a reader cannot see is escaped (showUnseen): a line break or
 * an escape sequence in a kubeconfig's name must reach no terminal or log.
 */
function commandProblem(exec: { command?: unknown }, user: string): string | undefined {
  const command = exec.command;
  if (command !== undefined && command !== null && command !== '') return undefined;
  return (
    `has no command, which kubectl refuses too ("command must be specified for ${showUnseen(user)} to use exec authentication plugin"): ` +
    'set command to the program that prints its ExecCredential'
  );
}

/**
 * Why kubectl refuses the env of `exec`, the exec entry of kubeconfig user `user`: an entry
 * without a name (none, empty, or the entry null), as the end of a sentence naming the entry;
 * undefined otherwise. As clientcmd's validateAuthInfo; client-node would run the plugin with the
 * variable "undefined" set, or fail on a null entry as a request is sent.
 */
function envWithoutName(exec: { env?: unknown }, user: string): string | undefined {
  if (!Array.isArray(exec.env)) return undefined;
  const i = (exec.env as unknown[]).findIndex((entry) => !(entry as { name?: unknown } | null)?.name);
  if (i < 0) return undefined;
  return (
    `has an env entry (number ${i + 1}) without a name, which kubectl refuses too ("env variable name must be specified for ${showUnseen(user)} ` +
    'to use exec authentication plugin"): name the variable, or remove the entry'
  );
}

/** The values of an exec entry's interactiveMode kubectl takes. @internal */
export const INTERACTIVE_MODES: readonly string[] = ['Never', 'IfAvailable', 'Always'];

/**
 * Why kubectl refuses the interactiveMode of `exec`, the exec entry of kubeconfig user `user`, as
 * the end of a sentence naming the entry ("has no interactiveMode, …"); undefined when it takes
 * it. As clientcmd's validateAuthInfo, after the defaults of its v1 kubeconfig (SetDefaults_ExecConfig):
 * an entry of v1beta1 without one is taken as IfAvailable, one of v1 must name it; any other
 * value than INTERACTIVE_MODES is refused. client-node reads no interactiveMode at all.
 * @internal
 */
export function interactiveModeProblem(exec: { apiVersion?: unknown; interactiveMode?: unknown }, user: string): string | undefined {
  const mode = exec.interactiveMode;
  const set = 'set interactiveMode Never (a plugin that never asks the user: a service), IfAvailable or Always';
  if (mode === undefined || mode === null || mode === '') {
    if (exec.apiVersion !== 'client.authentication.k8s.io/v1') return undefined;
    return (
      `has no interactiveMode, which an exec entry of apiVersion client.authentication.k8s.io/v1 must have, and kubectl refuses it too ` +
      `("interactiveMode must be specified for ${showUnseen(user)} to use exec authentication plugin"): ${set}`
    );
  }
  if (typeof mode === 'string' && INTERACTIVE_MODES.includes(mode)) return undefined;
  return `has interactiveMode ${quoteInput(mode)}, which kubectl refuses too ("invalid interactiveMode for ${showUnseen(user)}"): ${set}`;
}

/**
 * Why the current context's user has a token that is empty, or only whitespace, as the end of a
 * sentence; undefined when it has none, or a real one. client-node reads a token-file into the
 * user's token, and sends no Authorization header when that is empty: every request would go
 * out anonymous, and a 401 or 403 would read as the server refusing credentials never sent.
 * kubectl refuses such a file (client-go: `read empty token from file`). A token given empty in
 * the kubeconfig (`token: ""`) is no token at all, for client-node and kubectl alike: client-node
 * then reads the token-file, if any, so an empty token it holds came from one.
 * @internal
 */
export function emptyToken(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  const token: unknown = user?.token;
  if (typeof token !== 'string' || token.trim() !== '') return undefined;
  return (
    `the token of user ${quoteText(user!.name)} (context ${quoteText(getCurrentContext.call(kc))}) is empty: ` +
    'its token-file holds nothing, or only whitespace, and every request would go out without credentials ' +
    '(kubectl refuses it too: "read empty token from file"); write the token into the file, or use another context'
  );
}

/**
 * Why the current context's user has a client certificate without its key, or a key without
 * its certificate (either by file or by -data), as the end of a sentence naming the user and
 * the field; undefined when it has both or neither. client-node then connects without a client
 * certificate: every request would go out without credentials, and a 401 would read as the
 * server refusing them. kubectl refuses a certificate without a key (client-go's
 * validateAuthInfo: `client-key-data or client-key must be specified for "u" to use the
 * clientCert authentication method`) and uses no key without a certificate.
 * @internal
 */
export function halfClientCertificate(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  if (typeof user !== 'object' || user === null) return undefined;
  // client-node reads a file before the data, and neither when it is empty
  const cert = user.certFile ? 'client-certificate' : user.certData ? 'client-certificate-data' : undefined;
  const key = user.keyFile ? 'client-key' : user.keyData ? 'client-key-data' : undefined;
  if ((cert === undefined) === (key === undefined)) return undefined;
  const has =
    cert !== undefined ? `a ${cert} but no client-key or client-key-data` : `a ${key} but no client-certificate or client-certificate-data`;
  return (
    `the user ${quoteText(user.name)} (context ${quoteText(getCurrentContext.call(kc))}) has ${has}: ` +
    'no client certificate would be sent, and every request would go out without credentials' +
    (cert !== undefined ? ' (kubectl refuses it too: "client-key-data or client-key must be specified")' : '') +
    `; add its ${cert !== undefined ? 'key' : 'certificate'}, or use another context`
  );
}

/**
 * A request refused before it was sent: the exec credential plugin of the kubeconfig's user gave
 * nothing to authenticate with — its ExecCredential's status holds no token and no client
 * certificate — and client-node would send the request anonymous; or it printed JSON that is no
 * ExecCredential of the version its exec entry asks for (`{"kind":"Pod", …}`), whose token
 * client-node would send all the same; or a client certificate without its key, or a key without
 * its certificate. kubectl refuses the same answers (client-go: `exec plugin didn't return a
 * token or cert/key pair`, `exec plugin is configured to use API version …, plugin returned
 * version …`, `exec plugin returned only certificate or key, not both`).
 */
export class KubeconfigCredentialError extends IPAllocatorError {
  static override readonly code = 'ERR_KUBECONFIG_CREDENTIAL' as const;
  declare readonly code: 'ERR_KUBECONFIG_CREDENTIAL';
  /** The kubeconfig user whose plugin it was. */
  readonly user: string;
  /** What the plugin gave, as the end of a sentence starting "the exec credential plugin of user …". */
  readonly reason: string;
  /**
   * The kubeconfig to correct, `context "x" of the kubeconfig "/path"` (config.ts
   * kubeconfigInUse), when a store loaded it itself; undefined for a KubeConfig the caller gave,
   * whose file is not known.
   */
  readonly kubeconfig: string | undefined;
  /**
   * @param reason what the plugin gave, as the end of a sentence starting "the exec credential
   *   plugin of user …"; by default: no credential
   * @param kubeconfig the kubeconfig to correct, named first in the message
   */
  constructor(
    user: string,
    reason = "returned no credential: its ExecCredential's status holds no token and no client certificate, and the request " +
      'would go out without credentials (kubectl refuses it too: "exec plugin didn\'t return a token or cert/key pair")',
    kubeconfig?: string,
  ) {
    super(
      `${kubeconfig === undefined ? '' : `cannot use ${kubeconfig}: `}the exec credential plugin of user ${quoteText(user)} ` +
        `${reason}; the request was not sent`,
    );
    this.user = user;
    this.reason = reason;
    this.kubeconfig = kubeconfig;
  }
}
nameErrorClasses({ KubeconfigCredentialError });

/**
 * `err`, or, when it is a KubeconfigCredentialError that names no kubeconfig and `inUse` is known
 * (config.ts kubeconfigInUse: the store loaded the kubeconfig itself), the same failure naming the
 * kubeconfig to correct, as the command line names it. The plugin runs deep inside client-node's
 * authentication, where the kubeconfig's file is not known: it is named where the request failed.
 * @internal
 */
export function namingKubeconfig(err: unknown, inUse: string | undefined): unknown {
  if (inUse === undefined || !(err instanceof KubeconfigCredentialError) || err.kubeconfig !== undefined) return err;
  return new KubeconfigCredentialError(err.user, err.reason, inUse);
}

/**
 * `kc` as every request of the library and the command line authenticates with it, refusing
 * to send a request its user's exec credential plugin gave nothing for (KubeconfigCredentialError)
 * — client-node sends it anonymous: an object that reads everything from `kc` (its prototype)
 * and checks each request whose user, current as it is sent, has an exec plugin (the current
 * context may be set to another, or a user added, after `kc` was taken), after client-node has
 * authenticated it: one without an Authorization header is
 * authenticated again into options (applyToHTTPSOptions; the plugin's answer is kept for it, so
 * the plugin is not run twice) to see whether a client certificate came instead. With client-node
 * 1.x its watch, authenticated by applyToFetchOptions, is checked the same way. A request to an
 * http:// server is not: no plugin is run for it, and it goes out without credentials, as
 * kubectl sends it (plain-http.ts).
 * @internal
 */
export function withCredentialCheck(kc: KubeConfig): KubeConfig {
  // whatever its users are now: its current context may be set to another since, or a user added
  if (typeof kc.getCurrentUser !== 'function') return kc;
  const checked = Object.create(kc) as KubeConfig;
  checked.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication(context);
    const user = kc.getCurrentUser();
    // a KubeConfig-shaped object without applyToHTTPSOptions (another copy's, older) is not judged
    // no plugin is run for an http:// server, as kubectl runs none (plain-http.ts)
    if (execEntryOf(user) === undefined || typeof kc.applyToHTTPSOptions !== 'function' || goesToPlainHttp(kc, context)) return;
    if (typeof context.getHeaders !== 'function' || context.getHeaders()['Authorization']) return;
    const options: { headers: Record<string, string>; cert?: unknown } = { headers: {} };
    await kc.applyToHTTPSOptions(options as Parameters<KubeConfig['applyToHTTPSOptions']>[0]);
    if (options.headers['Authorization'] === undefined && !options.cert) throw new KubeconfigCredentialError(user?.name ?? '');
  };
  // client-node 1.x sends a watch with the fetch options of applyToFetchOptions (node-fetch), not
  // through applySecurityAuthentication: checked too, from the options it authenticated into
  const legacy = kc as unknown as { applyToFetchOptions?: (options: { cert?: unknown }) => Promise<{ headers?: unknown }> };
  if (typeof legacy.applyToFetchOptions === 'function') {
    (checked as unknown as typeof legacy).applyToFetchOptions = async (options) => {
      const init = await legacy.applyToFetchOptions!.call(kc, options);
      const user = kc.getCurrentUser();
      if (execEntryOf(user) === undefined || sendsToPlainHttp(kc)) return init;
      const headers = init.headers as { get?: (name: string) => string | null } | undefined;
      if (typeof headers?.get !== 'function' || headers.get('Authorization') || options.cert) return init;
      throw new KubeconfigCredentialError(user?.name ?? '');
    };
  }
  return checked;
}
