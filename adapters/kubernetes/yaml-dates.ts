// The unquoted dates of a kubeconfig, read as kubectl reads them. The YAML reader of
// @kubernetes/client-node 1.x (js-yaml 4, whose types are YAML 1.1's) reads an unquoted scalar that
// looks like a timestamp — `2024-01-01`, `2024-01-01T10:00:00Z`, `2001-12-14 21:59:43.10 -5` — as a
// JS Date: a name, a path, a token, an exec arg or env value. client-node 2.x (js-yaml 5) reads it
// as text, and so does kubectl: client-go decodes a kubeconfig's YAML through sigs.k8s.io/yaml into
// JSON, and yaml.v2 gives a timestamp to such a decoding as the text written. A Date passed on would
// reach a header or a plugin as Date.toString(), and a name would match no `--context`.
//
// A Date keeps the instant, not the text: `2024-01-01` and `2024-01-01T00:00:00Z` are one Date. The
// loader (config.ts loadKubeconfigText) gives each back the text its file spells it with, found in
// the file's text (datesSpelledIn): the one timestamp written there that reads as that instant.
// When the file holds none, or two spellings of it, the kubeconfig is refused, naming the field and
// asking for it to be quoted; so is a Date in a KubeConfig the caller loaded, whose text is not known.
import type { KubeConfig } from '@kubernetes/client-node';
import { quoteText } from '../quote.ts';

/** js-yaml 4's timestamp forms (its type/timestamp.js), as YAML 1.1 gives them: a date alone, or a date and a time. */
const DATE_ALONE = /^(\d{4})-(\d\d)-(\d\d)$/;
const DATE_AND_TIME = /^(\d{4})-(\d\d?)-(\d\d?)(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.(\d*))?(?:[ \t]*(Z|([-+])(\d\d?)(?::(\d\d))?))?$/;

/**
 * What could be an unquoted timestamp in a kubeconfig's text, with what may stand around a plain
 * scalar: a line's start or a space before it (or a flow `[`, `{`, `,`, a `:` after a quoted key,
 * a quote for a tagged one), its end, a space, a flow `,`, `]` or `}` or a quote after it. It may
 * find text that YAML reads otherwise (inside a quoted text or a comment): a spelling found so is
 * one more candidate, which can only make a date refused, never spelled otherwise than written.
 */
const TIMESTAMP_IN_TEXT =
  /(?<![^\s[{,:"'])\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?(?![^\s,\]}"'])/g;

/** The instant js-yaml 4 reads `text` as (constructYamlTimestamp), in ms; undefined when it reads no timestamp there. */
function timestampOf(text: string): number | undefined {
  const date = DATE_ALONE.exec(text);
  if (date !== null) return Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!);
  const m = DATE_AND_TIME.exec(text);
  if (m === null) return undefined;
  const fraction = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
  const at = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, fraction);
  if (!m[9]) return at;
  const offset = (+m[10]! * 60 + +(m[11] ?? 0)) * 60_000;
  return m[9] === '-' ? at + offset : at - offset;
}

/**
 * The text a Date of a kubeconfig's text is spelled with there, or undefined when that cannot be
 * told: no timestamp written in it reads as that instant, or more than one spelling does. The text
 * is searched on the first call, and never again.
 * @internal
 */
export type DateSpelling = (date: Date) => string | undefined;

/** The DateSpelling of a kubeconfig's `text`. @internal */
export function datesSpelledIn(text: string): DateSpelling {
  let spellings: Map<number, Set<string>> | undefined;
  return (date) => {
    if (spellings === undefined) {
      spellings = new Map();
      for (const [found] of text.matchAll(TIMESTAMP_IN_TEXT)) {
        const at = timestampOf(found);
        if (at === undefined) continue;
        const known = spellings.get(at);
        if (known === undefined) spellings.set(at, new Set([found]));
        else known.add(found);
      }
    }
    const found = spellings.get(date.getTime());
    return found?.size === 1 ? [...found][0] : undefined;
  };
}

/** A field's place in a kubeconfig, as kubectl's jsonpath names it (`users[1].user.exec.args[0]`), and the entry it is in. */
type FieldPath = (string | number)[];

/** client-node's names of the fields of its Cluster and User objects, by kubeconfig key where they differ. */
const FILE_KEYS: Readonly<Record<string, string>> = {
  caData: 'certificate-authority-data',
  caFile: 'certificate-authority',
  skipTLSVerify: 'insecure-skip-tls-verify',
  tlsServerName: 'tls-server-name',
  proxyUrl: 'proxy-url',
  certData: 'client-certificate-data',
  certFile: 'client-certificate',
  keyData: 'client-key-data',
  keyFile: 'client-key',
  authProvider: 'auth-provider',
  impersonateUser: 'as',
};

/**
 * Gives every Date in `value` — a kubeconfig document or part of it, walked through its lists and
 * plain objects, each once (YAML aliases share them) — the text `spelled` answers for it. Returns
 * the path of the first one it answers nothing for (left a Date), after `at`; undefined when none
 * is left. Only a property that holds a value is read (a getter, a token-file's token say, is not called).
 */
function spellDates(value: unknown, spelled: DateSpelling, at: FieldPath, seen: Set<object>): FieldPath | undefined {
  // a list or a mapping (client-node's loadAllYaml gives the document a prototype of its own)
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || seen.has(value)) return undefined;
  seen.add(value);
  const keys: (string | number)[] = Array.isArray(value) ? [...value.keys()] : Object.keys(value);
  for (const key of keys) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !('value' in descriptor)) continue;
    const field = descriptor.value as unknown;
    if (field instanceof Date) {
      const text = spelled(field);
      if (text === undefined) return [...at, key];
      (value as Record<string | number, unknown>)[key] = text;
    } else {
      const left = spellDates(field, spelled, [...at, key], seen);
      if (left !== undefined) return left;
    }
  }
  return undefined;
}

/**
 * Gives every Date of `doc`, a kubeconfig's text parsed as client-node parses it, the text it is
 * spelled with there (`spelled`); the refusal of the first whose text cannot be told, as a
 * sentence naming it, or undefined when none is left.
 * @internal
 */
export function spellDocumentDates(doc: object, spelled: DateSpelling): string | undefined {
  const left = spellDates(doc, spelled, [], new Set());
  return left === undefined ? undefined : dateRefusal(doc, left, NOT_TOLD_FROM_FILE);
}

/**
 * Gives every Date of the clusters, users, contexts and current-context of `kc`, just loaded from
 * a kubeconfig's text, the text it is spelled with there (`spelled`); or, with `spelled` undefined
 * (a KubeConfig the caller loaded: its text is not known), changes nothing. The refusal of the
 * first left a Date, as a sentence naming it, or undefined when there is none.
 * @internal
 */
export function spellKubeConfigDates(kc: KubeConfig, spelled: DateSpelling | undefined): string | undefined {
  const answer: DateSpelling = spelled ?? (() => undefined);
  const why = spelled === undefined ? NOT_KEPT : NOT_TOLD_FROM_FILE;
  const seen = new Set<object>();
  const fields = kc as unknown as { currentContext?: unknown; [list: string]: unknown };
  for (const [list, entryKey] of ENTRY_KEYS) {
    const entries = fields[list];
    if (!Array.isArray(entries)) continue; // a KubeConfig-shaped object of another copy: not judged
    for (const [i, entry] of entries.entries()) {
      const left = spellDates(entry, answer, [], seen);
      if (left === undefined) continue;
      // client-node keeps a cluster's or user's fields on the entry itself, a context's too
      const [property = '', ...rest] = left;
      const path: FieldPath = property === 'name' ? [list, i, 'name'] : [list, i, entryKey, FILE_KEYS[property] ?? property, ...rest];
      return dateRefusal({ [list]: entries }, path, why);
    }
  }
  const current = Object.getOwnPropertyDescriptor(kc, 'currentContext')?.value as unknown;
  if (current instanceof Date) {
    const text = answer(current);
    if (text === undefined) return dateRefusal({}, ['current-context'], why);
    fields.currentContext = text;
  }
  return undefined;
}

/** A kubeconfig's lists, and the key of each entry's fields. */
const ENTRY_KEYS: readonly (readonly [list: string, entryKey: string])[] = [
  ['clusters', 'cluster'],
  ['users', 'user'],
  ['contexts', 'context'],
];

/** Why a Date is refused, as the middle of dateRefusal's sentence. */
const NOT_TOLD_FROM_FILE = 'the text written cannot be told from the file, where no one spelling reads as that date';
const NOT_KEPT = 'client-node kept the date, not the text written';

/**
 * The refusal of the Date at `path` of `doc`, as a sentence naming the field, as kubectl's jsonpath
 * names it, and the cluster, user or context it is in; never what it holds (a token may be a date).
 */
function dateRefusal(doc: object, path: FieldPath, why: string): string {
  const [list, index] = path;
  const entry = ENTRY_KEYS.find(([name]) => name === list);
  const name =
    entry !== undefined && typeof index === 'number'
      ? (doc as Record<string, { name?: unknown }[]>)[list as string]?.[index]?.name
      : undefined;
  const of = typeof name === 'string' && path[2] !== 'name' ? ` (${entry![1]} ${quoteText(name)})` : '';
  return (
    `the ${jsonPath(path)}${of} is a date, not text, to the YAML reader of @kubernetes/client-node 1.x (js-yaml 4), which ` +
    `reads an unquoted 2024-01-01 or 2024-01-01T10:00:00Z as a date; ${why} (what it holds is not shown): quote it in the ` +
    'kubeconfig ("2024-01-01", not 2024-01-01), as kubectl and client-node 2.x read it as text'
  );
}

/** `users[1].user.exec.args[0]`: a field's path as kubectl's jsonpath writes it; a key of other characters quoted. */
function jsonPath(path: FieldPath): string {
  return path
    .map((key, i) =>
      typeof key === 'number' ? `[${key}]` : /^[A-Za-z0-9_-]+$/.test(key) ? `${i === 0 ? '' : '.'}${key}` : `[${quoteText(key)}]`,
    )
    .join('');
}
