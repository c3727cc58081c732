// The informer's list and watch of one cluster-scoped resource: what the informer needs from the
// API (ListerWatcher, as client-go's cache.ListerWatcher) and its implementation over client-node:
// each list page through ApiRequests (deadline, 429 waits, aborted on close), each watch sent as
// client-node's Watch sends it and read by us (watch-request.ts; watch-session.ts gives it
// deadlines of its own).
import type { ConfigurationOptions, KubeConfig } from '@kubernetes/client-node';
import { requestJson } from './answer-probe.ts';
import { malformedAnswer } from './errors.ts';
import type { ApiRequests } from './requests.ts';
import { openWatch } from './watch-request.ts';

export interface ListPage {
  /** Objects as the API serves them (converted by the informer's `convert`). */
  items: unknown[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}

/** What the informer needs from the API (implemented over client-node below, by clientNodeListerWatcher). */
export interface ListerWatcher {
  /** The API server listed and watched, as messages show it (shownServer), for a failure without an answer. */
  readonly server?: string | undefined;
  /** `onWait` hears each answer the request waits out before it is sent again — a 429, or a 5xx with Retry-After (its `code` says which) — and the seconds waited. */
  list(options: {
    labelSelector?: string | undefined;
    limit?: number | undefined;
    continue?: string | undefined;
    onWait?: ((error: Error, seconds: number) => void) | undefined;
  }): Promise<ListPage>;
  /**
   * Opens a watch; `onEvent` gets each event, `onDone` is called exactly once when the stream
   * ends (err null for a clean end). A line that is no event, or an `onEvent` that throws, ends
   * it with a KubernetesApiError: the watch failed (any other error after the answer is a lost
   * connection). Resolves to a function that aborts the watch. `signal` aborts it at any time,
   * before the answer too (onDone hears the abort).
   */
  watch(
    options: {
      resourceVersion: string;
      labelSelector?: string;
      allowWatchBookmarks: boolean;
      timeoutSeconds: number;
      signal?: AbortSignal | undefined;
    },
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<() => void>;
}

/** A list request's parameters, as client-node's generated list methods take them. @internal */
export interface ListParams {
  labelSelector?: string;
  limit?: number;
  _continue?: string;
}

/**
 * How long a watch request may stay quiet (no answer, then no data) before it is aborted, in
 * place of the 30 s of client-node 2.x's Watch: above the minute between kube-apiserver's
 * bookmarks (the cacher's defaultBookmarkFrequency), so that they arrive and keep the resume
 * point fresh. 30 s ended every quiet watch before the first bookmark: the resourceVersion never
 * moved, and a watch resumed after an API server's restart started from the last list's. (For
 * the wait for the answer the informer gives up after 30 s by itself; this only lets go of the
 * request.)
 */
const QUIET_WATCH_MS = 90_000;

/**
 * `resource` (e.g. ipaddresses.networking.k8s.io) at `path` (its collection URL path); `listPage`
 * is the generated API's list method.
 * @internal
 */
export function clientNodeListerWatcher(
  kc: KubeConfig,
  requests: ApiRequests,
  resource: string,
  path: string,
  listPage: (params: ListParams, options: ConfigurationOptions) => Promise<unknown>,
): ListerWatcher {
  return {
    server: requests.server,
    async list(o) {
      const params: ListParams = {
        ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
        ...(o.continue !== undefined ? { _continue: o.continue } : {}),
      };
      // read from the JSON as the server sent it (answer-probe.ts), never client-node's decoding of it
      const malformed = (what: string) => malformedAnswer('list', resource, undefined, what);
      return (await requestJson(requests, { verb: 'list', resource }, (opts) => listPage(params, opts), malformed, o.onWait)) as ListPage;
    },
    async watch(o, onEvent, onDone) {
      const query: Record<string, string | number | boolean> = {
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: o.allowWatchBookmarks,
        timeoutSeconds: o.timeoutSeconds,
        ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
      };
      return openWatch(kc, { resource, path, query, timerMs: QUIET_WATCH_MS, signal: o.signal }, onEvent, onDone);
    },
  };
}
