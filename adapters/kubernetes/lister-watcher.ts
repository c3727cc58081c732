// The informer's list and watch of one cluster-scoped resource: what the informer needs from the
// API (ListerWatcher, as client-go's cache.ListerWatcher) and its implementation over client-node:
// each list page through ApiRequests (deadline, 429 waits, aborted on close), each watch through
// client-node's Watch (watch-session.ts gives it deadlines of its own).
import { type ConfigurationOptions, type KubeConfig, Observable, type ObservableMiddleware, Watch } from '@kubernetes/client-node';
import { isJson } from './answers.ts';
import { KubernetesApiError } from './errors.ts';
import type { ApiRequests } from './requests.ts';

export interface ListPage {
  /** Objects as the API serves them (converted by the informer's `convert`). */
  items: unknown[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}

/** What the informer needs from the API (implemented over client-node below, by clientNodeListerWatcher). */
export interface ListerWatcher {
  /** `onWait` hears each answer the request waits out before it is sent again: a 429, or a 5xx with Retry-After (its `code` says which). */
  list(options: {
    labelSelector?: string | undefined;
    limit?: number | undefined;
    continue?: string | undefined;
    onWait?: ((error: Error) => void) | undefined;
  }): Promise<ListPage>;
  /**
   * Opens a watch; `onEvent` gets each event, `onDone` is called exactly once when the stream
   * ends (err null for a clean end). Resolves to a function that aborts the watch.
   */
  watch(
    options: { resourceVersion: string; labelSelector?: string; allowWatchBookmarks: boolean; timeoutSeconds: number },
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<() => void>;
}

/** A list request's parameters, as client-node's generated list methods take them. */
export interface ListParams {
  labelSelector?: string;
  limit?: number;
  _continue?: string;
}

/**
 * How long client-node 2.x's Watch lets a watch stay quiet before it ends it: above the minute
 * between kube-apiserver's bookmarks (the cacher's defaultBookmarkFrequency), so that they arrive
 * and keep the resume point fresh. Its default, 30 s, ended every quiet watch before the first
 * bookmark: the resourceVersion never moved, and a watch resumed after an API server's restart
 * started from the last list's. (The same timer covers the wait for the answer; the informer
 * gives up on that after 30 s by itself.)
 */
const QUIET_WATCH_MS = 90_000;

/**
 * `resource` (e.g. ipaddresses.networking.k8s.io) at `path` (its collection URL path); `listPage`
 * is the generated API's list method.
 */
export function clientNodeListerWatcher(
  kc: KubeConfig,
  requests: ApiRequests,
  resource: string,
  path: string,
  listPage: (params: ListParams, options: ConfigurationOptions) => Promise<unknown>,
): ListerWatcher {
  const watch = new Watch(kc);
  // a private field of client-node 2.x (1.x has no such timer): set where it exists
  const timer = watch as unknown as { requestTimeoutMs?: number };
  if (typeof timer.requestTimeoutMs === 'number') timer.requestTimeoutMs = QUIET_WATCH_MS;
  return {
    async list(o) {
      const params: ListParams = {
        ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
        ...(o.continue !== undefined ? { _continue: o.continue } : {}),
      };
      // client-node decodes a body that is not JSON (an auth proxy's login page answered 200) as an
      // empty list object; only the content type of the answer tells it apart from `{}`.
      let contentType: string | undefined;
      const probe: ObservableMiddleware = {
        pre: (context) => new Observable(Promise.resolve(context)),
        post: (context) => {
          const type = context.headers['content-type'];
          contentType = typeof type === 'string' ? type.split(';')[0]!.trim() : undefined;
          return new Observable(Promise.resolve(context));
        },
      };
      const page = await requests.run(
        { verb: 'list', resource },
        (opts) => {
          contentType = undefined;
          return listPage(params, { ...opts, middleware: [...(opts.middleware ?? []), probe], middlewareMergeStrategy: 'append' });
        },
        o.onWait,
      );
      if (contentType !== undefined && !isJson(contentType)) {
        throw new KubernetesApiError(
          'list',
          resource,
          undefined,
          undefined,
          undefined,
          `the API server answered with a malformed body (content type ${contentType}): not JSON`,
        );
      }
      return page as ListPage;
    },
    async watch(o, onEvent, onDone) {
      const query: Record<string, string | number | boolean> = {
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: o.allowWatchBookmarks,
        timeoutSeconds: o.timeoutSeconds,
        ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
      };
      const controller = await watch.watch(path, query, (type: string, object: unknown) => onEvent(type, object), onDone);
      return () => controller.abort();
    },
  };
}
