// A create the API server committed but answered with a ServerTimeout (500, Retry-After) is sent
// again, as client-go sends it, and meets the object its first send made: 409 AlreadyExists. The
// store then reads that object back, and takes it as its own only when it carries the request's
// own mark — the fieldManager every create is sent with, one of its own per create, which
// kube-apiserver records as the object's managedFields manager — with the labels and parentRef
// sent, and not being deleted. Any other object of that name (another writer's, for another
// Service or the same one; one without that mark) stays a collision. Real HTTP against the
// API-server double, which records managedFields as kube-apiserver does.
import { describe, expect, it } from 'vitest';
import { KubernetesApiError, type KubernetesStore } from '../adapters/kubernetes/index.ts';
import { Allocator } from '../adapters/allocator.ts';
import { AlreadyExistsError, ErrAllocated, ErrDestroyed } from '../adapters/errors.ts';
import { allocatorLabels, type ParentRef } from '../adapters/store.ts';
import { until } from './k8s/helpers.ts';
import { d, DB, outcome, record, startDoubleForEachTest, storeOnDouble, WEB } from './k8s/lost-answers.ts';

startDoubleForEachTest();

/** A store on the double, closed after the test. */
function store(start = false): KubernetesStore {
  return storeOnDouble({ start });
}

const names = () => d.objects().map((o) => o.metadata.name);

describe('a create committed but answered with a ServerTimeout, sent again and answered 409', () => {
  it('resolves to the object its first send made, read back, and the cache holds it', async () => {
    const s = store(true);
    await s.waitForSync();
    d.timeOutAfterCommit('create');
    const created = await s.create(record('10.0.0.1'));
    const stored = d.objects()[0]!;
    expect(created).toMatchObject({ name: '10.0.0.1', uid: stored.metadata.uid, parentRef: { name: 'web', namespace: 'default' } });
    expect([d.requestsOf('create').length, d.requestsOf('get').length, names()]).toEqual([2, 1, ['10.0.0.1']]);
    expect(s.cache.get('10.0.0.1')?.uid).toBe(stored.metadata.uid);
  });

  it('allocate(ip) through an Allocator succeeds, where it was ErrAllocated for the caller’s own address', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.timeOutAfterCommit('create');
      await alloc.allocate('10.0.0.5', WEB);
      expect([await alloc.has('10.0.0.5'), alloc.used(), names()]).toEqual([true, 1, ['10.0.0.5']]);
    } finally {
      alloc.destroy();
    }
  });

  it('allocateNext hands out the address the first send took, leaving no object behind', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.timeOutAfterCommit('create');
      const ip = await alloc.allocateNext(WEB);
      expect([names(), alloc.used()]).toEqual([[ip], 1]);
    } finally {
      alloc.destroy();
    }
  });

  it('each create carries a fieldManager of its own, the same on its resend; the body is upstream’s, unchanged', async () => {
    const s = store();
    d.timeOutAfterCommit('create');
    await s.create(record('10.0.0.1'));
    await s.create(record('10.0.0.2'));
    const [first, resent, other] = d.requestsOf('create');
    expect(first!.query.fieldManager).toMatch(/^ipallocator-[0-9a-f]{32}$/);
    expect(resent!.query.fieldManager).toBe(first!.query.fieldManager);
    expect(other!.query.fieldManager).toMatch(/^ipallocator-[0-9a-f]{32}$/);
    expect(other!.query.fieldManager).not.toBe(first!.query.fieldManager);
    expect(first!.body).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IPAddress',
      metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') },
      spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } }, // omitempty: no group ""
    });
  });

  it("the read-back failing: the outcome is unknown (the object may be its first send's), not a collision", async () => {
    const s = store();
    d.timeOutAfterCommit('create');
    d.failNext('get', 1, 503);
    const err = await outcome(s.create(record('10.0.0.1')));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err).not.toBeInstanceOf(AlreadyExistsError);
    expect((err as Error).message).toContain('reading it back failed');
    expect(d.requestsOf('get').length).toBe(1);
  });

  it('the read-back failing: the error names every answer waited out before the resend, throttling included', async () => {
    const s = store();
    d.failNext('create', 2, 429); // answered before the commit below is taken (Retry-After: 1)
    d.timeOutAfterCommit('create');
    d.failNext('get', 1, 503);
    const err = await outcome(s.create(record('10.0.0.1')));
    expect((err as Error).message).toMatch(
      /^create ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the server throttled it \(429\) 2 times and answered 500 once with a Retry-After, waited out as it asked; sent again, it met an object of that name \(409 AlreadyExists\); the object may have been created, and reading it back failed: HTTP 503 /,
    );
  });

  it('the read-back failing: the error names the status the first send was answered with', async () => {
    const s = store();
    d.timeOutAfterCommit('create');
    d.failNext('get', 1, 503);
    const err = await outcome(s.create(record('10.0.0.1')));
    expect((err as Error).message).toMatch(
      /^create ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the server answered 500 once with a Retry-After, waited out as it asked; sent again, it met an object of that name \(409 AlreadyExists\); the object may have been created, and reading it back failed: HTTP 503 /,
    );
  });
});

describe('another object of that name stays a collision', () => {
  /**
   * The first send answered 500 with Retry-After before anything was stored; while the store
   * waits, `meanwhile` puts an object under the name; the resend meets it (409).
   */
  async function resentOnto(meanwhile: () => Promise<void> | void, given = record('10.0.0.1')): Promise<unknown> {
    const s = store();
    d.failNext('create', 1, 500, 'etcdserver: request timed out', 1);
    const creating = outcome(s.create(given));
    await until(() => d.requestsOf('create').length === 1, 'the first send answered');
    await meanwhile();
    return creating;
  }

  it('another replica’s object for another Service: AlreadyExistsError, its object kept', async () => {
    const err = await resentOnto(async () => void (await store().create(record('10.0.0.1', DB))));
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect((d.objects()[0]!.spec as { parentRef: ParentRef }).parentRef.name).toBe('db');
  });

  it('another replica’s object for the same Service: AlreadyExistsError — each would release it as its own', async () => {
    const err = await resentOnto(async () => void (await store().create(record('10.0.0.1'))));
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect(names()).toEqual(['10.0.0.1']);
  });

  it('through an Allocator: allocate(ip) is ErrAllocated when another replica took it for the same Service', async () => {
    const s = store(true);
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      d.failNext('create', 1, 500, 'etcdserver: request timed out', 1);
      const allocating = outcome(alloc.allocate('10.0.0.5', WEB));
      await until(() => d.requestsOf('create').length === 1, 'the first send answered');
      await store().create(record('10.0.0.5'));
      expect(await allocating).toBeInstanceOf(ErrAllocated);
    } finally {
      alloc.destroy();
    }
  });

  it('an object with the same labels and parentRef but not the request’s mark (no managedFields): AlreadyExistsError', async () => {
    const err = await resentOnto(
      () => void d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } }),
    );
    expect(err).toBeInstanceOf(AlreadyExistsError);
  });

  it('the object its first send made, being deleted: AlreadyExistsError (it is going away)', async () => {
    const s = store();
    d.timeOutAfterCommit('create');
    const creating = outcome(s.create(record('10.0.0.1')));
    await until(() => names().length === 1, 'the first send stored'); // the resend waits 1 s (Retry-After)
    d.modify('10.0.0.1', (o) => void (o.metadata.finalizers = ['example.com/hold']));
    d.remove('10.0.0.1'); // held by the finalizer: marked for deletion
    expect(await creating).toBeInstanceOf(AlreadyExistsError);
  });

  it('close() while the object is read back: ErrDestroyed, as for every call in flight', async () => {
    const s = store();
    d.timeOutAfterCommit('create');
    const held = d.holdReply('get');
    const creating = outcome(s.create(record('10.0.0.1')));
    await held.applied;
    s.close();
    held.release();
    expect(await creating).toBeInstanceOf(ErrDestroyed);
  });

  it('a 409 on a first send is not read back: a collision costs no extra request', async () => {
    d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
    expect(await outcome(store().create(record('10.0.0.1')))).toBeInstanceOf(AlreadyExistsError);
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([1, 0]);
  });
});
