// The watch's lines, read by the store itself: a line that is not JSON, not an event, longer than
// any event, or an event the informer fails to apply ends the watch as a failure — in lastError,
// followed by a re-list — never a change dropped while the state says synced. And the request on
// the wire is the one client-node's Watch sends; once ended, it leaves nothing on the signal it was given.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { Watch } from '@kubernetes/client-node';
import type { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { Informer } from '../adapters/kubernetes/informer.ts';
import { clientNodeListerWatcher } from '../adapters/kubernetes/lister-watcher.ts';
import { toRecord } from '../adapters/kubernetes/objects.ts';
import { ApiRequests } from '../adapters/kubernetes/requests.ts';
import { MAX_WATCH_LINE_BYTES } from '../adapters/kubernetes/watch-request.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ApiServerDouble, type KubeObject } from './k8s/apiserver-double.ts';
import { cacheNames, until, openStore } from './k8s/helpers.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const RESOURCE = 'ipaddresses.networking.k8s.io';
const PATH = '/apis/networking.k8s.io/v1/ipaddresses';

function ipAddress(name: string): KubeObject {
  return {
    metadata: { name, labels: allocatorLabels('IPv4') },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  };
}

/** An ADDED event line of `name`, padded with an annotation to exactly `bytes` bytes (newline not counted). */
function addedLine(name: string, resourceVersion: string, bytes: number): string {
  const event = (pad: string) =>
    JSON.stringify({
      type: 'ADDED',
      object: {
        kind: 'IPAddress',
        apiVersion: 'networking.k8s.io/v1',
        metadata: { name, uid: `uid-${name}`, resourceVersion, labels: allocatorLabels('IPv4'), annotations: { pad } },
        spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
      },
    });
  const line = event('x'.repeat(bytes - event('').length));
  expect(Buffer.byteLength(line)).toBe(bytes);
  return line;
}

/** Named rows: a line the server (or a proxy) writes, and what lastError then says. */
const badLines: { name: string; line: string; says: string }[] = [
  {
    name: 'an HTML page',
    line: '<html><body>Sign in to continue</body></html>',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not JSON: "<html><body>Sign in to continue</body></html>"`,
  },
  {
    name: 'a long line, with control characters (shown escaped, cut short)',
    line: `\u001b[2J${'y'.repeat(200)}`,
    says: `watch ${RESOURCE}: the API server sent a watch line that is not JSON: "\\x1b[2J${'y'.repeat(60)}"… (204 characters)`,
  },
  {
    name: 'JSON that is not an object',
    line: '["ADDED",{}]',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not an event (an object with a string "type" and an "object"): "[\\"ADDED\\",{}]"`,
  },
  {
    name: 'null',
    line: 'null',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not an event (an object with a string "type" and an "object"): "null"`,
  },
  {
    name: 'an event without a type',
    line: '{"object":{"metadata":{"name":"10.0.0.9"}}}',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not an event (an object with a string "type" and an "object"): "{\\"object\\":{\\"metadata\\":{\\"name\\":\\"10.0.0.9\\"}}}"`,
  },
  {
    name: 'an event whose type is a number',
    line: '{"type":1,"object":{}}',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not an event (an object with a string "type" and an "object"): "{\\"type\\":1,\\"object\\":{}}"`,
  },
  {
    name: 'an event without an object',
    line: '{"type":"ADDED"}',
    says: `watch ${RESOURCE}: the API server sent a watch line that is not an event (an object with a string "type" and an "object"): "{\\"type\\":\\"ADDED\\"}"`,
  },
];

describe('KubernetesStore: watch lines that are not events', () => {
  let d: ApiServerDouble;
  const stores: { close(): void }[] = [];

  const open = () => openStore(d.url, stores);

  async function synced(): Promise<{ store: KubernetesStore; errors: string[] }> {
    const opened = open();
    opened.store.start();
    await opened.store.waitForSync();
    await until(() => d.openWatches() === 1, 'the watch');
    return opened;
  }

  beforeEach(async () => {
    d = await ApiServerDouble.start();
    for (const ip of ['10.0.0.1', '10.0.0.2']) d.insert(ipAddress(ip));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    await d.close();
  });

  it('an event a proxy cut short: the watch fails and the store re-lists, so the object is not left out while synced', async () => {
    const { store, errors } = await synced();
    d.cutWatchEvents(1);
    d.insert(ipAddress('10.0.0.3')); // stored; its ADDED reaches the store as half a line
    await until(() => store.cache.get('10.0.0.3') !== undefined, 'the object, from the re-list');
    expect(store.stats.lists).toBe(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^watch ipaddresses\.networking\.k8s\.io: the API server sent a watch line that is not JSON: "\{\\"type\\":\\"ADDED\\",\\"object\\":.*"… \(\d+ characters\)$/,
    );
    await until(() => store.state === 'synced' && store.lastError === undefined, 'synced again');
    expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
  });

  it('a watch refused (403): lastError carries the Status message saying who may not watch what', async () => {
    d.denyAccess('watch', 'ipaddresses');
    const { store, errors } = open();
    store.start();
    await until(() => errors.length > 0, 'the refused watch');
    expect(errors[0]).toMatch(
      /^watch ipaddresses\.networking\.k8s\.io: HTTP 403 Forbidden: ipaddresses\.networking\.k8s\.io is forbidden: User ".*" cannot watch resource "ipaddresses"/,
    );
  });

  for (const bad of badLines) {
    it(`a line that is ${bad.name}: the watch fails saying so, the store re-lists`, async () => {
      const { store, errors } = await synced();
      d.sendWatchText(`${bad.line}\n`);
      await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
      expect(errors).toEqual([bad.says]);
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  // Regression: an ERROR event on a stream the server kept open was ignored: no re-list, the
  // state still synced, lastError unset, and the events after it on that stream applied.
  // client-go's reflector (watchHandler) ends the watch at an ERROR event; a 410 re-lists.
  it('an ERROR event 410 Expired on a stream left open ends the watch at once: the store re-lists, the events after it are not applied', async () => {
    const { store, errors } = await synced();
    const expired = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 5 (300)',
    };
    d.sendWatchText(`${JSON.stringify({ type: 'ERROR', object: expired })}\n${addedLine('10.0.0.9', '400', 400)}\n`);
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
    expect(store.stats.expired).toBe(1);
    expect(errors).toEqual([]); // an expired watch is no failure
    expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  // Regression: an ERROR event whose Status said Expired or Gone without a code (an aggregated
  // API server's or a proxy's; kube-apiserver writes code 410 too) was a failure: in lastError,
  // the re-list left to the backoff. client-go's reflector decides by the reason
  // (apierrors.IsResourceExpired, IsGone) and re-lists at once.
  for (const reason of ['Expired', 'Gone']) {
    it(`an ERROR event whose Status says ${reason} without a code is an expired watch: re-listed at once, no failure`, async () => {
      const { store, errors } = await synced();
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message: 'too old resource version: 5 (300)' };
      d.sendWatchText(`${JSON.stringify({ type: 'ERROR', object: status })}\n${addedLine('10.0.0.9', '400', 400)}\n`);
      await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
      expect(store.stats.expired).toBe(1);
      expect(errors).toEqual([]); // an expired watch is no failure
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  it('an ERROR event of another kind on a stream left open fails the watch (in lastError), and the store re-lists', async () => {
    const { store, errors } = await synced();
    const internal = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 500,
      reason: 'InternalError',
      message: 'etcd is unhappy',
    };
    d.sendWatchText(`${JSON.stringify({ type: 'ERROR', object: internal })}\n${addedLine('10.0.0.9', '400', 400)}\n`);
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^watch ipaddresses\.networking\.k8s\.io: .*etcd is unhappy/);
    expect(store.stats.expired).toBe(0);
    expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  // Regression: an ERROR event whose object is no Status (a proxy's or a broken server's) left
  // lastError saying only `watch ipaddresses.networking.k8s.io: [object Object] (the API server at …)`.
  for (const [name, object, says] of [
    ['an object without a kind', { foo: 1 }, 'an object without a kind'],
    ['null', null, 'null'],
    [
      'a Status without a code',
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'etcd is unhappy' },
      'a Status object ("etcd is unhappy")',
    ],
  ] as const) {
    it(`an ERROR event whose object is ${name}: the watch fails saying what came, and the store re-lists`, async () => {
      const { store, errors } = await synced();
      d.sendWatchText(`${JSON.stringify({ type: 'ERROR', object })}\n`);
      await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
      expect(errors).toEqual([
        `watch ${RESOURCE}: the API server sent a watch ERROR event whose object is not a Status with an HTTP code: ${says} (the API server at ${d.url})`,
      ]);
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  // Regression: an event of a type not known was dropped without a word. client-go's watch
  // decoder refuses it ("got invalid watch event type"), which ends the watch; its reflector re-lists.
  it('an event of a type not known fails the watch saying so, and the store re-lists', async () => {
    const { store, errors } = await synced();
    const line = addedLine('10.0.0.9', '400', 400).replace('"type":"ADDED"', '"type":"UPSERTED"');
    d.sendWatchText(`${line}\n`);
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
    expect(errors).toEqual([
      `watch ${RESOURCE}: the API server sent a watch event of a type not known, "UPSERTED" (known: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)`,
    ]);
    expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('empty lines between events are no events: skipped, the watch goes on', async () => {
    const { store, errors } = await synced();
    d.sendWatchText('\n\r\n');
    d.insert(ipAddress('10.0.0.3'));
    await until(() => store.cache.get('10.0.0.3') !== undefined, 'the event after the empty lines');
    expect(errors).toEqual([]);
    expect(store.stats.lists).toBe(1);
  });

  it(`a line of exactly ${MAX_WATCH_LINE_BYTES} bytes is an event like any other; one byte more fails the watch`, async () => {
    const { store, errors } = await synced();
    d.sendWatchText(`${addedLine('10.0.0.8', '3', MAX_WATCH_LINE_BYTES)}\n`);
    await until(() => store.cache.get('10.0.0.8') !== undefined, 'the event at the limit');
    expect(errors).toEqual([]);

    const tooLong = addedLine('10.0.0.9', '3', MAX_WATCH_LINE_BYTES + 1);
    d.sendWatchText(`${tooLong}\n`);
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
    expect(errors).toEqual([
      `watch ${RESOURCE}: the API server sent a watch line longer than 16,777,216 bytes (no newline within the first 16,777,217), ` +
        `starting ${JSON.stringify(tooLong.slice(0, 64))}…`,
    ]);
    expect(store.cache.get('10.0.0.9')).toBeUndefined();
  });

  it('a line that never ends fails the watch once it passes the limit, without waiting for its newline', async () => {
    const { store, errors } = await synced();
    const piece = 'z'.repeat(1024 * 1024);
    for (let sent = 0; sent <= MAX_WATCH_LINE_BYTES; sent += piece.length) d.sendWatchText(piece);
    await until(() => errors.length > 0, 'the failure');
    expect(errors[0]).toMatch(
      new RegExp(
        `^watch ${RESOURCE.replaceAll('.', '\\.')}: the API server sent a watch line longer than 16,777,216 bytes \\(no newline within the first [\\d,]+\\), starting "z{64}"…$`,
      ),
    );
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
  });
});

describe('the informer over the API: an event it fails to apply', () => {
  let d: ApiServerDouble;

  beforeEach(async () => {
    d = await ApiServerDouble.start();
    d.insert(ipAddress('10.0.0.1'));
  });
  afterEach(async () => {
    await d.close();
  });

  it('a convert that throws on a watch event fails the watch (in lastError) and the re-list applies the object', async () => {
    const kc = kubeConfigFor(d.url);
    const requests = new ApiRequests(d.url, 10_000);
    const lw = clientNodeListerWatcher(kc, requests, RESOURCE, PATH, async (params) => {
      const query = new URLSearchParams();
      if (params.limit !== undefined) query.set('limit', String(params.limit));
      if (params._continue !== undefined) query.set('continue', params._continue);
      return (await fetch(`${d.url}${PATH}?${query}`)).json();
    });
    let refuse = true;
    const informer = new Informer(lw, RESOURCE, {
      owner: 'test',
      backoff: { initialMs: 2, maxMs: 20 },
      convert: (obj) => {
        const record = toRecord(obj as never);
        if (record.name === '10.0.0.3' && refuse) {
          refuse = false;
          throw new Error('no room for 10.0.0.3');
        }
        return record;
      },
    });
    const errors: string[] = [];
    informer.onStateChange((_state, error) => {
      if (error !== undefined) errors.push(error.message);
    });
    informer.start();
    try {
      await informer.waitForSync();
      await until(() => d.openWatches() === 1, 'the watch');
      d.insert(ipAddress('10.0.0.3'));
      await until(() => informer.get('10.0.0.3') !== undefined, 'the object, from the re-list');
      expect(errors).toEqual([`watch ${RESOURCE}: applying a watch event of type "ADDED" failed: no room for 10.0.0.3`]);
      expect(informer.stats.lists).toBe(2);
      expect(informer.lastError).toBeUndefined();
    } finally {
      informer.stop();
    }
  });
});

describe('the watch request on the wire', () => {
  let d: ApiServerDouble;

  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    await d.close();
  });

  it('is the request client-node’s Watch sends: method, target and headers', async () => {
    const kc = kubeConfigFor(d.url);
    const query = { resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 60, labelSelector: 'a=b' };
    const theirs = await new Watch(kc).watch(
      PATH,
      query,
      () => {},
      () => {},
    );
    await until(() => d.requestsOf('watch').length === 1, 'client-node’s watch');
    const lw = clientNodeListerWatcher(kc, new ApiRequests(d.url, 10_000), RESOURCE, PATH, async () => ({}));
    let ended: unknown = 'not yet';
    const abort = await lw.watch(
      query,
      () => {},
      (err) => (ended = err),
    );
    await until(() => d.requestsOf('watch').length === 2, 'our watch');
    theirs.abort();
    abort();
    const [a, b] = d.requestsOf('watch');
    expect(b!.method).toBe(a!.method);
    expect(b!.target).toBe(a!.target);
    expect(b!.headers).toEqual(a!.headers);
    expect(b!.authorization).toBe(`Bearer ${'test-token-must-not-leak-0123456789'}`);
    await until(() => ended !== 'not yet', 'onDone after the abort');
  });
});

describe('a watch given a signal that outlives it', () => {
  // Regression: every watch left its abort listener on the signal it was given, for as long as
  // that signal lived (Node warns past 10 of them, and each held its watch's state).
  it('lets go of its abort listener once it ends, however it ends: a signal used for many watches gathers none', async () => {
    const d = await ApiServerDouble.start();
    const requests = new ApiRequests(d.url, 10_000);
    const lw = clientNodeListerWatcher(kubeConfigFor(d.url), requests, RESOURCE, PATH, async () => ({}));
    const signal = new AbortController().signal;
    const ends: unknown[] = [];
    const watch = () =>
      lw.watch(
        { resourceVersion: d.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300, signal },
        () => {},
        (err) => ends.push(err),
      );
    try {
      for (let i = 1; i <= 3; i++) {
        // ended by the server
        void watch();
        await until(() => d.openWatches() === 1, 'the watch');
        expect(getEventListeners(signal, 'abort')).toHaveLength(1); // the watch's own, while it runs
        d.closeWatches();
        await until(() => ends.length === 3 * i - 2, 'the watch ended by the server');
        // refused before any answer
        d.failNext('watch', 1, 500);
        await watch();
        await until(() => ends.length === 3 * i - 1, 'the watch refused');
        // aborted by its caller
        const abort = await watch();
        await until(() => d.openWatches() === 1, 'the watch');
        abort();
        await until(() => ends.length === 3 * i && d.openWatches() === 0, 'the watch aborted');
      }
      expect(ends.filter((e) => e === null)).toHaveLength(3);
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    } finally {
      await d.close();
    }
  });
});
