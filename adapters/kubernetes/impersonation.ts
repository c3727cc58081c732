// A kubeconfig user's impersonation beyond `as`: `as-uid`, `as-groups` and `as-user-extra`, which
// client-node drops as it parses the kubeconfig (it keeps `as` alone, sent as Impersonate-User).
// kubectl sends them as client-go's impersonatingRoundTripper does (transport/round_trippers.go):
// Impersonate-Uid, one Impersonate-Group per group, one Impersonate-Extra-<key> per value, the key
// percent-encoded (headerKeyEscape). Without them a request runs with other rights than kubectl's:
// the API server takes the impersonated user's own groups instead of the ones named.
//
// They are read from the kubeconfig's parsed text by the loader (config.ts loadKubeconfigText:
// readImpersonation), kept beside client-node's User objects, checked before any request
// (impersonationProblem, one of user-checks.ts userProblem's questions) and sent with every
// request (withImpersonation).
//
// kubectl sends one header line per group and per extra value, and the API server reads each line
// of Impersonate-Group as one group (it does not split on commas). fetch (undici, under Node and
// Deno) joins the lines of one name into one ("dev, ops"), which would reach the server as a single
// group named "dev, ops": so these headers are put on the request by its dispatcher, the undici
// layer below fetch that takes a header's values as a list, one line each (withImpersonation).
// client-node 1.x sends through node-fetch, which has no dispatcher: there a user with more than
// one group, or more than one value under an extra key, is refused rather than sent so.
import type { KubeConfig, User } from '@kubernetes/client-node';
import { InvalidArgumentError } from '../errors.ts';
import { quoteText } from '../quote.ts';
import { controlCharacterInside, hasHeaderControlCharacter, sendsThroughNodeFetch } from './header-values.ts';
import { type Dispatcher, sentThrough } from './reused-connections.ts';

/** The impersonation fields of a kubeconfig user that client-node drops, as the file gives them (unchecked). */
interface ImpersonationFields {
  uid: unknown;
  groups: unknown;
  extra: unknown;
}

/** The fields of the users a loader read them for, by client-node's User object. */
const FIELDS = new WeakMap<object, ImpersonationFields>();

/** The kubeconfig keys, as clientcmd's v1 AuthInfo names them. @internal */
export const IMPERSONATION_KEYS = ['as-uid', 'as-groups', 'as-user-extra'] as const;

/**
 * Reads the `as-uid`, `as-groups` and `as-user-extra` of a kubeconfig's `users` (its list, parsed
 * as client-node parses it: kubeconfig-shape.ts documentOnce, without the entries set aside by
 * withoutIncompleteEntries) and keeps them for `kc`'s users, which client-node built one for one
 * from that list.
 * @internal
 */
export function readImpersonation(kc: KubeConfig, users: readonly unknown[]): void {
  users.forEach((entry: unknown, i) => {
    const user = (entry as { user?: unknown } | null)?.user as Record<string, unknown> | null | undefined;
    const target = kc.users[i];
    if (typeof user !== 'object' || user === null || target === undefined) return;
    const fields = { uid: user['as-uid'], groups: user['as-groups'], extra: user['as-user-extra'] };
    if (fields.uid !== undefined || fields.groups !== undefined || fields.extra !== undefined) FIELDS.set(target, fields);
  });
}

/**
 * Why the current context's user's impersonation cannot be sent as kubectl sends it, as the end
 * of a sentence; undefined when it can, or it has none. A value of `as`, `as-uid`, `as-groups` or
 * `as-user-extra` holding a control character, a line break at its end included (no header may
 * hold one, and kubectl refuses it; fetch would refuse it naming the token, or leave a line
 * break at the end out); a field of the wrong shape (kubectl cannot
 * decode it either), a uid, groups or extra without `as` (kubectl refuses it: client-go's
 * validateAuthInfo), and — with client-node 1.x only (sendsHeaderLines) — more than one group or
 * one value under an extra key (its fetch would join them: see the top of this file). Values are
 * never shown.
 * @internal
 */
export function impersonationProblem(kc: KubeConfig): string | undefined {
  const { getCurrentContext, getCurrentUser } = kc as Partial<KubeConfig>;
  if (typeof getCurrentContext !== 'function' || typeof getCurrentUser !== 'function') return undefined;
  const user = getCurrentUser.call(kc);
  if (user === null || typeof user !== 'object') return undefined;
  const who = `user ${quoteText(user.name)} (context ${quoteText(getCurrentContext.call(kc))})`;
  // client-node sends `as` itself (one that is no text was refused before: nonTextCredential)
  if (typeof user.impersonateUser === 'string' && hasHeaderControlCharacter(user.impersonateUser)) {
    return controlCharacterInside(`the as of ${who}`);
  }
  const fields = FIELDS.get(user);
  if (fields === undefined) return undefined;
  const shape = (field: string, should: string): string =>
    `the ${field} of ${who} is not ${should} (it is not shown), and kubectl cannot read it either; write it as ${should}`;
  const texts = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');
  const { uid, groups, extra } = fields;
  if (uid !== undefined && uid !== null && typeof uid !== 'string') return shape('as-uid', 'text');
  if (groups !== undefined && groups !== null && !texts(groups)) return shape('as-groups', 'a list of text');
  if (extra !== undefined && extra !== null && !(typeof extra === 'object' && !Array.isArray(extra) && Object.values(extra).every(texts))) {
    return shape('as-user-extra', 'a mapping of keys to lists of text');
  }
  const { uidOf, groupsOf, extraOf } = checked(fields);
  if (hasHeaderControlCharacter(uidOf)) return controlCharacterInside(`the as-uid of ${who}`);
  if (groupsOf.some(hasHeaderControlCharacter)) return controlCharacterInside(`a group in the as-groups of ${who}`);
  const inExtra = extraOf.find(([, values]) => values.some(hasHeaderControlCharacter));
  if (inExtra !== undefined) {
    return controlCharacterInside(`a value of the as-user-extra key ${quoteText(inExtra[0])} of ${who}`);
  }
  if (impersonatesWithoutUser(user)) {
    return (
      `the ${who} has as-uid, as-groups or as-user-extra but no \`as\`, which kubectl refuses too ` +
      `("requesting uid, groups or user-extra for ${quoteText(user.name)} without impersonating a user"); ` +
      'name the user to impersonate as `as`, or remove them'
    );
  }
  if (sendsHeaderLines(kc)) return undefined;
  if (groupsOf.length > 1) {
    return (
      `the ${who} impersonates ${groupsOf.length} groups (as-groups), which cannot be sent as kubectl sends them with ` +
      '@kubernetes/client-node 1.x: its HTTP client joins the Impersonate-Group headers into one, which the API server would read ' +
      "as a single group named after all of them, and requests would run with other rights than kubectl's; impersonate at most one " +
      'group, or use @kubernetes/client-node 2.x'
    );
  }
  const many = extraOf.find(([, values]) => values.length > 1);
  if (many !== undefined) {
    return (
      `the ${who} gives the as-user-extra key ${quoteText(many[0])} ${many[1].length} values, which cannot be sent as kubectl sends ` +
      'them with @kubernetes/client-node 1.x: its HTTP client joins the Impersonate-Extra headers into one, which the API server would ' +
      'read as a single value; give each key at most one value, or use @kubernetes/client-node 2.x'
    );
  }
  return undefined;
}

/**
 * Whether `user` names an as-uid, as-groups or as-user-extra (a key, even one without values) but
 * no `as` to impersonate, which kubectl refuses (clientcmd's validateAuthInfo: "requesting uid,
 * groups or user-extra for … without impersonating a user"): of the current user
 * (impersonationProblem), and of any user the kubeconfig loader judges as kubectl does
 * (config.ts userRefusedByKubectl).
 * @internal
 */
export function impersonatesWithoutUser(user: User): boolean {
  const fields = FIELDS.get(user);
  if (fields === undefined || user.impersonateUser) return false;
  const { uid, groups, extra } = fields;
  return (
    (typeof uid === 'string' && uid !== '') ||
    (Array.isArray(groups) && groups.length > 0) ||
    (typeof extra === 'object' && extra !== null && Object.keys(extra).length > 0)
  );
}

/** The fields of a user that impersonationProblem passed, typed; empty where absent. */
function checked(fields: ImpersonationFields): { uidOf: string; groupsOf: string[]; extraOf: [string, string[]][] } {
  return {
    uidOf: typeof fields.uid === 'string' ? fields.uid : '',
    groupsOf: Array.isArray(fields.groups) ? (fields.groups as string[]) : [],
    extraOf:
      typeof fields.extra === 'object' && fields.extra !== null
        ? Object.entries(fields.extra as Record<string, string[]>).filter(([, values]) => values.length > 0)
        : [],
  };
}

/**
 * The headers beyond Impersonate-User that kubectl sends for `user`, as client-go's
 * impersonatingRoundTripper writes them: Impersonate-Uid, Impersonate-Group,
 * Impersonate-Extra-<key> with the key escaped (headerKeyEscape). Empty when it has none, or
 * only `as` (client-node sends that one). For a user impersonationProblem passed.
 * @internal
 */
export function impersonationHeaders(user: User | null): [string, string][] {
  const fields = user === null ? undefined : FIELDS.get(user);
  if (fields === undefined || !user?.impersonateUser) return [];
  const { uidOf, groupsOf, extraOf } = checked(fields);
  const headers: [string, string][] = [];
  if (uidOf !== '') headers.push(['Impersonate-Uid', uidOf]);
  for (const group of groupsOf) headers.push(['Impersonate-Group', group]);
  for (const [key, values] of extraOf) for (const value of values) headers.push([`Impersonate-Extra-${headerKeyEscape(key)}`, value]);
  return headers;
}

/**
 * An extra key as a header name holds it, as client-go escapes it (transport/round_trippers.go
 * headerKeyEscape): each byte of its UTF-8 that is no HTTP token character (RFC 7230), and `%`
 * itself, as %XX; the API server lower-cases the name and unescapes it.
 * @internal
 */
export function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x7f && c !== '%' && /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Whether requests made with `kc` are sent through a dispatcher that can be given a header's values
 * as separate lines: client-node 2.x's (undici's fetch, the dispatcher set on each RequestContext).
 * client-node 1.x (node-fetch) has none.
 */
function sendsHeaderLines(kc: KubeConfig): boolean {
  return !sendsThroughNodeFetch(kc);
}

/**
 * A dispatcher that sends each request through `inner` (undici's global one when undefined: what
 * fetch uses when client-node sets none) with `lines` added, each value on a line of its own.
 * fetch hands its headers over as an object of lower-case names (undici's HeadersList.entries),
 * where a list of values is written one line each.
 */
function withHeaderLines(inner: Dispatcher | undefined, lines: Record<string, string[]>): Dispatcher {
  return {
    dispatch(options, handler) {
      const to = sentThrough(inner);
      const given = options.headers;
      const headers = Array.isArray(given)
        ? [...given, ...Object.entries(lines).flatMap(([name, values]) => values.flatMap((value) => [name, value]))]
        : { ...(given as object | undefined), ...lines };
      return to.dispatch({ ...options, headers }, handler);
    },
  };
}

/**
 * `kc` as every request authenticates with it, sending the current user's impersonation headers
 * (impersonationHeaders) beside the Impersonate-User client-node sends: `kc` itself when none of
 * its users has any; otherwise an object that reads everything from `kc` (its prototype) and adds
 * them after client-node's authentication. The user is the one current as each request is sent,
 * as client-node reads its token and `as` then: a KubeConfig whose current context is set to
 * another after it was taken sends the new user's, once impersonationProblem has passed them
 * (InvalidArgumentError otherwise, and the request is not sent). With client-node 2.x (API calls
 * and watches alike: applySecurityAuthentication) they are put on the request by its dispatcher,
 * one line per value (withHeaderLines); with 1.x, one value each (impersonationProblem refused
 * more), set on the request (applySecurityAuthentication) or on its fetch options
 * (applyToFetchOptions, its watch).
 * @internal
 */
export function withImpersonation(kc: KubeConfig): KubeConfig {
  if (typeof kc.getCurrentUser !== 'function' || !Array.isArray(kc.users) || !kc.users.some((user) => FIELDS.has(user))) return kc;
  const sending = Object.create(kc) as KubeConfig;
  const headers = (): [string, string][] => {
    // passed for the user current when `kc` was taken; asked again for one current since
    const problem = impersonationProblem(kc);
    if (problem !== undefined) throw new InvalidArgumentError(problem);
    return impersonationHeaders(kc.getCurrentUser());
  };
  sending.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication(context);
    const { getDispatcher, setDispatcher } = context as unknown as {
      getDispatcher?: () => Dispatcher | undefined;
      setDispatcher?: (d: Dispatcher) => void;
    };
    const sent = headers();
    if (sent.length === 0) return;
    if (typeof getDispatcher === 'function' && typeof setDispatcher === 'function') {
      const lines: Record<string, string[]> = {};
      for (const [name, value] of sent) (lines[name.toLowerCase()] ??= []).push(value);
      setDispatcher.call(context, withHeaderLines(getDispatcher.call(context), lines));
    } else for (const [name, value] of sent) context.setHeaderParam(name, value);
  };
  const legacy = kc as unknown as { applyToFetchOptions?: (options: object) => Promise<{ headers?: unknown }> };
  if (typeof legacy.applyToFetchOptions === 'function') {
    (sending as unknown as typeof legacy).applyToFetchOptions = async (options) => {
      const init = await legacy.applyToFetchOptions!.call(kc, options);
      const given = init.headers;
      if (given !== null && typeof given === 'object' && typeof (given as Headers).set === 'function') {
        for (const [name, value] of headers()) (given as Headers).set(name, value);
      } else init.headers = { ...(given as object | undefined), ...Object.fromEntries(headers()) };
      return init;
    };
  }
  return sending;
}
