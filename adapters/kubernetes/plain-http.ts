// No credentials to an http:// server, as kubectl sends none.
//
// client-go reads a kubeconfig user's credentials only for a server reached over TLS
// (tools/clientcmd/client_config.go, DirectClientConfig.ClientConfig: "only try to read the auth
// information if we are secure" — the token, the token-file, the username and password, the
// client certificate, the auth-provider and the exec plugin are merged only when
// restclient.IsConfigTransportTLS holds, an https:// server). The impersonation (`as`, `as-uid`,
// `as-groups`, `as-user-extra`) is taken before that, whatever the scheme: it names whom to act
// as, and is sent on. So kubectl sends an http:// server — `kubectl proxy` on 127.0.0.1:8001,
// which adds its own credentials on the way to the cluster, or a test server — every request
// without credentials, and never runs the exec plugin or auth-provider that would produce one.
// client-node sends them all in clear text, to any host on the way.
//
// Here, the same: client-node authenticates a request to an http:// server for a user that holds
// its name, its `as` and its client certificate alone, which no http:// connection sends
// (withoutCredentialsOverPlainHttp). The scheme is read as each request is authenticated: the URL
// the request goes to, where client-node gives it (an API client keeps the server it was made for,
// whatever context is made current after), and the current cluster's server; either http:// is
// enough.
import type { KubeConfig, User } from '@kubernetes/client-node';

/** Whether `server` is an http:// URL; a URL's scheme is case-insensitive: `HTTP://host` too. @internal */
export function isPlainHttp(server: unknown): boolean {
  return typeof server === 'string' && /^http:/i.test(server);
}

/** Whether the requests of `kc` go, as it stands now, to an http:// server: its current cluster's. @internal */
export function sendsToPlainHttp(kc: KubeConfig): boolean {
  const { getCurrentCluster } = kc as Partial<KubeConfig>;
  return typeof getCurrentCluster === 'function' && isPlainHttp(getCurrentCluster.call(kc)?.server);
}

/**
 * Whether a request of `kc` goes to an http:// server: the URL of its RequestContext
 * (`request`, what applySecurityAuthentication is given), or the current cluster's server, either
 * http:// (applyToHTTPSOptions and applyToFetchOptions are given no URL; the 1.x watch takes its
 * URL from that cluster as it is sent: watch-request.ts).
 * @internal
 */
export function goesToPlainHttp(kc: KubeConfig, request?: unknown): boolean {
  const getUrl: unknown = (request as { getUrl?: unknown } | null | undefined)?.getUrl;
  return (typeof getUrl === 'function' && isPlainHttp(getUrl.call(request))) || sendsToPlainHttp(kc);
}

/**
 * `user` as kubectl sends it to an http:// server: its name and whom it impersonates (`as`), no
 * token, password, exec plugin or auth-provider. Its client certificate and key stay: they go
 * only into a TLS handshake, which an http:// connection has none of, so nothing of them is sent;
 * client-node reads them as before, and a file that cannot be read (or holds no certificate or
 * key: tls-material.ts) is refused as over https:// — kubectl opens them whatever the scheme
 * (clientcmd's validateAuthInfo).
 */
function withoutCredentials(user: User | null): User | null {
  if (user === null || typeof user !== 'object') return user;
  const { name, impersonateUser, certFile, certData, keyFile, keyData } = user;
  const kept = Object.entries({ impersonateUser, certFile, certData, keyFile, keyData }).filter(([, value]) => value !== undefined);
  return { name, ...Object.fromEntries(kept) } as User;
}

/** The methods by which client-node (2.x and 1.x) authenticates a request, each reading the current user. */
const AUTHENTICATING = ['applySecurityAuthentication', 'applyToHTTPSOptions', 'applyToFetchOptions'] as const;

/**
 * `kc` as every request authenticates with it: to an http:// server without any of its user's
 * credentials — no Authorization header (token, token-file, username and password, an exec
 * plugin's or an auth-provider's token, which are not asked for: the plugin or the provider's
 * command is not run, nor an authenticator added with kc.addAuthenticator) — as kubectl sends it;
 * the impersonation is kept. An object that reads everything from `kc` (its prototype) and whose
 * authenticating methods run client-node's with a current user bare of credentials
 * (withoutCredentials) when the request goes to an http:// server (goesToPlainHttp), and as they
 * are otherwise. The wrappers above it (impersonation.ts, the others of config.ts
 * kubeConfigAsSent) still see the user as the kubeconfig gives it.
 * @internal
 */
export function withoutCredentialsOverPlainHttp(kc: KubeConfig): KubeConfig {
  if (typeof kc.getCurrentUser !== 'function') return kc;
  const bare = Object.create(kc) as KubeConfig;
  bare.getCurrentUser = () => withoutCredentials(kc.getCurrentUser());
  // nor an authenticator the caller added (kc.addAuthenticator), which may take any user
  Object.defineProperty(bare, 'custom_authenticators', { value: [] });
  const sending = Object.create(kc) as KubeConfig;
  for (const name of AUTHENTICATING) {
    const method: unknown = Reflect.get(kc, name);
    if (typeof method !== 'function') continue;
    Reflect.set(sending, name, (...args: unknown[]) => method.apply(goesToPlainHttp(kc, args[0]) ? bare : kc, args));
  }
  return sending;
}
