// One complete list of the resource, page by page: client-go's tools/pager, as the reflector's
// list() uses it — continue tokens followed to the end, and an expired token (410) answered by
// one list without paging.
import { checkList, type CheckedList } from './answers.ts';
import { KubernetesApiError } from './errors.ts';
import type { ListerWatcher, ListPage } from './lister-watcher.ts';

/** Every item of one list, and the resourceVersion it was taken at (its first page's). */
export interface Listing {
  items: unknown[];
  resourceVersion: string;
}

export interface ListAllOptions {
  /** The resource, for errors. */
  resource: string;
  /** The kind of its list (IPAddressList): a page of another kind is a failed list. */
  listKind: string;
  /** Page size (limit); 0 lists in one request. */
  pageSize: number;
  labelSelector: string | undefined;
  /** Hears each answer a page waits out before it is sent again (a 429, or a 5xx with Retry-After). */
  onWait: (error: Error) => void;
  /** True once the informer stopped: the pages listed so far are returned. */
  stopped: () => boolean;
}

/** Pages through the list; an expired continue token restarts it without paging. */
export async function listAll(lw: ListerWatcher, o: ListAllOptions): Promise<Listing> {
  const { pageSize, labelSelector, onWait } = o;
  const items: unknown[] = [];
  const tokens = new Set<string>(); // continue tokens this listing was given
  let resourceVersion = '';
  let cont: string | undefined;
  for (;;) {
    let page: CheckedList;
    try {
      page = checked(await lw.list({ labelSelector, limit: pageSize > 0 ? pageSize : undefined, continue: cont, onWait }), o);
    } catch (err) {
      const code = (err as { code?: unknown; statusCode?: unknown }).code ?? (err as { statusCode?: unknown }).statusCode;
      if (cont !== undefined && code === 410) {
        // The snapshot behind the token is gone: one consistent list without paging.
        const full = checked(await lw.list({ labelSelector, onWait }), o);
        return { items: full.items, resourceVersion: full.metadata.resourceVersion ?? '' };
      }
      throw err;
    }
    if (cont === undefined) resourceVersion = page.metadata.resourceVersion ?? '';
    for (const item of page.items) items.push(item); // not push(...): a page of 150,000 overflows the stack
    cont = page.metadata._continue ?? page.metadata.continue;
    if (!cont) return { items, resourceVersion };
    if (o.stopped()) return { items, resourceVersion };
    // A broken server or proxy: the listing would never end. A failed list: backoff, lastError.
    if (tokens.has(cont)) {
      throw new KubernetesApiError(
        'list',
        o.resource,
        undefined,
        undefined,
        undefined,
        'the API server answered a continue token it had given before; the listing would never end',
      );
    }
    tokens.add(cont);
  }
}

/**
 * The page, when it is a list of the kind asked for whose items all have a name. Anything else
 * — `{}`, a Status answered 200, an item that is null or has no name — fails the list (lastError
 * says what came back; retried after the backoff) instead of being read as an empty list, which
 * would empty the cache. client-go's reflector fails the list when the body does not decode as
 * the list type; an item without a name, which no API server serves, is refused here too.
 */
function checked(page: ListPage, o: ListAllOptions): CheckedList {
  const list = checkList(page, o.listKind);
  if (typeof list === 'string') {
    throw new KubernetesApiError('list', o.resource, undefined, undefined, undefined, `the API server answered with ${list}`);
  }
  return list;
}
