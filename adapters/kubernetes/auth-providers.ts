// The auth-provider of the current context's user, checked before any request is sent (one of
// user-checks.ts userProblem's questions): one kubectl refuses, or that gives @kubernetes/client-node
// nothing to send. client-node authenticates with the first of its authenticators that takes the
// user (azure, gcp, its own exec, a config's tokenFile, oidc, then the caller's), and sends the
// request without credentials, or fails with a TypeError naming no field, when none does or the
// one that does finds nothing. What an auth-provider's config holds (tokens) is never shown.
import type { KubeConfig, User } from '@kubernetes/client-node';
import { quoteText, showUnseen } from '../quote.ts';
import { oidcRefreshFailure } from './errors.ts';
import { authProviderNotRead, execEntryOf } from './kubeconfig-shape.ts';
import { sendsToPlainHttp } from './plain-http.ts';

/**
 * Why the current context's user has an auth-provider kubectl refuses, or that gives
 * @kubernetes/client-node nothing to send, as the end of a sentence naming the user; undefined when
 * it has none, or one that does, or client-node's own exec entry inside it: one that is no mapping,
 * whose name or a config value is no text (authProviderNotRead), one beside an exec entry, which
 * client-node leaves unused (execBesideAuthProvider), a tokenFile in its config, which client-node
 * reads and sends whatever the name (tokenFileInProvider), a name none of the authenticators takes
 * (`foo`, `""`), `exec` without an exec entry, an oidc one kubectl refuses or client-node sends no
 * token for (oidcProblem), or whose expired id-token it cannot refresh (oidcRefreshProblem), a gcp
 * or azure one client-node gets no token from (cloudProviderProblem). kubectl refuses each but the
 * one it refreshes (no Auth Provider found for name "foo"; No valid
 * id-token, and cannot refresh without refresh-token; …). For an http:// server only the first two
 * (one that is no mapping, one beside an exec entry), which kubectl refuses whatever the scheme: it
 * runs no auth-provider there, nor does client-node here (plain-http.ts). A KubeConfig-shaped
 * object without client-node's list of authenticators is not judged by it.
 * @internal
 */
export function authProviderProblem(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  const provider: unknown = user?.authProvider;
  if (provider === undefined || provider === null) return undefined;
  const context = getCurrentContext.call(kc);
  const beside = execBesideAuthProvider(user!, context);
  if (beside !== undefined) return beside;
  // client-node's own exec entry inside the auth-provider is what it runs instead
  if (execEntryOf(user) !== undefined) return undefined;
  const who = `the auth-provider of user ${quoteText(user!.name)} (context ${quoteText(context)})`;
  // one that is no mapping, whose name is no text, or a config value (`id-token: 12345`): said as the
  // loader says it, not as a name none takes or a token that is no JWT (kubectl cannot read it at all)
  const notRead = authProviderNotRead(provider);
  if (notRead !== undefined) return `${who} ${notRead}`;
  // the rest is what kubectl asks of an auth-provider it runs, and it runs none for an http://
  // server (nor does client-node here: plain-http.ts)
  if (sendsToPlainHttp(kc)) return undefined;
  const { name, config } = provider as { name?: unknown; config?: unknown };
  const without = 'and every request would go out without credentials';
  if (name === 'exec') {
    return (
      `${who} is named "exec" but holds no exec entry for @kubernetes/client-node to run, ${without} (kubectl refuses it too, ` +
      'saying no Auth Provider found for name "exec"); give the user an exec entry of its own (exec: {apiVersion: …, command: …})'
    );
  }
  const entries = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : undefined;
  const named = quoteText(typeof name === 'string' ? name : '');
  const tokenFile = tokenFileInProvider(name, entries, named);
  if (tokenFile !== undefined) return `${who} ${tokenFile}`;
  if (!takenByAuthenticator(kc, user!)) {
    return (
      `${who} is named ${named}, which none of the authenticators of @kubernetes/client-node takes, ${without} (kubectl refuses ` +
      `it too, saying no Auth Provider found for name ${named}); name one they take (oidc, gcp, azure), or use an exec entry (exec: {…}) instead`
    );
  }
  if (name === 'oidc') {
    const oidc = oidcProblem(entries ?? {}) ?? oidcRefreshProblem(kc, user!, entries ?? {});
    return oidc === undefined ? undefined : `${who} ${oidc}`;
  }
  if (name === 'gcp' || name === 'azure') {
    const cloud = cloudProviderProblem(name, entries);
    return cloud === undefined ? undefined : `${who} ${cloud}`;
  }
  return undefined;
}

/**
 * kubectl's refusal of `user`, the user of context `context`, when it has both an exec entry and an
 * auth-provider (clientcmd's validateAuthInfo: "authProvider cannot be provided in combination with
 * an exec plugin for u"), as the end of a sentence; undefined otherwise. client-node runs the exec
 * plugin and leaves the auth-provider unused without a word. config.ts userRefusedByKubectl counts
 * the same pair.
 */
function execBesideAuthProvider(user: User, context: string): string | undefined {
  const { exec, authProvider } = user as { exec?: unknown; authProvider?: unknown };
  if (exec === undefined || exec === null || authProvider === undefined || authProvider === null) return undefined;
  return (
    `the user ${quoteText(user.name)} (context ${quoteText(context)}) has an exec entry and an auth-provider, two ways to ` +
    `authenticate, which kubectl refuses too ("authProvider cannot be provided in combination with an exec plugin for ` +
    `${showUnseen(String(user.name))}"; @kubernetes/client-node would run the exec plugin alone): keep one, or use another context`
  );
}

/**
 * Why the auth-provider named `name` (quoted: `named`) with config `config` has a tokenFile
 * client-node reads, as the end of a sentence naming the auth-provider; undefined otherwise.
 * client-node's FileAuth takes any auth-provider whose config has a tokenFile, before its oidc
 * authenticator and the caller's (only azure, gcp and its own exec come first), reads the file
 * whole and synchronously — a named pipe nothing writes to stops the process for ever, timers and
 * all — and sends it as the token. kubectl has no such field: it reads an auth-provider by its
 * name alone. A user's own token-file is what kubectl reads (token-files.ts, bounded).
 */
function tokenFileInProvider(name: unknown, config: { tokenFile?: unknown } | undefined, named: string): string | undefined {
  if (!config?.tokenFile || name === 'gcp' || name === 'azure') return undefined;
  const kubectl =
    name === 'oidc'
      ? 'kubectl reads no tokenFile there, and sends the id-token'
      : `kubectl reads no tokenFile there, and refuses the auth-provider: no Auth Provider found for name ${named}`;
  return (
    'has a tokenFile in its config, which @kubernetes/client-node reads whole, holding up the process until it is read, and ' +
    `sends as the token, whatever the auth-provider's name (${kubectl}): give the user a token-file of its own ` +
    '(user: {tokenFile: …}), which is read as kubectl reads it, instead of the auth-provider'
  );
}

/**
 * Why kubectl refuses an oidc auth-provider whose config is `config`, or client-node would send no
 * token for it, as the end of a sentence naming the auth-provider; undefined otherwise. kubectl's
 * oidc plugin must have an idp-issuer-url and a client-id ("Must provide idp-issuer-url"), and
 * refuses an id-token that is no JWT ("ID Token is not a valid JWT"), or one past its exp (or
 * without one) when it has no refresh-token ("No valid id-token, and cannot refresh without
 * refresh-token"). client-node sends a valid id-token without the first two, and no token at all
 * for the others: it refreshes only a JWT whose exp has passed, with a refresh-token, a client-id
 * and an idp-issuer-url. What the config holds is not shown.
 */
function oidcProblem(config: Record<string, unknown>): string | undefined {
  const without = 'and every request would go out without credentials';
  const idToken = config['id-token'];
  const refreshable = Boolean(config['refresh-token']);
  if (!idToken) {
    return (
      `is oidc without an id-token in its config, and @kubernetes/client-node sends none without one (it refreshes only an ` +
      `id-token it has), ${without} (kubectl refuses it too: "No valid id-token, and cannot refresh without refresh-token" ` +
      'when it has no refresh-token); log in again to write its id-token, or use an exec entry (exec: {…}) that gets one'
    );
  }
  for (const field of ['idp-issuer-url', 'client-id']) {
    if (config[field]) continue;
    return (
      `is oidc without ${field === 'client-id' ? 'a' : 'an'} ${field} in its config, which kubectl refuses ("Must provide ${field}"), ` +
      'and @kubernetes/client-node could not refresh its id-token without it; log in again to write the config whole, or use an exec ' +
      'entry (exec: {…}) that gets a token'
    );
  }
  const exp = jwtExpiry(String(idToken));
  if (exp === 'no JWT') {
    return (
      'is oidc with an id-token that is no JWT (three base64url parts, its claims JSON; it is not shown), which kubectl refuses ' +
      `("ID Token is not a valid JWT") and @kubernetes/client-node sends no token for, ${without}; log in again to write its id-token`
    );
  }
  if (refreshable || (exp !== undefined && exp > Date.now() / 1000)) return undefined;
  return (
    `is oidc with an id-token ${exp === undefined ? 'that has no expiry (exp)' : 'that has expired'} and no refresh-token, which ` +
    'kubectl refuses ("No valid id-token, and cannot refresh without refresh-token")' +
    (exp === undefined ? '' : ` and @kubernetes/client-node sends no token for, ${without}`) +
    '; log in again to write a new id-token'
  );
}

/**
 * Why client-node cannot use the oidc auth-provider of `user` (config `config`, one kubectl takes:
 * oidcProblem asked first), as the end of a sentence naming the auth-provider; undefined when it
 * can. Its id-token has expired, and it has a refresh-token: client-node refreshes it before each
 * request, and the oidc authenticator of `kc` may be one that cannot (oidcRefreshFails), when every
 * request would fail. kubectl refreshes it, and writes the new tokens into the kubeconfig.
 */
function oidcRefreshProblem(kc: KubeConfig, user: User, config: Record<string, unknown>): string | undefined {
  const exp = jwtExpiry(String(config['id-token']));
  // client-node refreshes only an id-token whose exp has passed (none is never refreshed)
  if (typeof exp !== 'number' || exp > Date.now() / 1000 || !config['refresh-token']) return undefined;
  if (!oidcRefreshFails(authenticatorOf(kc, user))) return undefined;
  return `is oidc with an id-token that has expired, which this @kubernetes/client-node cannot refresh: ${oidcRefreshFailure('would fail')}`;
}

/**
 * Whether `authenticator`, client-node's oidc authenticator, is known to fail every refresh of an
 * expired id-token: client-node 1.x and 2.0 pass the config's idp-issuer-url, text, to openid-client
 * 6's discovery(), which takes only a URL object and throws ('"server" must be an instance of URL')
 * before any request. Told from what it does, not from its version, so a client-node that reads
 * the issuer as a URL is not refused: it is asked to refresh a made-up user, on an object of its own
 * (its expiry state left as it is), whose idp-issuer-url is a probe that notes how it is used, and
 * whose reading as text throws, so nothing is ever sent. All of that happens as the method is
 * called, before its first await: one that hands the probe to an `instanceof URL` as it is, and
 * never reads it as text, fails. Anything else (it reads the issuer as text, or later, or the
 * authenticator is not client-node's) is not refused. Asked only of a user it would refresh.
 */
function oidcRefreshFails(authenticator: unknown): boolean {
  const apply = (authenticator as { applyAuthentication?: unknown } | undefined)?.applyAuthentication;
  if (typeof apply !== 'function') return false;
  let checkedAsURL = false;
  let readAsText = false;
  const issuer = new Proxy(
    {},
    {
      getPrototypeOf: () => {
        checkedAsURL = true;
        return Object.prototype;
      },
      get: () => {
        readAsText = true; // toString, Symbol.toPrimitive, href: read as a URL's text, not handed on as it is
        throw new Error('probe: not an issuer');
      },
    },
  );
  const expired = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"exp":1}').toString('base64url')}.probe`;
  const probe = {
    name: 'probe',
    authProvider: {
      name: 'oidc',
      config: { 'idp-issuer-url': issuer, 'client-id': 'probe', 'id-token': expired, 'refresh-token': 'probe' },
    },
  };
  try {
    // an object of its own: client-node keeps the expiry it read on the authenticator
    const own = Object.assign(Object.create(authenticator as object) as object, { currentTokenExpiration: 0 });
    const pending: unknown = apply.call(own, probe, { headers: {} });
    if (typeof (pending as Promise<unknown> | undefined)?.then === 'function') (pending as Promise<unknown>).then(undefined, () => {});
    return checkedAsURL && !readAsText;
  } catch {
    return false; // one that throws as it is called is not known to fail a refresh
  }
}

/**
 * The first of client-node's authenticators of `kc` that takes `user`, the one that authenticates
 * its requests; undefined when `kc` has no such list, or none takes it.
 */
function authenticatorOf(kc: KubeConfig, user: User): unknown {
  const { authenticators } = kc as unknown as { authenticators?: unknown };
  if (!Array.isArray(authenticators)) return undefined;
  return authenticators.find((authenticator: { isAuthProvider?: unknown }) => {
    try {
      return typeof authenticator?.isAuthProvider === 'function' && Boolean(authenticator.isAuthProvider(user));
    } catch {
      return false;
    }
  });
}

/**
 * The exp of the JWT `token`, in seconds since the epoch; undefined when it has none (or one that is
 * no number, nor a number's text), 'no JWT' when it is not three parts whose second is JSON (base64url).
 */
function jwtExpiry(token: string): number | undefined | 'no JWT' {
  const parts = token.split('.');
  if (parts.length !== 3) return 'no JWT';
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return 'no JWT';
  }
  const exp = typeof claims === 'object' && claims !== null ? (claims as { exp?: unknown }).exp : undefined;
  const seconds = typeof exp === 'string' && exp.trim() !== '' ? Number(exp) : exp;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * Why client-node fails on every request of a gcp or azure auth-provider (`name`) whose config is
 * `config`, as the end of a sentence naming the auth-provider; undefined when it may get a token
 * from it. client-node sends its access-token, or, when there is none or its expiry has passed,
 * runs its cmd-path for one: without a config it fails with a TypeError naming no field ("Cannot
 * read properties of undefined"), without an access-token or a cmd-path with "Token is expired!".
 * kubectl 1.26 and later runs neither ("The gcp auth plugin has been removed").
 */
function cloudProviderProblem(name: 'gcp' | 'azure', config: Record<string, unknown> | undefined): string | undefined {
  if (config !== undefined && (config['access-token'] || config['cmd-path'])) return undefined;
  return (
    `is ${name} ${config === undefined ? 'without a config' : 'without an access-token or a cmd-path in its config'}, which ` +
    `@kubernetes/client-node gets no token from and fails on at every request (kubectl no longer runs the ${name} auth-provider ` +
    `at all: "The ${name} auth plugin has been removed"); use an exec entry (exec: {…}) that runs ` +
    `${name === 'gcp' ? 'gke-gcloud-auth-plugin' : 'kubelogin'} instead`
  );
}

/**
 * Whether one of the authenticators of `kc` (client-node's, then the caller's: kc.addAuthenticator)
 * takes `user`, as client-node asks it as each request is sent. A KubeConfig-shaped object without
 * that list is not judged: taken. An authenticator that throws when asked is taken to take it: the
 * request then fails on it, not anonymous.
 */
function takenByAuthenticator(kc: KubeConfig, user: User): boolean {
  const { authenticators, custom_authenticators: custom } = kc as unknown as { authenticators?: unknown; custom_authenticators?: unknown };
  if (!Array.isArray(authenticators)) return true;
  return [...authenticators, ...(Array.isArray(custom) ? custom : [])].some((authenticator: { isAuthProvider?: unknown }) => {
    if (typeof authenticator?.isAuthProvider !== 'function') return false;
    try {
      return Boolean(authenticator.isAuthProvider(user));
    } catch {
      return true;
    }
  });
}
