// What a kubeconfig file holds, checked as it is read: the fields kubectl cannot decode (clusters,
// users or contexts that are no list, names or paths that are no text, a user that is no mapping, an
// insecure-skip-tls-verify that is no true or false, an auth-provider or exec entry with a field of
// another type) and names given twice. client-node takes each of these without a word and fails
// later, or sends requests anonymous; kubectl refuses the file. config.ts loadKubeconfigText asks
// kubeconfigShapeProblem once client-node has loaded the text. Most checks read client-node's
// objects; where those cannot tell (a user read as holding nothing, a list read as empty, a false
// that may have been "true"), the text is parsed, once (documentOnce), and only then. The checks of
// one user's auth-provider and exec entry (authProviderNotRead, execEntryNotRead) live here too:
// user-checks.ts asks them of the current user of a KubeConfig loaded elsewhere.
import { type KubeConfig, loadAllYaml, type User } from '@kubernetes/client-node';
import { quoteText } from '../quote.ts';
import { type DateSpelling, spellDocumentDates } from './yaml-dates.ts';

/**
 * The first problem of a kubeconfig client-node has just loaded from `text` into `kc`, as the end
 * of a sentence naming the file; undefined when kubectl would read it too. `parsed` is the text's
 * document (documentOnce), `withUsers` the same when it holds a list of users.
 * @internal
 */
export function kubeconfigShapeProblem(
  kc: KubeConfig,
  text: string,
  parsed: () => KubeconfigDocument | undefined,
  withUsers: () => { users: unknown[] } | undefined,
): string | undefined {
  const problem =
    listNotList(kc, text, parsed) ??
    nonTextName(kc) ??
    duplicateName(kc) ??
    nonTextClusterField(kc) ??
    insecureNotBoolean(kc, text, parsed) ??
    userNotMapping(kc, withUsers) ??
    tokenDropped(kc, text, withUsers) ??
    mergeKeyNotRead(text, parsed);
  return problem ?? userEntryNotRead(kc);
}

/**
 * The first problem kubeconfigShapeProblem would find in a KubeConfig the caller loaded (its text
 * not known here), of those its objects show alone but names given twice (duplicateName, asked of
 * it first): a name that is no text (nonTextName), a cluster's path or text field that is no text
 * (nonTextClusterField), an auth-provider or exec entry kubectl cannot read, whichever user has it
 * (userEntryNotRead). client-node's loadFromFile and loadFromString take each of these where a file
 * the store reads itself is refused for it, and send or fail later (a proxy-url 8080 failed every
 * request with "cluster.proxyUrl.startsWith is not a function"); kubectl cannot read such a file.
 * The checks that need the text (a list read as empty, a user read as holding nothing, an
 * insecure-skip-tls-verify read as false) cannot be asked: client-node's objects have lost it.
 * @internal
 */
export function kubeConfigObjectProblem(kc: KubeConfig): string | undefined {
  return nonTextName(kc) ?? nonTextClusterField(kc) ?? userEntryNotRead(kc);
}

/**
 * A user of `kc` whose auth-provider or exec entry kubectl cannot read (authProviderNotRead,
 * execEntryNotRead), as a sentence naming it; undefined when there is none. kubectl cannot read the
 * file when any user has one, in use or not. A KubeConfig-shaped object of another copy of
 * client-node that holds its users otherwise is not judged.
 */
function userEntryNotRead(kc: KubeConfig): string | undefined {
  if (!Array.isArray(kc.users)) return undefined;
  for (const user of kc.users as User[]) {
    const providerNotRead = authProviderNotRead(user?.authProvider);
    if (providerNotRead !== undefined) return `the auth-provider of user ${quoteText(String(user.name))} ${providerNotRead}`;
    const notRead = execEntryNotRead(execEntryOf(user));
    if (notRead !== undefined) return `the exec entry of user ${quoteText(String(user.name))} ${notRead}`;
  }
  return undefined;
}

/** A kubeconfig's YAML document, as js-yaml reads it: a mapping, its fields of any type. @internal */
export interface KubeconfigDocument {
  clusters?: unknown;
  users?: unknown;
  contexts?: unknown;
  [field: string]: unknown;
}

/**
 * A kubeconfig's text parsed as client-node parses it (js-yaml, through loadAllYaml), on the
 * first call and never again, for what the loader reads itself: the token-files client-node
 * would read (readTokenFiles), the impersonation fields it drops (readImpersonation), the shape
 * of a user it read as holding nothing (userNotMapping), or of a list it read as empty
 * (listNotList), the insecure-skip-tls-verify of a cluster it read as false (insecureNotBoolean). The loader asks for it only when the text names one of their keys, or has such a
 * user or list: most kubeconfigs are parsed by client-node alone. Each call answers undefined when
 * the text is not one YAML mapping (client-node's own parse then says what is wrong). An unquoted
 * date that client-node 1.x's YAML reader read as a Date is given back the text `spelled` finds
 * for it, before anything reads the document (a token-file's path, say, or the JSON readTokenFiles
 * writes); the first call throws, naming the field, when that text cannot be told (yaml-dates.ts).
 * @internal
 */
export function documentOnce(text: string, spelled: DateSpelling): () => KubeconfigDocument | undefined {
  let parsed: { doc: KubeconfigDocument | undefined } | undefined;
  return () => {
    if (parsed === undefined) {
      const doc = kubeconfigDocument(text);
      // client-node 1.x's YAML reader reads an unquoted date as a Date: given back its text before anything reads it
      const date = doc === undefined ? undefined : spellDocumentDates(doc, spelled);
      if (date !== undefined) throw new Error(date);
      parsed = { doc };
    }
    return parsed.doc;
  };
}

/**
 * A kubeconfig document written back as text for client-node to load, as JSON (which is YAML): the
 * document the loader changed (token-files.ts readTokenFiles, withoutIncompleteEntries). An alias
 * repeats a node without repeating its text, and JSON writes each repeat out: a document whose
 * aliases would write more nodes than its text had characters (`textLength`; no kubeconfig
 * repeats that much, a crafted one repeats exponentially) is refused.
 * @internal
 */
export function documentText(doc: object, textLength: number): string {
  let nodes = 0;
  return JSON.stringify(doc, (_key, value: unknown) => {
    if (++nodes > textLength) {
      throw new Error('its YAML aliases repeat more of it than a kubeconfig holds (a crafted file)');
    }
    return value;
  });
}

/** The one YAML document of `text`, when it is a mapping; undefined otherwise. */
function kubeconfigDocument(text: string): KubeconfigDocument | undefined {
  let docs: unknown[];
  try {
    docs = loadAllYaml(text);
  } catch {
    return undefined;
  }
  const doc = docs.length === 1 ? docs[0] : undefined;
  return typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as KubeconfigDocument) : undefined;
}

/**
 * The entries of a kubeconfig that client-node does not build (config_types.js: it refuses the
 * whole file for one, "clusters[1].cluster.server is missing"): a cluster without a server, a
 * context without a cluster, by name, each with what it lacks. kubectl takes a file holding them
 * (`kubectl config set-cluster foo` writes a cluster without a server, `kubectl config set-context
 * dev --namespace=x` a context without a cluster) and refuses only the context in use when it is
 * one of them, or names such a cluster (clientcmd's ConfirmUsable). Entries without a name are
 * left out too: nothing can name them.
 * @internal
 */
export interface SetAside {
  /** A cluster without a server: whether it holds nothing at all (`cluster: {}`, or none), which kubectl reads as no cluster. */
  readonly clusters: Map<string, { empty: boolean }>;
  /** A context without a cluster. */
  readonly contexts: Set<string>;
}

/** The entries set aside of each KubeConfig the loader built (config.ts loadKubeconfigText, merged by mergeFirstWins). */
const SET_ASIDE = new WeakMap<KubeConfig, SetAside>();

/** The entries set aside as `kc` was loaded, kept with it. */
function recordOf(kc: KubeConfig): SetAside {
  let aside = SET_ASIDE.get(kc);
  if (aside === undefined) {
    aside = { clusters: new Map(), contexts: new Set() };
    SET_ASIDE.set(kc, aside);
  }
  return aside;
}

/** A kubeconfig list's entry, and the fields of a cluster or context entry that client-node requires, as YAML read them. */
interface Entry {
  name?: unknown;
  cluster?: unknown;
  context?: unknown;
  server?: unknown;
}

/** Forgets the entries set aside as `kc` was loaded before: it is loaded again (config.ts loadKubeconfigText). @internal */
export function forgetSetAside(kc: KubeConfig): void {
  SET_ASIDE.delete(kc);
}

/**
 * The kubeconfig document `doc` as client-node is given it: without the entries it would refuse
 * the file for (SetAside), whose names are kept with `kc` (setAsideInUse), so that client-node builds
 * every other entry one for one from the lists of the document answered — what the loader maps by
 * index (token-files.ts readTokenFiles, impersonation.ts readImpersonation). Undefined when no
 * entry is set aside: `doc` is given as it is. An entry that is no mapping is left in, for
 * client-node to fail on as before. A name given twice, once set aside, is refused as
 * duplicateName refuses it (an Error).
 * @internal
 */
export function withoutIncompleteEntries(doc: KubeconfigDocument, kc: KubeConfig): KubeconfigDocument | undefined {
  const aside = recordOf(kc);
  const mapping = (value: unknown): value is Entry => typeof value === 'object' && value !== null && !Array.isArray(value);
  // client-node's own tests, truthiness included (config_types.js clusterIterator, contextIterator,
  // userIterator); an entry whose cluster or context is no mapping (`cluster: 5`) is left to
  // client-node, which fails on it as before
  const incomplete: Record<'clusters' | 'contexts' | 'users', (entry: Entry) => boolean> = {
    clusters: ({ name, cluster }) => {
      if (!name) return true;
      if (cluster && (!mapping(cluster) || cluster.server)) return false;
      aside.clusters.set(String(name), { empty: !mapping(cluster) || Object.keys(cluster).length === 0 });
      return true;
    },
    contexts: ({ name, context }) => {
      if (!name) return true;
      if (context && (!mapping(context) || context.cluster)) return false;
      aside.contexts.add(String(name));
      return true;
    },
    users: ({ name }) => !name,
  };
  let changed = false;
  const usable: KubeconfigDocument = { ...doc };
  for (const list of ['clusters', 'contexts', 'users'] as const) {
    const entries = doc[list];
    if (!Array.isArray(entries)) continue;
    const kept = entries.filter((entry: unknown) => !mapping(entry) || !incomplete[list](entry));
    if (kept.length === entries.length) continue;
    changed = true;
    usable[list] = kept;
    // kubectl refuses a name given twice whether or not an entry of it is complete
    const names = entries
      .map((entry: unknown) => (mapping(entry) ? entry.name : undefined))
      .filter((name) => typeof name === 'string' && name !== '');
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice !== undefined) throw new Error(namedTwice(list, twice as string));
  }
  return changed ? usable : undefined;
}

/**
 * Whether `e` is client-node's refusal of an incomplete entry as it loads a kubeconfig
 * ("contexts[1].context.cluster is missing"), which withoutIncompleteEntries sets aside instead.
 * @internal
 */
export function isIncompleteEntryRefusal(e: unknown): boolean {
  return e instanceof Error && /^(?:clusters|contexts|users)\[\d+\]\.[\w.]+ is missing$/.test(e.message);
}

/**
 * Why the context `contextName` of `kc` cannot be used as the loader set its entries aside, as a
 * sentence in `kubectl`'s words: `context "dev" names no cluster`, `the cluster "foo" of context
 * "dev" has no server`; undefined when neither holds. `context` is how the context is named
 * (`context "dev"`, `its current-context "dev"`).
 * @internal
 */
export function setAsideInUse(kc: KubeConfig, contextName: string, context = `context ${quoteText(contextName)}`): string | undefined {
  const aside = SET_ASIDE.get(kc);
  if (aside === undefined || !contextName) return undefined;
  if (aside.contexts.has(contextName)) return `${context} names no cluster`;
  const cluster = kc.getContextObject(contextName)?.cluster;
  if (typeof cluster === 'string' && aside.clusters.has(cluster) && kc.getCluster(cluster) === null) {
    return `the cluster ${quoteText(cluster)} of ${context} has no server`;
  }
  return undefined;
}

/**
 * Merges the entries set aside as `from` was loaded into those of `kc` (config.ts mergeFirstWins),
 * where `kc` names none of them: the first file to name an entry wins, complete or not, as kubectl
 * merges files. Answers the names `kc` held before, complete or set aside, which `from`'s entries
 * of the same name give way to.
 * @internal
 */
export function mergeSetAside(kc: KubeConfig, from: KubeConfig): { clusters: Set<string>; contexts: Set<string> } {
  const into = recordOf(kc);
  const taken = {
    clusters: new Set([...kc.clusters.map((c) => c.name), ...into.clusters.keys()]),
    contexts: new Set([...kc.contexts.map((c) => c.name), ...into.contexts]),
  };
  const given = SET_ASIDE.get(from);
  for (const [name, cluster] of given?.clusters ?? []) if (!taken.clusters.has(name)) into.clusters.set(name, cluster);
  for (const name of given?.contexts ?? []) if (!taken.contexts.has(name)) into.contexts.add(name);
  return taken;
}

/**
 * Whether kubectl reads the context `contextName` of `kc` as naming no cluster (clientcmd's
 * ErrEmptyCluster, which makes the configuration empty: config.ts namesNoCluster): it was set aside
 * for having none, or the cluster it names was, holding nothing at all.
 * @internal
 */
export function setAsideNamesNoCluster(kc: KubeConfig, contextName: string): boolean {
  const aside = SET_ASIDE.get(kc);
  if (aside === undefined) return false;
  if (aside.contexts.has(contextName)) return true;
  const cluster = kc.getContextObject(contextName)?.cluster;
  return typeof cluster === 'string' && kc.getCluster(cluster) === null && aside.clusters.get(cluster)?.empty === true;
}

/** How each of a kubeconfig's lists is written, for a message refusing one that is no list. */
const KUBECONFIG_LISTS: readonly (readonly [field: 'clusters' | 'users' | 'contexts', entry: string])[] = [
  ['clusters', '- name: c, with cluster: {server: …} under it'],
  ['users', '- name: u, with user: {…} under it'],
  ['contexts', '- name: ctx, with context: {cluster: c, user: u} under it'],
];

/** The entry kinds of a kubeconfig's lists, as a message names them. */
const ENTRY_KIND = { clusters: 'cluster', users: 'user', contexts: 'context' } as const;

/**
 * An entry of a kubeconfig that holds a YAML merge key (`<<: *anchor`) once parsed, as a sentence
 * naming it; undefined when none does. client-node 2.x's YAML reader (YAML 1.2) reads `<<` as a
 * field named "<<" and so leaves out what it merges in — a user merging its token in from an
 * anchor sent every request without it — where kubectl's (YAML 1.1) merges it. client-node 1.x's
 * merges it too: then no "<<" is left, and nothing is refused. The text is parsed (`parsed`) only
 * when it holds "<<".
 */
function mergeKeyNotRead(text: string, parsed: () => KubeconfigDocument | undefined): string | undefined {
  if (!text.includes('<<')) return undefined;
  const doc = parsed();
  if (doc === undefined) return undefined;
  const seen = new Set<object>();
  const holdsMergeKey = (value: unknown): boolean => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return false;
    seen.add(value);
    if (!Array.isArray(value) && Object.hasOwn(value, '<<')) return true;
    return Object.values(value).some(holdsMergeKey);
  };
  for (const list of ['clusters', 'users', 'contexts'] as const) {
    const entries = doc[list];
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as unknown[]) {
      if (!holdsMergeKey(entry)) continue;
      const name = (entry as { name?: unknown }).name;
      const which = typeof name === 'string' ? `the ${ENTRY_KIND[list]} ${quoteText(name)}` : `an entry of ${list}`;
      return (
        `${which} holds a YAML merge key (<<), which @kubernetes/client-node 2.x reads as a field named "<<", ` +
        'leaving out what it merges in (kubectl merges it): write those fields out in the entry'
      );
    }
  }
  return holdsMergeKey(doc)
    ? 'the kubeconfig holds a YAML merge key (<<), which @kubernetes/client-node 2.x reads as a field named "<<" (kubectl merges it): write those fields out'
    : undefined;
}

/**
 * A kubeconfig's clusters, users or contexts that YAML reads as no list (`users: {u: {token: t}}`,
 * `users: text`), as a sentence naming the field; undefined when each is a list, null or absent.
 * client-node reads such a field as an empty list, and the kubeconfig then seems to lack the
 * context, cluster or user it names (`user "u" was not found for context "ctx"`); kubectl cannot
 * read it ("cannot unmarshal object into Go struct field Config.users of type
 * []v1.NamedAuthInfo"). Only a field client-node read as empty, that the text names, can be one:
 * the text is parsed (`parsed`) only then. What the field holds is not shown: it may be tokens.
 */
function listNotList(kc: KubeConfig, text: string, parsed: () => KubeconfigDocument | undefined): string | undefined {
  for (const [field, entry] of KUBECONFIG_LISTS) {
    if (kc[field].length > 0 || !text.includes(field)) continue;
    const value = parsed()?.[field];
    if (value === undefined || value === null || Array.isArray(value)) continue;
    return (
      `its ${field} field is ${notTextKind(value)}, not a list (what it holds is not shown), which kubectl cannot read either: ` +
      `write each entry as an item of the list (${entry})`
    );
  }
  return undefined;
}

/**
 * A user whose `user` YAML reads as no mapping (`user: [1]`, `user: 5`, `user: text`), as a
 * sentence naming it; undefined when each is a mapping, or empty (null, absent: a user without
 * credentials, as kubectl reads it). client-node reads a user of any other kind as holding
 * nothing, and every request would go out without credentials; kubectl cannot read such a
 * kubeconfig ("cannot unmarshal array into Go struct field NamedAuthInfo.users.user"). Only a
 * user client-node read as holding nothing can be one: the text is parsed (`parsed`) only when
 * `kc` has such a user. Each user of the file is asked, by its name, one without a name that
 * client-node did not build (withoutIncompleteEntries) too: kubectl reads them all. What the entry
 * holds is not shown: it may be a token.
 */
function userNotMapping(kc: KubeConfig, parsed: () => { users: unknown[] } | undefined): string | undefined {
  const holdsNothing = (user: object) => Object.entries(user).every(([k, v]) => k === 'name' || v === undefined || v === null);
  if (!kc.users.some(holdsNothing)) return undefined;
  for (const entry of parsed()?.users ?? []) {
    const user = (entry as { user?: unknown } | null)?.user;
    if (user === undefined || user === null || (typeof user === 'object' && !Array.isArray(user))) continue;
    return (
      `the user field of user ${quoteText(String((entry as { name?: unknown }).name))} is ${notTextKind(user)}, not a mapping ` +
      '(it is not shown), which kubectl cannot read either: write its credentials as a mapping (user: {token: …}), or user: {} for none'
    );
  }
  return undefined;
}

/**
 * A `token` key whose value YAML may read as 0, NaN or false: one starting with 0, a dot or a sign
 * (`0`, `0x0`, `-0`, `.nan`), spelled false, or given through a tag, an anchor or an alias. It finds
 * more than those (a token starting with 0): only whether the text is parsed depends on it.
 */
const FALSY_TOKEN_IN_TEXT = /(?<![\w-])["']?token["']?\s*:\s*(?:[!&*.+-]|0|false\b|False\b|FALSE\b)/;

/**
 * A user's token that YAML reads as no text and client-node as no token at all (`token: 0`, `token:
 * false`, `token: .nan`), as a sentence naming the user; undefined when there is none. client-node
 * takes a token only when it is truthy, and sends every request of such a user without
 * credentials (or with its token-file's token), where a 401 reads as the server refusing
 * credentials never sent; kubectl cannot read the file ("cannot unmarshal number into Go struct
 * field AuthInfo.users.user.token of type string"). A token client-node keeps (`token: 12345`) is
 * refused for the user in use (user-checks.ts nonTextCredential). Only a user client-node read
 * without a token, in a text with a `token` key whose value may be one (FALSY_TOKEN_IN_TEXT), can
 * have one: the text is parsed (`parsed`) only then. The token is not shown.
 */
function tokenDropped(kc: KubeConfig, text: string, parsed: () => { users: unknown[] } | undefined): string | undefined {
  if (!FALSY_TOKEN_IN_TEXT.test(text) || kc.users.every((user) => typeof user.token === 'string')) return undefined;
  for (const entry of parsed()?.users ?? []) {
    const user = (entry as { user?: unknown } | null)?.user;
    const token = typeof user === 'object' && user !== null ? (user as { token?: unknown }).token : undefined;
    if (token === undefined || token === null || typeof token === 'string' || token) continue;
    return (
      `the token of user ${quoteText(String((entry as { name?: unknown }).name))} is ${notTextKind(token)}, not text (it is not ` +
      'shown), which kubectl cannot read either, and @kubernetes/client-node would read as no token at all, sending every request ' +
      'without credentials: write it as text, quoted ("…")'
    );
  }
  return undefined;
}

/**
 * A name that YAML read as something else than text, as a sentence naming it and what YAML read;
 * undefined when there is none: the name of a cluster, user or context, a context's cluster, user
 * or namespace, the current-context. YAML reads `name: 1.10` as the number 1.1, `0x1F` as 31,
 * `1e3` as 1000, `true` as true: client-node keeps the number, which no name given as text
 * (`--context 1.10`) is equal to, and which no text shows as the file spells it. kubectl cannot
 * read such a kubeconfig ("cannot unmarshal number into Go struct field NamedContext.contexts.name
 * of type string"); it writes such a name quoted (`name: "1.10"`), which is text to YAML. A name is
 * no credential: what YAML read is shown.
 */
function nonTextName(kc: KubeConfig): string | undefined {
  const readAs = (value: unknown): string =>
    `is read by YAML as ${typeof value === 'number' ? `the number ${value}` : typeof value === 'boolean' ? String(value) : notTextKind(value)}, not as text, which kubectl cannot read either`;
  const lists: [string, unknown][] = [
    ['clusters', kc.clusters],
    ['users', kc.users],
    ['contexts', kc.contexts],
  ];
  for (const [list, entries] of lists) {
    if (!Array.isArray(entries)) continue; // another copy of client-node's KubeConfig: not judged
    // none at all is client-node's to refuse as it loads a file ("users[1].name is missing"); one a
    // caller left out (loadFromOptions) is no misread name: kubectl reads it as ""
    const i = entries.findIndex((entry: { name?: unknown } | null) => entry?.name != null && typeof entry.name !== 'string');
    if (i >= 0) return `the name of entry ${i + 1} of ${list} ${readAs(entries[i].name)}: quote it (name: "…")`;
  }
  for (const context of Array.isArray(kc.contexts) ? kc.contexts : []) {
    for (const field of ['cluster', 'user', 'namespace'] as const) {
      const value: unknown = context[field];
      if (value === undefined || value === null || typeof value === 'string') continue;
      return `the ${field} of context ${quoteText(context.name)} ${readAs(value)}: quote it (${field}: "…")`;
    }
  }
  const current: unknown = kc.currentContext;
  if (current === undefined || current === null || typeof current === 'string') return undefined;
  return `the current-context ${readAs(current)}: quote it (current-context: "…")`;
}

/**
 * A path or text field of a cluster, or a user's certificate or key path, that YAML read as
 * something else (`certificate-authority: 12`, `proxy-url: 8080`), as a sentence naming it;
 * undefined when there is none. kubectl cannot read such a kubeconfig either; client-node keeps
 * the value and fails on it later with a TypeError that names no field (fs's "path" argument,
 * Buffer.from, `startsWith is not a function`), makePathsAbsolute at once for the paths.
 */
function nonTextClusterField(kc: KubeConfig): string | undefined {
  const fields: [string, readonly (readonly [property: string, field: string])[], unknown][] = [
    [
      'cluster',
      [
        ['caFile', 'certificate-authority'],
        ['caData', 'certificate-authority-data'],
        ['proxyUrl', 'proxy-url'],
        ['tlsServerName', 'tls-server-name'],
      ],
      kc.clusters,
    ],
    [
      'user',
      [
        ['certFile', 'client-certificate'],
        ['keyFile', 'client-key'],
      ],
      kc.users,
    ],
  ];
  for (const [kind, properties, entries] of fields) {
    if (!Array.isArray(entries)) continue; // another copy of client-node's KubeConfig: not judged
    for (const entry of entries as { name?: unknown; [property: string]: unknown }[]) {
      for (const [property, field] of properties) {
        const value = entry[property];
        if (value === undefined || value === null || typeof value === 'string') continue;
        return `the ${field} of ${kind} ${quoteText(String(entry.name))} is ${notTextKind(value)}, not text, which kubectl cannot read either`;
      }
    }
  }
  return undefined;
}

/** The spellings of true and false in YAML 1.1, which kubectl reads unquoted and js-yaml reads as text (but true and false). */
const YAML_1_1_BOOLEAN = /^(?:y|Y|yes|Yes|YES|on|On|ON|n|N|no|No|NO|off|Off|OFF)$/;

/**
 * A cluster's insecure-skip-tls-verify that YAML reads as no true or false (`"true"`, `yes`, `1`),
 * as a sentence naming it; undefined when each is true, false, null or absent. client-node takes
 * only true as true, and reads anything else as false: it checks the server's certificate where
 * the file seems to say not to. kubectl cannot read a quoted "true" or a number ("cannot
 * unmarshal string into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify of type
 * bool"), and reads yes, on and y unquoted as true (its YAML is YAML 1.1); js-yaml reads them as
 * text, quoted or not. Only a cluster client-node read as checking certificates, in a text that
 * names the field, can have one: the text is parsed (`parsed`) only then. Each cluster of the file
 * is asked, one client-node did not build (withoutIncompleteEntries) too: kubectl reads them all.
 */
function insecureNotBoolean(kc: KubeConfig, text: string, parsed: () => KubeconfigDocument | undefined): string | undefined {
  const field = 'insecure-skip-tls-verify';
  if (!text.includes(field) || kc.clusters.every((cluster) => cluster.skipTLSVerify)) return undefined;
  const clusters = parsed()?.clusters;
  if (!Array.isArray(clusters)) return undefined;
  for (const entry of clusters) {
    const value = (entry as { cluster?: { [field]?: unknown } | null } | null)?.cluster?.[field];
    if (value === undefined || value === null || typeof value === 'boolean') continue;
    // a setting, not a credential: a spelling of true or false is shown
    const what =
      typeof value === 'string' && (YAML_1_1_BOOLEAN.test(value) || /^(?:true|false)$/i.test(value))
        ? `the text ${quoteText(value)}`
        : notTextKind(value);
    return (
      `the ${field} of cluster ${quoteText(String((entry as { name?: unknown }).name))} is ${what}, not true or false: @kubernetes/client-node ` +
      `would read it as false and check the server's certificate, where kubectl refuses the file (or reads yes, on and y, ` +
      'unquoted, as true); write true or false, unquoted'
    );
  }
  return undefined;
}

/**
 * Why a kubeconfig file that names a cluster, user or context twice is refused, as the end of a
 * sentence naming the file; undefined when every name is named once. client-node takes the first
 * entry of a name and ignores the other without a word; kubectl refuses the file (clientcmd's v1
 * conversion: `duplicate name "ctx" in list`). `kc`'s lists are the file's but for the entries
 * client-node does not build, whose names withoutIncompleteEntries asks the same of. A KubeConfig
 * given to kubeConfigOrDefault is judged the same (loaded by the caller with client-node's
 * loadFromFile, which takes such a file).
 * @internal
 */
export function duplicateName(kc: KubeConfig): string | undefined {
  const lists: [string, unknown][] = [
    ['clusters', kc.clusters],
    ['users', kc.users],
    ['contexts', kc.contexts],
  ];
  for (const [list, entries] of lists) {
    // a KubeConfig-shaped object of another copy of client-node may hold them otherwise: not judged
    if (!Array.isArray(entries)) continue;
    const seen = new Set<string>();
    for (const { name: given } of entries) {
      // an entry a caller built without a name (loadFromOptions) is named "", as kubectl reads it
      const name = given ?? '';
      if (seen.has(name)) return namedTwice(list, name);
      seen.add(name);
    }
  }
  return undefined;
}

/** Why a list that names `name` twice is refused, as the end of a sentence naming the file. */
function namedTwice(list: string, name: string): string {
  return (
    `its ${list} list names ${quoteText(name)} twice, which kubectl refuses too (duplicate name ${quoteText(name)} in list): ` +
    'only the first would be used; rename or remove one'
  );
}

/** What a YAML value that is no text is, for a message that must not show it (it may be a credential). @internal */
export function notTextKind(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  // client-node 1.x's YAML reader reads an unquoted date so; the loader gives it back its text (yaml-dates.ts)
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'boolean') return 'true or false';
  return `a ${typeof value}`;
}

/**
 * Why kubectl cannot read `exec`, a user's exec entry, as the end of a sentence naming the entry
 * ("has an args entry (number 2) that is a number, not text, …"); undefined when it can, or there
 * is none. A field YAML read as another type than kubectl's ExecConfig has: the entry no mapping,
 * a command that is no text, args that are no list of texts, env that is no list of mappings of a
 * name and a value, a provideClusterInfo that is no true or false. kubectl fails to decode such a
 * kubeconfig; client-node passes the value on as it is, and spawn makes text of it (`args:
 * [1.10, 0x1F]` run the plugin with "1.1" and "31", a list with its items joined by commas), or
 * fails as a request is sent. A null arg or env value is none of these: kubectl reads it as an
 * empty text, and it is passed so (exec-plugins.ts). What a field holds is not shown: an arg or an
 * env value may be a credential. The loader asks it of every user of a file (kubeconfigShapeProblem),
 * and user-checks.ts execEntryProblem of the current user of a KubeConfig loaded elsewhere.
 * @internal
 */
export function execEntryNotRead(exec: unknown): string | undefined {
  const tail = ', which kubectl cannot read either (what it holds is not shown)';
  if (exec === undefined || exec === null) return undefined;
  if (typeof exec !== 'object' || Array.isArray(exec)) return `is ${notTextKind(exec)}, not a mapping${tail}`;
  const { command, args, env, provideClusterInfo } = exec as Record<string, unknown>;
  const text = (value: unknown): boolean => value === undefined || value === null || typeof value === 'string';
  const quote = `${tail}: write it as text, quoted where YAML would read it as something else`;
  if (!text(command)) return `has a command that is ${notTextKind(command)}, not text${quote}`;
  if (args !== undefined && args !== null) {
    if (!Array.isArray(args)) return `has args that are ${notTextKind(args)}, not a list of texts${tail}`;
    const i = args.findIndex((arg) => !text(arg));
    if (i >= 0) return `has an args entry (number ${i + 1}) that is ${notTextKind(args[i])}, not text${quote}`;
  }
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) return `has env that is ${notTextKind(env)}, not a list of name and value entries${tail}`;
    for (const [i, entry] of (env as unknown[]).entries()) {
      const which = `an env entry (number ${i + 1})`;
      // null reads as an entry without a name, which kubectl refuses for the user in use (envWithoutName)
      if (entry === null) continue;
      if (typeof entry !== 'object' || Array.isArray(entry))
        return `has ${which} that is ${notTextKind(entry)}, not a mapping of name and value${tail}`;
      const { name, value } = entry as { name?: unknown; value?: unknown };
      if (!text(name)) return `has ${which} whose name is ${notTextKind(name)}, not text${quote}`;
      if (!text(value)) return `has ${which} whose value is ${notTextKind(value)}, not text${quote}`;
    }
  }
  if (provideClusterInfo !== undefined && provideClusterInfo !== null && typeof provideClusterInfo !== 'boolean') {
    return `has a provideClusterInfo that is ${notTextKind(provideClusterInfo)}, not true or false${tail}`;
  }
  return undefined;
}

/**
 * Why kubectl cannot read `provider`, a user's auth-provider, as the end of a sentence naming it
 * ("is a string, not a mapping, …"); undefined when it can, or there is none. kubectl's
 * auth-provider is a mapping of a name (text) and a config (a mapping of texts): a kubeconfig with
 * another type there fails to decode ("cannot unmarshal string into Go struct field
 * AuthInfo.users.user.auth-provider"). client-node keeps the value as it is: a provider that is no
 * mapping, or whose name is no text, is taken by none of its authenticators, and every request
 * goes out without credentials. A config value that is no text (client-node's own `exec` entry
 * inside it among them) is refused too, as kubectl refuses it. What a field holds is not shown: a
 * config holds tokens (id-token, access-token, client-secret). The loader asks it of every user of
 * a file (kubeconfigShapeProblem), and user-checks.ts authProviderProblem of the current user.
 * @internal
 */
export function authProviderNotRead(provider: unknown): string | undefined {
  const tail = ', which kubectl cannot read either (what it holds is not shown)';
  if (provider === undefined || provider === null) return undefined;
  if (typeof provider !== 'object' || Array.isArray(provider)) {
    return `is ${notTextKind(provider)}, not a mapping${tail}: write it as a mapping of its name and config (auth-provider: {name: oidc, config: {…}})`;
  }
  const { name, config } = provider as Record<string, unknown>;
  const quote = `${tail}: write it as text, quoted where YAML would read it as something else`;
  if (name !== undefined && name !== null && typeof name !== 'string') return `has a name that is ${notTextKind(name)}, not text${quote}`;
  if (config === undefined || config === null) return undefined;
  if (typeof config !== 'object' || Array.isArray(config))
    return `has a config that is ${notTextKind(config)}, not a mapping of texts${tail}`;
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || value === null || typeof value === 'string') continue;
    return `has a config entry ${quoteText(key)} that is ${notTextKind(value)}, not text${quote}`;
  }
  return undefined;
}

/**
 * The exec entry a client-node User names (user.exec, or an auth-provider's config.exec), if any:
 * the one client-node's ExecAuth runs. Unchecked: the exec plugins and the checks here read it.
 * @internal
 */
export function execEntryOf(user: User | null | undefined): unknown {
  return user?.exec ?? (user?.authProvider as { config?: { exec?: unknown } } | undefined)?.config?.exec;
}
