// One complete list of a resource, page by page: client-go's tools/pager, as the reflector's
// list() uses it — continue tokens followed to the end, and an expired token (410) answered by
// one list without paging. The informer (listAll) and the command line (cli/cluster.ts) both list
// through listPages; each asks for a page its own way and turns a failure into its own error.
import { checkList, type CheckedList } from './answers.ts';
import { quoteInput } from '../quote.ts';
import { KubernetesApiError } from './errors.ts';
import type { ListerWatcher } from './lister-watcher.ts';

/** Every item of one list, and the resourceVersion it was taken at (its first page's). @internal */
export interface Listing {
  items: unknown[];
  resourceVersion: string;
}

/**
 * Asks for one page: `limit` undefined lists in one request, `continue` follows a token. Resolves
 * to the page once checked (checkList), or rejects with the request's error as it is: a 410 with
 * a continue token (an `code` or `statusCode` of 410) is the one error listPages reads.
 * @internal
 */
export type FetchPage = (request: { limit: number | undefined; continue: string | undefined }) => Promise<CheckedList>;

/** @internal */
export interface PagerOptions {
  /** Page size (limit); 0 lists in one request. */
  pageSize: number;
  /** Hears each page: the items listed so far, and the server's estimate of those left (0 at the end). */
  onPage?: ((listed: number, remaining: number | undefined) => void) | undefined;
  /** True once the caller stopped: the pages listed so far are returned. */
  stopped?: (() => boolean) | undefined;
  /** The error a listing that would never end fails with, from the reason in words. */
  fail: (reason: string) => Error;
}

/**
 * How many pages in a row may go on (a continue token) without an item before the listing is
 * given up. kube-apiserver never sends one: its etcd storage (apiserver's storage/etcd3/store.go,
 * GetList) keeps reading from etcd until the page holds `limit` items ("take items from the
 * response until the bucket is full") and gives a continue token only when items remain, so a
 * page that goes on is full. A server answering empty pages with fresh tokens (a broken proxy or
 * aggregated server) would otherwise be paged for ever, one request after another. Ten leaves
 * room for a server that filters after paging and so may answer an empty page now and then.
 */
const MAX_EMPTY_PAGES = 10;

/**
 * Pages through the list; an expired continue token restarts it once, without paging. A server
 * (or proxy) that answers a continue token it gave before — the same token again, or a cycle —
 * or MAX_EMPTY_PAGES pages in a row without an item, each with a continue token, would be paged
 * for ever: the listing fails with `fail(…)` instead.
 * @internal
 */
export async function listPages(fetchPage: FetchPage, o: PagerOptions): Promise<Listing> {
  const limit = o.pageSize > 0 ? o.pageSize : undefined;
  const items: unknown[] = [];
  const tokens = new Set<string>(); // continue tokens this listing was given
  let resourceVersion = '';
  let cont: string | undefined;
  let emptyPages = 0; // pages in a row that went on without an item
  for (;;) {
    let page: CheckedList;
    try {
      page = await fetchPage({ limit, continue: cont });
    } catch (err) {
      const code = (err as { code?: unknown; statusCode?: unknown }).code ?? (err as { statusCode?: unknown }).statusCode;
      if (cont !== undefined && code === 410) {
        // The snapshot behind the token is gone: one consistent list without paging.
        const full = await fetchPage({ limit: undefined, continue: undefined });
        // Asked for everything at once, a page that still goes on would be taken for all of it.
        if (continueOf(full, o.fail) !== undefined) {
          throw o.fail('the API server answered the list asked for in one request with a continue token: part of it would be missing');
        }
        o.onPage?.(full.items.length, 0);
        return { items: full.items, resourceVersion: full.metadata.resourceVersion ?? '' };
      }
      throw err;
    }
    if (cont === undefined) resourceVersion = page.metadata.resourceVersion ?? '';
    for (const item of page.items) items.push(item); // not push(...): a page of 150,000 overflows the stack
    cont = continueOf(page, o.fail);
    if (cont === undefined) {
      o.onPage?.(items.length, 0);
      return { items, resourceVersion };
    }
    // A broken server or proxy: the listing would never end.
    if (tokens.has(cont)) throw o.fail('the API server answered a continue token it had given before; the listing would never end');
    tokens.add(cont);
    emptyPages = page.items.length === 0 ? emptyPages + 1 : 0;
    if (emptyPages >= MAX_EMPTY_PAGES) {
      throw o.fail(
        `the API server answered ${MAX_EMPTY_PAGES} pages in a row without an item, each with a new continue token; the listing would never end`,
      );
    }
    o.onPage?.(items.length, remainingOf(page));
    if (o.stopped?.()) return { items, resourceVersion };
  }
}

/**
 * The page's continue token; undefined at the end (none, or empty). A token that is not a string
 * is no token a server gives: CheckedList leaves its type unchecked, and sent back it would read
 * "[object Object]".
 */
function continueOf(page: CheckedList, fail: (reason: string) => Error): string | undefined {
  const token: unknown = page.metadata._continue ?? page.metadata.continue;
  if (token === undefined || token === null || token === '') return undefined;
  if (typeof token !== 'string') throw fail(`the API server answered a continue token that is not a string: ${quoteInput(token)}`);
  return token;
}

/** The server's estimate of the items left, when it is a count: a proxy's text or a negative number is no estimate (and must not reach a terminal). */
function remainingOf(page: CheckedList): number | undefined {
  const n: unknown = page.metadata.remainingItemCount;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** @internal */
export interface ListAllOptions {
  /** The resource, for errors. */
  resource: string;
  /** The kind of its list (IPAddressList): a page of another kind is a failed list. */
  listKind: string;
  /** The apiVersion its list is served in (networking.k8s.io/v1): a page in another is a failed list. */
  apiVersion: string;
  /** Page size (limit); 0 lists in one request. */
  pageSize: number;
  labelSelector: string | undefined;
  /** Hears each answer a page waits out before it is sent again (a 429, or a 5xx with Retry-After), and the seconds waited. */
  onWait: (error: Error, seconds: number) => void;
  /** True once the informer stopped: the pages listed so far are returned. */
  stopped: () => boolean;
}

/**
 * The informer's listing through its ListerWatcher. A failed list (a malformed page, a listing
 * that would never end) is a KubernetesApiError: the informer backs off and keeps it as lastError.
 * @internal
 */
export function listAll(lw: ListerWatcher, o: ListAllOptions): Promise<Listing> {
  const { labelSelector, onWait } = o;
  const fail = (reason: string) => new KubernetesApiError('list', o.resource, undefined, undefined, undefined, reason);
  return listPages(async (request) => checked(await lw.list({ labelSelector, ...request, onWait }), o.listKind, o.apiVersion, fail), {
    pageSize: o.pageSize,
    stopped: o.stopped,
    fail,
  });
}

/**
 * The page, when it is a list of the kind and apiVersion asked for whose items all have a name. Anything else
 * — `{}`, a Status answered 200, an item that is null or has no name — fails the list (lastError
 * says what came back; retried after the backoff) instead of being read as an empty list, which
 * would empty the cache. client-go's reflector fails the list when the body does not decode as
 * the list type; an item without a name, which no API server serves, is refused here too.
 */
function checked(page: unknown, listKind: string, apiVersion: string, fail: (reason: string) => Error): CheckedList {
  const list = checkList(page, listKind, apiVersion);
  if (typeof list === 'string') throw fail(`the API server answered with ${list}`);
  return list;
}
