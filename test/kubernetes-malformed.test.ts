// KubernetesStore and KubernetesServiceCIDRs given answers that are not what they asked for: a
// list answered 200 by an auth proxy's login page, `{}`, a Status, a list without kind or
// apiVersion, a list whose items are not named objects, a watch event whose object has no name
// or no kind. Each is a failed list or watch — in
// lastError, retried after the backoff — never an empty list that syncs an empty cache or wipes
// a full one, and never a record named "". A get, create or delete answered with anything but
// the object asked for (or, for a delete, a Status) — `[]`, `42`, a JSON string, an object with a
// field of the wrong type or another name — rejects saying what came back, the cache unchanged.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceCIDR, deleteServiceCIDR, KubernetesServiceCIDRs } from '../adapters/kubernetes/index.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ApiServerDouble, type KubeObject } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { cacheNames, Mirror, until, openStore } from './k8s/helpers.ts';

const LOGIN_PAGE = '<html><body>Sign in to continue</body></html>';
/** An answer cut short, as a proxy or a broken server may send it (the double's garbleNext). */
const TRUNCATED_JSON = '{"kind": "IPAddressLi';

function ipAddress(name: string): KubeObject {
  return {
    metadata: { name, labels: allocatorLabels('IPv4') },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  };
}

const V1 = 'networking.k8s.io/v1';

const list = (items: unknown[]) => ({
  kind: 'IPAddressList',
  apiVersion: V1,
  metadata: { resourceVersion: '9' },
  items,
});

/** Named rows: what answers the list, and what lastError then says. */
const badLists: { name: string; body: unknown; contentType?: string; says: string }[] = [
  {
    name: 'a login page (200 text/html)',
    body: LOGIN_PAGE,
    says: 'list ipaddresses.networking.k8s.io: the API server answered with a malformed body (content type text/html): not JSON',
  },
  {
    // Regression: said as "a text that is not JSON (not quoted: it may hold a credential)", the
    // words for an exec credential plugin's output
    name: 'JSON cut short (200 application/json)',
    body: TRUNCATED_JSON,
    contentType: 'application/json',
    says: 'list ipaddresses.networking.k8s.io: the API server answered with a malformed body (content type application/json): not JSON',
  },
  {
    name: 'an empty object',
    body: {},
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an empty object, not an IPAddressList',
  },
  {
    // what no kube-apiserver sends: it writes kind and apiVersion on every list
    name: 'a list without kind or apiVersion',
    body: { metadata: { resourceVersion: '9' }, items: [] },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an object without a kind, not an IPAddressList',
  },
  {
    name: 'a list whose kind is a number',
    body: { ...list([]), kind: 7 },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an object whose kind is a number, not an IPAddressList',
  },
  {
    name: 'a list without apiVersion',
    body: { kind: 'IPAddressList', metadata: { resourceVersion: '9' }, items: [] },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList without an apiVersion',
  },
  {
    name: 'a list whose apiVersion is null',
    body: { ...list([]), apiVersion: null },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList without an apiVersion',
  },
  {
    name: 'a list whose apiVersion is an object',
    body: { ...list([]), apiVersion: { group: 'networking.k8s.io' } },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose apiVersion is an object, not a string',
  },
  {
    // the store asks for networking.k8s.io/v1: a v1beta1 list (a proxy's stale cache, another
    // server) is not read as one of it
    name: 'a list of another apiVersion',
    body: { ...list([]), apiVersion: 'networking.k8s.io/v1beta1' },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
  },
  {
    name: "a generic List (kind List) whose apiVersion is not metav1's",
    body: { ...list([]), kind: 'List', apiVersion: 'networking.k8s.io/v1' },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with a List of apiVersion "networking.k8s.io/v1", not "v1"',
  },
  {
    // a generic List's items say their own kind and apiVersion (kubectl's do): one of another
    // group or version (a proxy's stale cache) is no IPAddress of the version asked for
    name: 'a generic List (kind List) holding an IPAddress of another apiVersion',
    body: {
      ...list([{ ...ipAddress('10.96.0.9'), kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1beta1' }]),
      kind: 'List',
      apiVersion: 'v1',
    },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose item 0 is an IPAddress of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
  },
  {
    name: 'a generic List (kind List) holding a Service',
    body: { ...list([{ ...ipAddress('10.96.0.9'), kind: 'Service', apiVersion: 'v1' }]), kind: 'List', apiVersion: 'v1' },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose item 0 is an object of kind "Service", not an IPAddress',
  },
  {
    name: 'a Status sent with 200',
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an object of kind "Status", not an IPAddressList',
  },
  {
    name: 'a list whose items are null',
    body: { ...list([]), items: null },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose items are null',
  },
  {
    name: 'an empty JSON array',
    body: [],
    says: 'list ipaddresses.networking.k8s.io: the API server answered with a JSON array, not an IPAddressList',
  },
  {
    name: 'a JSON number',
    body: 42,
    says: 'list ipaddresses.networking.k8s.io: the API server answered with the JSON number 42, not an IPAddressList',
  },
  {
    name: 'a JSON string',
    body: JSON.stringify('hello'),
    contentType: 'application/json',
    says: 'list ipaddresses.networking.k8s.io: the API server answered with the JSON string "hello", not an IPAddressList',
  },
  {
    name: 'a list whose items are an object',
    body: { ...list([]), items: { a: {} } },
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose items are an object, not a list',
  },
  {
    name: 'a list whose item is null',
    body: list([null]),
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose item 0 is null',
  },
  {
    name: 'a list whose item has no metadata',
    body: list([{ spec: {} }]),
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose item 0 is an object without metadata',
  },
  {
    name: 'a list whose item has no name',
    body: list([{ metadata: { uid: 'u1' } }]),
    says: 'list ipaddresses.networking.k8s.io: the API server answered with an IPAddressList whose item 0 is an object without a name',
  },
];

describe('KubernetesStore: a list or watch answer that is not what was asked for', () => {
  let d: ApiServerDouble;
  const stores: { close(): void }[] = [];

  const open = () => openStore(d.url, stores);

  beforeEach(async () => {
    d = await ApiServerDouble.start();
    for (const ip of ['10.0.0.1', '10.0.0.2']) d.insert(ipAddress(ip));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    await d.close();
  });

  for (const bad of badLists) {
    it(`the first list answered with ${bad.name}: a failed list, retried; the store syncs only with the real list`, async () => {
      d.proxyAnswerNext('list', 'ipaddresses', bad.body, bad.contentType ? { contentType: bad.contentType } : {});
      const { store, errors } = open();
      store.start();
      await store.waitForSync();
      expect(errors).toEqual([bad.says]);
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(store.stats.lists).toBe(2);
    });

    it(`a re-list answered with ${bad.name}: the cache is kept, nothing deleted, the next list applied`, async () => {
      const { store, errors } = open();
      store.start();
      await store.waitForSync();
      const mirror = new Mirror();
      store.cache.subscribe(mirror);
      // the watch ends and is refused with a 500: a re-list, answered by the proxy first
      await until(() => d.openWatches() === 1);
      d.failNext('watch', 1, 500);
      d.proxyAnswerNext('list', 'ipaddresses', bad.body, bad.contentType ? { contentType: bad.contentType } : {});
      d.closeWatches();
      // at least 3: a further list may come on top, and waiting for exactly 3, polling, could miss
      // that count between two polls and wait until the test's timeout
      await until(() => store.stats.lists >= 3 && store.state === 'synced', 'the list after the failed one');
      expect(errors).toContain(bad.says);
      expect(mirror.log).toEqual(['+10.0.0.1', '+10.0.0.2']); // the replay; no delete, no record named ""
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  it.each([
    ['an ADDED', 'null', null, 'null'],
    ['an ADDED', 'without metadata', { spec: {} }, 'an object without metadata'],
    ['an ADDED', 'without a name', { metadata: { resourceVersion: '50' } }, 'an object without a name'],
    ['a DELETED', 'without a name', { metadata: { uid: 'u1' } }, 'an object without a name'],
    [
      'an ADDED',
      'a Service named like a free address',
      { kind: 'Service', apiVersion: 'v1', metadata: { name: '10.0.0.4', namespace: 'default', resourceVersion: '50' } },
      'an object of kind "Service", not an IPAddress',
    ],
    [
      'a DELETED',
      'a ServiceCIDR named like a held address',
      { kind: 'ServiceCIDR', apiVersion: 'networking.k8s.io/v1', metadata: { name: '10.0.0.1', resourceVersion: '50' } },
      'an object of kind "ServiceCIDR", not an IPAddress',
    ],
    [
      'an ADDED',
      'without kind or apiVersion',
      { metadata: { name: '10.0.0.4', resourceVersion: '50' } },
      'an object without a kind, not an IPAddress',
    ],
    [
      'a DELETED',
      'an IPAddress without apiVersion',
      { kind: 'IPAddress', metadata: { name: '10.0.0.1', resourceVersion: '50' } },
      'an IPAddress without an apiVersion',
    ],
    [
      'a MODIFIED',
      'an object whose kind is a list',
      { kind: ['IPAddress'], apiVersion: 'networking.k8s.io/v1', metadata: { name: '10.0.0.1', resourceVersion: '50' } },
      'an object whose kind is a list holding strings, not an IPAddress',
    ],
    [
      'a DELETED',
      'an IPAddress of another apiVersion',
      { kind: 'IPAddress', apiVersion: 'example.com/v1', metadata: { name: '10.0.0.1', resourceVersion: '50' } },
      'an IPAddress of apiVersion "example.com/v1", not "networking.k8s.io/v1"',
    ],
  ])(
    '%s event whose object is %s: the watch fails, the store re-lists, the cache keeps only IPAddresses',
    async (event, _name, object, problem) => {
      const { store, errors } = open();
      store.start();
      await store.waitForSync();
      await until(() => d.openWatches() === 1);
      const type = event.split(' ')[1]!;
      d.sendWatchEvent(type, object);
      d.insert(ipAddress('10.0.0.3')); // the re-list must bring it, whether the watch saw it or not
      await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
      expect(errors[0]).toBe(`watch ipaddresses.networking.k8s.io: the API server sent ${event} event whose object is ${problem}`);
      await until(() => store.cache.get('10.0.0.3') !== undefined);
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    },
  );

  /**
   * Named rows: a 2xx answer to a get, create or delete of the IPAddress `name` that is not what
   * was asked for, and what the error then says came back. The body is sent as JSON unless it is
   * the login page (text/html); `json` sends a string as a JSON string.
   */
  const badObjects = (name: string): { name: string; body: unknown; json?: boolean; contentType?: string; what: string }[] => [
    { name: 'a login page (200 text/html)', body: LOGIN_PAGE, what: 'a malformed body (content type text/html): not JSON' },
    // Regression: said as "a text that is not JSON (not quoted: it may hold a credential)", the
    // words for an exec credential plugin's output, and without what a create may have done
    {
      name: 'JSON cut short (application/json)',
      body: TRUNCATED_JSON,
      contentType: 'application/json',
      what: 'a malformed body (content type application/json): not JSON',
    },
    { name: 'an empty JSON array', body: [], what: `a JSON array, not the IPAddress "${name}"` },
    { name: 'a JSON number', body: 42, what: `the JSON number 42, not the IPAddress "${name}"` },
    { name: 'a JSON string', body: 'hello', json: true, what: `the JSON string "hello", not the IPAddress "${name}"` },
    { name: 'an empty object', body: {}, what: `an object without metadata, not the IPAddress "${name}"` },
    {
      name: 'another IPAddress',
      body: { kind: 'IPAddress', apiVersion: V1, metadata: { name: '10.0.0.8' } },
      what: `the IPAddress "10.0.0.8", not "${name}"`,
    },
    {
      name: 'the IPAddress without kind or apiVersion',
      body: { metadata: { name, resourceVersion: '50' }, spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } } },
      what: `an object without a kind, not the IPAddress "${name}"`,
    },
    {
      name: 'the IPAddress without apiVersion',
      body: { kind: 'IPAddress', metadata: { name, resourceVersion: '50' } },
      what: 'an IPAddress without an apiVersion',
    },
    {
      name: 'the IPAddress whose apiVersion is a number',
      body: { kind: 'IPAddress', apiVersion: 1, metadata: { name, resourceVersion: '50' } },
      what: 'an IPAddress whose apiVersion is a number, not a string',
    },
    {
      name: 'the IPAddress of another apiVersion',
      body: { kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1beta1', metadata: { name, resourceVersion: '50' } },
      what: 'an IPAddress of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
    },
    {
      name: 'the IPAddress whose spec.parentRef is a string',
      body: { kind: 'IPAddress', apiVersion: V1, metadata: { name, resourceVersion: '50' }, spec: { parentRef: 'services/default/web' } },
      what: `an object ("${name}") whose spec.parentRef is a string, not an object, not the IPAddress "${name}"`,
    },
    {
      name: 'the IPAddress whose spec.parentRef.name is a number',
      body: {
        kind: 'IPAddress',
        apiVersion: V1,
        metadata: { name, resourceVersion: '50' },
        spec: { parentRef: { resource: 'services', name: 7 } },
      },
      what: `an object ("${name}") whose spec.parentRef.name is a number, not a string, not the IPAddress "${name}"`,
    },
  ];

  /** Arms the double's proxy to answer the next `verb` on ipaddresses with `row.body`. */
  const answerWith = (verb: 'get' | 'create' | 'delete', row: { body: unknown; json?: boolean; contentType?: string }, status = 200) =>
    d.proxyAnswerNext(verb, 'ipaddresses', row.json ? JSON.stringify(row.body) : row.body, {
      status,
      ...(row.json ? { contentType: 'application/json' } : {}),
      ...(row.contentType === undefined ? {} : { contentType: row.contentType }),
    });

  for (const row of badObjects('10.0.0.1')) {
    it(`get answered with ${row.name}: rejects saying what came back, never a record`, async () => {
      const { store } = open();
      answerWith('get', row);
      await expect(store.get('10.0.0.1')).rejects.toMatchObject({
        name: 'KubernetesApiError',
        message: `get ipaddresses.networking.k8s.io "10.0.0.1": the API server answered with ${row.what}`,
      });
      expect(await store.get('10.0.0.1')).toMatchObject({ name: '10.0.0.1' });
    });
  }

  const record = {
    name: '10.0.0.5',
    labels: allocatorLabels('IPv4'),
    parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' },
  };
  for (const row of badObjects('10.0.0.5')) {
    it(`a create answered 201 with ${row.name}: rejects saying what came back, and the cache is unchanged`, async () => {
      const { store } = open();
      store.start();
      await store.waitForSync();
      const mirror = new Mirror();
      store.cache.subscribe(mirror);
      answerWith('create', row, 201);
      await expect(store.create(record)).rejects.toMatchObject({
        name: 'KubernetesApiError',
        message: `create ipaddresses.networking.k8s.io "10.0.0.5": the API server answered with ${row.what} (the object may have been created; the watch will show it)`,
      });
      expect(mirror.log).toEqual(['+10.0.0.1', '+10.0.0.2']); // the replay only
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  /**
   * A delete's answers: the get's (an IPAddress is the object marked for deletion, and must be
   * the one asked for), except that anything else is neither a Status nor that IPAddress.
   */
  const badDeletes: { name: string; body: unknown; json?: boolean; contentType?: string; what: string }[] = [
    ...badObjects('10.0.0.1')
      .filter((row) => row.name !== 'an empty object')
      .map((row) =>
        (row.body as { kind?: unknown } | null)?.kind === 'IPAddress'
          ? row
          : { ...row, what: row.what.replace(', not the IPAddress', ', neither a Status nor the IPAddress') },
      ),
    { name: 'an empty object', body: {}, what: 'an empty object, neither a Status nor the IPAddress "10.0.0.1"' },
    {
      name: 'a Status without apiVersion',
      body: { kind: 'Status', status: 'Success', details: { name: '10.0.0.1', uid: 'u1' } },
      what: 'a Status without an apiVersion',
    },
    {
      name: 'a Status whose details.uid is a number',
      body: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: '10.0.0.1', uid: 7 } },
      what: 'a Status whose details.uid is a number, not a string',
    },
    {
      name: 'a Status whose details are a string',
      body: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: 'deleted' },
      what: 'a Status whose details is a string, not an object',
    },
  ];
  for (const row of badDeletes) {
    it(`a delete answered with ${row.name}: rejects saying what came back, and the cache is unchanged`, async () => {
      const { store } = open();
      store.start();
      await store.waitForSync();
      answerWith('delete', row);
      await expect(store.delete('10.0.0.1')).rejects.toMatchObject({
        name: 'KubernetesApiError',
        message: `delete ipaddresses.networking.k8s.io "10.0.0.1": the API server answered with ${row.what} (the object may have been deleted; the watch will show it)`,
      });
      expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  }

  it('createServiceCIDR answered 201 with a login page: rejects saying so, never a ServiceCIDR named ""', async () => {
    d.proxyAnswerNext('create', 'servicecidrs', LOGIN_PAGE, { status: 201 });
    await expect(createServiceCIDR(kubeConfigFor(d.url), 'extra', ['10.100.0.0/24'])).rejects.toThrow(
      'create servicecidrs.networking.k8s.io "extra": the API server answered with a malformed body (content type text/html): not JSON (the object may have been created)',
    );
  });

  it('createServiceCIDR answered 201 with a ServiceCIDR whose spec.cidrs is a string: rejects, never one CIDR per character', async () => {
    const body = { kind: 'ServiceCIDR', apiVersion: V1, metadata: { name: 'extra' }, spec: { cidrs: '10.100.0.0/24' } };
    d.proxyAnswerNext('create', 'servicecidrs', body, { status: 201 });
    await expect(createServiceCIDR(kubeConfigFor(d.url), 'extra', ['10.100.0.0/24'])).rejects.toMatchObject({
      name: 'KubernetesApiError',
      message:
        'create servicecidrs.networking.k8s.io "extra": the API server answered with an object ("extra") whose spec.cidrs is a string, not a list of strings, not the ServiceCIDR "extra" (the object may have been created)',
    });
  });

  it('createServiceCIDR (v1beta1) answered 201 with a ServiceCIDR of apiVersion v1: rejects, the version asked for is the one read', async () => {
    const body = { kind: 'ServiceCIDR', apiVersion: V1, metadata: { name: 'extra' }, spec: { cidrs: ['10.100.0.0/24'] } };
    d.proxyAnswerNext('create', 'servicecidrs', body, { status: 201 });
    await expect(createServiceCIDR(kubeConfigFor(d.url), 'extra', ['10.100.0.0/24'], { apiVersion: 'v1beta1' })).rejects.toMatchObject({
      name: 'KubernetesApiError',
      message:
        'create servicecidrs.networking.k8s.io "extra": the API server answered with a ServiceCIDR of apiVersion "networking.k8s.io/v1", not "networking.k8s.io/v1beta1" (the object may have been created)',
    });
  });

  it('KubernetesServiceCIDRs: a list of another apiVersion is a failed list, retried', async () => {
    const { source, errors } = cidrSource();
    d.proxyAnswerNext('list', 'servicecidrs', {
      kind: 'ServiceCIDRList',
      apiVersion: 'networking.k8s.io/v1beta1',
      metadata: {},
      items: [],
    });
    source.start();
    await source.waitForSync();
    expect(errors).toEqual([
      'list servicecidrs.networking.k8s.io: the API server answered with a ServiceCIDRList of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
    ]);
    expect(source.list().map((c) => c.name)).toEqual(['kubernetes']);
  });

  it('deleteServiceCIDR answered with a JSON number: rejects saying so, not true', async () => {
    d.proxyAnswerNext('delete', 'servicecidrs', 42);
    await expect(deleteServiceCIDR(kubeConfigFor(d.url), 'kubernetes')).rejects.toMatchObject({
      name: 'KubernetesApiError',
      message:
        'delete servicecidrs.networking.k8s.io "kubernetes": the API server answered with the JSON number 42, neither a Status nor the ServiceCIDR "kubernetes" (the object may have been deleted)',
    });
  });

  /** A ServiceCIDR source over the double holding "kubernetes", not started, and the errors it reports. */
  function cidrSource(): { source: KubernetesServiceCIDRs; errors: string[] } {
    d.insert({ metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/24'] } }, 'servicecidrs');
    const source = new KubernetesServiceCIDRs(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 }, start: false });
    stores.push(source);
    const errors: string[] = [];
    source.onStateChange((_state, error) => {
      if (error !== undefined) errors.push(error.message);
    });
    return { source, errors };
  }

  it('KubernetesServiceCIDRs: a list answered with a login page, or with a ServiceCIDR without a name, is a failed list, retried', async () => {
    const { source, errors } = cidrSource();
    d.proxyAnswerNext('list', 'servicecidrs', LOGIN_PAGE);
    source.start();
    await source.waitForSync();
    expect(errors).toEqual([
      'list servicecidrs.networking.k8s.io: the API server answered with a malformed body (content type text/html): not JSON',
    ]);
    expect(source.list().map((c) => c.name)).toEqual(['kubernetes']);

    await until(() => d.openWatches() === 1);
    d.failNext('watch', 1, 500);
    d.proxyAnswerNext('list', 'servicecidrs', {
      kind: 'ServiceCIDRList',
      apiVersion: V1,
      metadata: {},
      items: [{ spec: { cidrs: ['10.0.0.0/8'] } }],
    });
    d.closeWatches();
    // at least 4: as above, a list may come on top
    await until(() => source.stats.lists >= 4 && source.state === 'synced', 'the list after the failed one');
    expect(errors).toContain(
      'list servicecidrs.networking.k8s.io: the API server answered with a ServiceCIDRList whose item 0 is an object without metadata',
    );
    expect(source.list().map((c) => c.name)).toEqual(['kubernetes']);
  });

  it('KubernetesServiceCIDRs: a list without kind or apiVersion is a failed list, retried, never an empty one', async () => {
    const { source, errors } = cidrSource();
    d.proxyAnswerNext('list', 'servicecidrs', { metadata: { resourceVersion: '9' }, items: [] });
    source.start();
    await source.waitForSync();
    expect(errors).toEqual([
      'list servicecidrs.networking.k8s.io: the API server answered with an object without a kind, not a ServiceCIDRList',
    ]);
    expect(source.list().map((c) => c.name)).toEqual(['kubernetes']);
  });

  it('KubernetesServiceCIDRs: a ServiceCIDR whose spec.cidrs is a string is a failed list, said once, never one CIDR per character', async () => {
    const { source, errors } = cidrSource();
    const items = [{ metadata: { name: 'str', resourceVersion: '5' }, spec: { cidrs: '10.97.0.0/24' } }];
    d.proxyAnswerNext('list', 'servicecidrs', { kind: 'ServiceCIDRList', apiVersion: V1, metadata: { resourceVersion: '9' }, items });
    source.start();
    await source.waitForSync();
    expect(errors).toEqual([
      'list servicecidrs.networking.k8s.io: the API server answered with a ServiceCIDRList whose item 0 is an object ("str") whose spec.cidrs is a string, not a list of strings',
    ]);
    expect(source.list().map((c) => [c.name, c.cidrs])).toEqual([['kubernetes', ['10.96.0.0/24']]]);
  });

  it('an ADDED event whose IPAddress has labels holding a number: the watch fails, the store re-lists', async () => {
    const { store, errors } = open();
    store.start();
    await store.waitForSync();
    await until(() => d.openWatches() === 1);
    d.sendWatchEvent('ADDED', {
      kind: 'IPAddress',
      apiVersion: V1,
      metadata: { name: '10.0.0.9', resourceVersion: '50', labels: { a: 1 } },
    });
    await until(() => store.stats.lists === 2 && store.state === 'synced', 'the re-list');
    expect(errors[0]).toBe(
      'watch ipaddresses.networking.k8s.io: the API server sent an ADDED event whose object is an object ("10.0.0.9") whose metadata.labels is an object holding a number, not a map of strings',
    );
    expect(cacheNames(store.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
  });
});
