// A create that went out and whose answer was lost — its connection dropped, or its deadline
// passed, after the server may have stored the object — is settled by reading the object back
// (GET by name), as a resend after a ServerTimeout is (kubernetes-create-resent.test.ts): the
// object there carrying the create's own fieldManager, the labels and parentRef sent and no
// deletionTimestamp is the success; another writer's object is a collision; no object at all
// means the create did not commit (yet): it is sent once more, with the same fieldManager. A
// read-back that fails leaves the outcome unknown, and the error says so. A create that never
// went out (connection refused) is not read back. Real HTTP against the API-server double, with
// client-node 2.x and 1.x; under Deno an undici client may see a dropped connection only as the
// deadline passing, which takes the same path.
import { describe, expect, it } from 'vitest';
import { KubernetesApiError, type KubernetesStore } from '../adapters/kubernetes/index.ts';
import { Allocator } from '../adapters/allocator.ts';
import { AlreadyExistsError, ErrAllocated } from '../adapters/errors.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { BOTH_CLIENT_NODES } from './k8s/kubeconfig.ts';
import { d, DB, outcome, record, REQUEST_TIMEOUT_MS, startDoubleForEachTest, storeOnDouble, WEB } from './k8s/lost-answers.ts';

startDoubleForEachTest();

const names = () => d.objects().map((o) => o.metadata.name);

describe.each(BOTH_CLIENT_NODES)('client-node %s: a create whose answer was lost', (_version, Config) => {
  /** A store on the double (with its cache when `start`), closed after the test. */
  function store(start = false, requestTimeoutMs = REQUEST_TIMEOUT_MS): KubernetesStore {
    return storeOnDouble({ start, requestTimeoutMs, Config });
  }

  it('its connection dropped after the server stored it: resolves to that object, read back, and the cache holds it', async () => {
    const s = store(true);
    await s.waitForSync();
    d.dropAfterCommit('create');
    const created = await s.create(record('10.0.0.1'));
    const stored = d.objects()[0]!;
    expect(created).toMatchObject({ name: '10.0.0.1', uid: stored.metadata.uid, parentRef: { name: 'web' } });
    expect([d.requestsOf('create').length, d.requestsOf('get').map((r) => r.path), names()]).toEqual([
      1,
      ['/apis/networking.k8s.io/v1/ipaddresses/10.0.0.1'],
      ['10.0.0.1'],
    ]);
    expect(s.cache.get('10.0.0.1')?.uid).toBe(stored.metadata.uid);
  });

  it('its deadline passed after the server stored it: resolves to that object, read back', async () => {
    const s = store(false, 300);
    const held = d.holdReply('create');
    const created = await s.create(record('10.0.0.1'));
    held.release();
    expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([1, 1]);
  });

  it('its deadline passed while it waited out a ServerTimeout the server answered after storing it: resolves, read back', async () => {
    d.timeOutAfterCommit('create'); // Retry-After: 1, longer than the deadline
    const created = await store(false, 300).create(record('10.0.0.1'));
    expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([1, 1]);
  });

  it('allocate(ip) through an Allocator resolves, where it rejected with the network error', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.dropAfterCommit('create');
      await alloc.allocate('10.0.0.5', WEB);
      expect([await alloc.has('10.0.0.5'), alloc.used(), names()]).toEqual([true, 1, ['10.0.0.5']]);
    } finally {
      alloc.destroy();
    }
  });

  it('allocateNext hands out the address the lost create took, leaving no object behind', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.dropAfterCommit('create');
      const ip = await alloc.allocateNext(WEB);
      expect([names(), alloc.used()]).toEqual([[ip], 1]);
    } finally {
      alloc.destroy();
    }
  });

  it('dropped before the server stored it: not there when read back, sent once more with the same fieldManager, and resolves', async () => {
    const s = store();
    d.dropBeforeCommit('create');
    const created = await s.create(record('10.0.0.1'));
    expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
    const [first, again] = d.requestsOf('create');
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([2, 1]);
    expect(again!.query.fieldManager).toBe(first!.query.fieldManager);
    expect(again!.body).toEqual(first!.body);
  });

  it('sent once more and dropped again before it was stored: read back again, and the network error stands', async () => {
    d.dropBeforeCommit('create');
    const held = d.holdReply('get');
    const creating = outcome(store().create(record('10.0.0.1')));
    await held.applied;
    d.dropBeforeCommit('create');
    held.release();
    const err = await creating;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).not.toContain('reading it back');
    expect([d.requestsOf('create').length, d.requestsOf('get').length, names()]).toEqual([2, 2, []]);
  });

  it('another writer’s object there when read back: AlreadyExistsError, and allocate(ip) is ErrAllocated', async () => {
    d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: DB } });
    d.dropBeforeCommit('create'); // the server would have answered 409: that answer lost
    expect(await outcome(store().create(record('10.0.0.1')))).toBeInstanceOf(AlreadyExistsError);
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([1, 1]);

    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.holdWatches(); // the cache has not seen it yet: the create goes out
      d.insert({ metadata: { name: '10.0.0.5', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
      d.dropBeforeCommit('create');
      expect(await outcome(alloc.allocate('10.0.0.5', WEB))).toBeInstanceOf(ErrAllocated);
    } finally {
      alloc.destroy();
    }
  });

  it('the read-back failing: a KubernetesApiError that says the object may have been created, and why it was not read', async () => {
    d.dropAfterCommit('create');
    d.failNext('get', 1, 503);
    const err = await outcome(store().create(record('10.0.0.1')));
    expect(err).toBeInstanceOf(KubernetesApiError);
    const e = err as KubernetesApiError;
    expect(e.code).toBeUndefined();
    expect(e.message).toMatch(
      /^create ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": .+; the object may have been created, and reading it back failed: HTTP 503 /,
    );
    expect([d.requestsOf('create').length, d.requestsOf('get').length, names()]).toEqual([1, 1, ['10.0.0.1']]);
  });

  it.each([500, 502, 503, 504])(
    'answered %i naming no wait after the server stored it: resolves to that object, read back',
    async (code) => {
      d.failAfterCommit('create', code);
      const created = await store().create(record('10.0.0.1'));
      expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
      expect([d.requestsOf('create').length, d.requestsOf('get').length, names()]).toEqual([1, 1, ['10.0.0.1']]);
    },
  );

  it('a proxy’s 502 with nothing stored: not there when read back, sent once more with the same fieldManager, and resolves', async () => {
    d.failNext('create', 1, 502);
    const created = await store().create(record('10.0.0.1'));
    expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
    const [first, again] = d.requestsOf('create');
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([2, 1]);
    expect(again!.query.fieldManager).toBe(first!.query.fieldManager);
  });

  it('allocateNext after a 502 that came after the server stored the object hands out that address, leaving no object behind', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.failAfterCommit('create', 502);
      const ip = await alloc.allocateNext(WEB);
      expect([names(), alloc.used()]).toEqual([[ip], 1]);
    } finally {
      alloc.destroy();
    }
  });

  it.each([501, 505])('answered %i: the answer stands, nothing read back', async (code) => {
    d.failNext('create', 1, code);
    const err = await outcome(store().create(record('10.0.0.1')));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).code).toBe(code);
    expect([d.requestsOf('create').length, d.requestsOf('get').length, names()]).toEqual([1, 0, []]);
  });

  it('a create that never went out (connection refused) is not read back: it fails as before', async () => {
    const s = store();
    await d.stopListening();
    const err = await outcome(s.create(record('10.0.0.1')));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toContain('ECONNREFUSED');
    expect((err as KubernetesApiError).message).not.toContain('reading it back');
  });
});
