// A delete that went out and whose answer was lost — its connection dropped, its deadline passed,
// or a 5xx naming no wait (500, 502, 503, 504) came back after the server may have done it — is
// settled by reading the object back (GET by name): gone is the success; the object the delete
// meant (the uid the cache knew) still there is deleted again, conditionally on that uid; another
// object of that name (another uid) means ours is gone, and the other's is left alone. Without a
// uid known (the cache does not hold the name) an object there is not deleted again: the failure
// stands, saying so. A read-back that fails leaves the outcome unknown, and the error says so.
// Real HTTP against the API-server double, with client-node 2.x and 1.x; under Deno an undici
// client may see a dropped connection only as the deadline passing, which takes the same path.
import { describe, expect, it } from 'vitest';
import { KubernetesApiError, type KubernetesStore } from '../adapters/kubernetes/index.ts';
import { Allocator } from '../adapters/allocator.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { BOTH_CLIENT_NODES } from './k8s/kubeconfig.ts';
import { until } from './k8s/helpers.ts';
import { d, DB, outcome, record, REQUEST_TIMEOUT_MS, startDoubleForEachTest, storeOnDouble, WEB } from './k8s/lost-answers.ts';

startDoubleForEachTest();

const uids = () => d.objects().map((o) => o.metadata.uid);
const deletes = () => d.requestsOf('delete').map((r) => (r.body as { preconditions?: unknown } | undefined)?.preconditions ?? null);

describe.each(BOTH_CLIENT_NODES)('client-node %s: a delete whose answer was lost', (_version, Config) => {
  /** A store on the double (with its cache when `start`), closed after the test. */
  function store(start = true, requestTimeoutMs = REQUEST_TIMEOUT_MS): KubernetesStore {
    return storeOnDouble({ start, requestTimeoutMs, Config });
  }

  /** A started, synced store holding `name` in its cache (created through it), and that object's uid. */
  async function holding(name: string, requestTimeoutMs = REQUEST_TIMEOUT_MS): Promise<{ s: KubernetesStore; uid: string }> {
    const s = store(true, requestTimeoutMs);
    await s.waitForSync();
    const created = await s.create(record(name));
    return { s, uid: created.uid! };
  }

  it('its connection dropped after the server deleted it: resolves, read back (gone), and the cache no longer holds it', async () => {
    const { s } = await holding('10.0.0.1');
    d.holdWatches(); // the cache learns of it from the delete, not the watch
    d.dropAfterCommit('delete');
    await s.delete('10.0.0.1');
    expect([deletes(), d.requestsOf('get').map((r) => r.path), uids()]).toEqual([
      [null],
      ['/apis/networking.k8s.io/v1/ipaddresses/10.0.0.1'],
      [],
    ]);
    expect(s.cache.get('10.0.0.1')).toBeUndefined();
  });

  it('its deadline passed while it waited out a ServerTimeout answered after the delete: resolves, read back', async () => {
    const { s } = await holding('10.0.0.1', 300);
    d.timeOutAfterCommit('delete'); // Retry-After: 1, longer than the deadline
    await s.delete('10.0.0.1');
    expect([deletes().length, d.requestsOf('get').length, uids()]).toEqual([1, 1, []]);
  });

  it.each([500, 502, 503, 504])('answered %i naming no wait after the server deleted it: resolves, read back', async (code) => {
    const { s } = await holding('10.0.0.1');
    d.failAfterCommit('delete', code);
    await s.delete('10.0.0.1');
    expect([deletes().length, d.requestsOf('get').length, uids()]).toEqual([1, 1, []]);
  });

  it('answered 501: the answer stands, nothing read back', async () => {
    const { s } = await holding('10.0.0.1');
    d.failNext('delete', 1, 501);
    const err = await outcome(s.delete('10.0.0.1'));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).code).toBe(501);
    expect([deletes().length, d.requestsOf('get').length, uids().length]).toEqual([1, 0, 1]);
  });

  it('dropped before the server deleted it: the same object read back, deleted again on its uid, and resolves', async () => {
    const { s, uid } = await holding('10.0.0.1');
    d.dropBeforeCommit('delete');
    await s.delete('10.0.0.1');
    expect([deletes(), d.requestsOf('get').length, uids()]).toEqual([[null, { uid }], 1, []]);
  });

  it('a proxy’s 502 with nothing deleted: the same object read back, deleted again on its uid, and resolves', async () => {
    const { s, uid } = await holding('10.0.0.1');
    d.failNext('delete', 1, 502);
    await s.delete('10.0.0.1');
    expect([deletes(), uids()]).toEqual([[null, { uid }], []]);
  });

  it('another object of that name there when read back: ours is gone, resolves, and the other is not deleted', async () => {
    const { s, uid } = await holding('10.0.0.1');
    d.dropAfterCommit('delete');
    d.setLatency(300, 'get'); // time to put the other's object there before the read
    const deleting = s.delete('10.0.0.1');
    await Promise.race([until(() => d.requestsOf('get').length === 1, 'the read-back'), deleting.catch(() => {})]);
    const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: DB } });
    await deleting;
    const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
    expect(otherUid).not.toBe(uid);
    expect([deletes(), uids()]).toEqual([[null], [otherUid]]);
  });

  it('sent again after a ServerTimeout, its uid precondition failing (409) as another object took the name: resolves, read back, and the other is not deleted', async () => {
    const { s, uid } = await holding('10.0.0.1', 5000);
    d.timeOutAfterCommit('delete'); // deleted, then answered 500 with Retry-After: 1
    const deleting = s.delete('10.0.0.1');
    await Promise.race([until(() => uids().length === 0, 'the first send to delete it'), deleting.catch(() => {})]);
    const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: DB } });
    const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
    expect(await outcome(deleting)).toEqual({ resolved: undefined });
    expect([deletes(), d.requestsOf('get').length, uids()]).toEqual([[null, { uid }], 1, [otherUid]]);
  });

  it('deleted again on its uid after a read-back found it, that send met by a 409 as another object took the name meanwhile: read back once more, resolves, and the other is not deleted', async () => {
    const { s, uid } = await holding('10.0.0.1');
    d.dropBeforeCommit('delete');
    const read = d.holdReply('get'); // the read-back finds the object meant; its answer waits
    const deleting = s.delete('10.0.0.1');
    await Promise.race([read.applied, deleting.catch(() => {})]);
    d.remove('10.0.0.1');
    const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: DB } });
    const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
    read.release();
    expect(await outcome(deleting)).toEqual({ resolved: undefined });
    expect([deletes(), d.requestsOf('get').length, uids()]).toEqual([[null, { uid }], 2, [otherUid]]);
  });

  // With readYourWrites off the cache learns of this store's own writes from the watch only, and
  // may still hold an older uid for a name whose object this store has made again since: another
  // uid there may be this store's own, so the delete fails, saying it is there and not deleted.
  describe('with readYourWrites off, another object of that name (another uid) there when read back', () => {
    /** A started, synced store without read-your-writes holding `name` in its cache, and that object's uid. */
    async function holdingUnread(name: string, requestTimeoutMs: number): Promise<{ s: KubernetesStore; uid: string }> {
      const s = storeOnDouble({ start: true, requestTimeoutMs, readYourWrites: false, Config });
      await s.waitForSync();
      const created = await s.create(record(name));
      await until(() => s.cache.get(name) !== undefined, 'the cache to hold it');
      return { s, uid: created.uid! };
    }

    const rejected = (uid: string, otherUid: string) =>
      `read back, an object of that name is there with another uid (${JSON.stringify(otherUid)}) than the one the cache holds ` +
      `(${JSON.stringify(uid)}); it was not deleted: with readYourWrites off the cache may not yet hold this store's own create of it`;

    it('its answer lost: rejects saying so, and the other is not deleted', async () => {
      const { s, uid } = await holdingUnread('10.0.0.1', REQUEST_TIMEOUT_MS);
      d.holdWatches();
      d.dropAfterCommit('delete');
      d.setLatency(300, 'get');
      const deleting = s.delete('10.0.0.1');
      await Promise.race([until(() => d.requestsOf('get').length === 1, 'the read-back'), deleting.catch(() => {})]);
      const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
      const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
      const err = await outcome(deleting);
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as Error).message).toMatch(/^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": /);
      expect((err as Error).message.endsWith(`; ${rejected(uid, otherUid)}`)).toBe(true);
      expect([deletes(), uids()]).toEqual([[null], [otherUid]]);
    });

    it('sent again after a ServerTimeout, met by a 409: rejects saying so, and the other is not deleted', async () => {
      const { s, uid } = await holdingUnread('10.0.0.1', 5000);
      d.holdWatches();
      d.timeOutAfterCommit('delete');
      const deleting = s.delete('10.0.0.1');
      await Promise.race([until(() => uids().length === 0, 'the first send to delete it'), deleting.catch(() => {})]);
      const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
      const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
      const err = await outcome(deleting);
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as Error).message).toBe(
        'delete ipaddresses.networking.k8s.io "10.0.0.1": the server answered 500 once with a Retry-After, waited out as it asked; ' +
          `sent again naming the uid it meant, it met another object of that name (409 Conflict); ${rejected(uid, otherUid)}`,
      );
      expect([deletes(), uids()]).toEqual([[null, { uid }], [otherUid]]);
    });

    it('deleted again on its uid after a read-back found it, met by a 409: read back once more, rejects saying so, and the other is not deleted', async () => {
      const { s, uid } = await holdingUnread('10.0.0.1', REQUEST_TIMEOUT_MS);
      d.holdWatches();
      d.dropBeforeCommit('delete');
      const read = d.holdReply('get');
      const deleting = s.delete('10.0.0.1');
      await Promise.race([read.applied, deleting.catch(() => {})]);
      d.remove('10.0.0.1');
      const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
      const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
      read.release();
      const err = await outcome(deleting);
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as KubernetesApiError).code).toBe(409);
      expect((err as Error).message).toMatch(
        /^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": .+; read back, the object it meant was still there; sent again naming the uid it meant, it met another object of that name \(409 Conflict\); /,
      );
      expect((err as Error).message.endsWith(`; ${rejected(uid, otherUid)}`)).toBe(true);
      expect([deletes(), d.requestsOf('get').length, uids()]).toEqual([[null, { uid }], 2, [otherUid]]);
    });
    it('deleted again on its uid after a read-back found it, that send waiting out a 500 before its 409: the error says both', async () => {
      const { s, uid } = await holdingUnread('10.0.0.1', REQUEST_TIMEOUT_MS);
      d.holdWatches();
      d.dropBeforeCommit('delete');
      const read = d.holdReply('get');
      const deleting = s.delete('10.0.0.1');
      await Promise.race([read.applied, deleting.catch(() => {})]);
      d.remove('10.0.0.1');
      const other = d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
      const otherUid = (other as { metadata: { uid: string } }).metadata.uid;
      d.failNext('delete', 1, 500, undefined, 1);
      read.release();
      const err = await outcome(deleting);
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as Error).message).toMatch(
        /^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": .+; read back, the object it meant was still there; sent again, the server answered 500 once with a Retry-After, waited out as it asked; sent again naming the uid it meant, it met another object of that name \(409 Conflict\); /,
      );
      expect(uids()).toEqual([otherUid]);
      expect(deletes()).toContainEqual({ uid });
    });
  });

  it('sent again after a ServerTimeout and met by a 409, the read-back failing: the error names the 500 the first send met and says the outcome is unknown', async () => {
    const { s } = await holding('10.0.0.1', 5000);
    d.timeOutAfterCommit('delete');
    d.failNext('get', 1, 503);
    const deleting = s.delete('10.0.0.1');
    await Promise.race([until(() => uids().length === 0, 'the first send to delete it'), deleting.catch(() => {})]);
    d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: DB } });
    const err = await outcome(deleting);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toMatch(
      /^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the server answered 500 once with a Retry-After, waited out as it asked; sent again naming the uid it meant, it met another object of that name \(409 Conflict\); the object may have been deleted, and reading it back failed: HTTP 503 /,
    );
    expect(uids().length).toBe(1);
  });

  it('an object a finalizer holds, marked for deletion when read back: resolves, and it stays in the cache until the watch reports it gone', async () => {
    const s = store();
    await s.waitForSync();
    d.insert({
      metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4'), finalizers: ['example.com/hold'] },
      spec: { parentRef: WEB },
    });
    await until(() => s.cache.get('10.0.0.1') !== undefined, 'the cache to hold it');
    d.holdWatches();
    d.dropAfterCommit('delete');
    await s.delete('10.0.0.1');
    expect([deletes().length, d.requestsOf('get').length]).toEqual([1, 1]);
    expect(d.objects()[0]!.metadata.deletionTimestamp).toBeDefined();
    expect(s.cache.get('10.0.0.1')).toBeDefined();
  });

  it('without the uid known (no cache), gone when read back: resolves', async () => {
    d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
    d.dropAfterCommit('delete');
    await store(false).delete('10.0.0.1');
    expect([deletes().length, d.requestsOf('get').length, uids()]).toEqual([1, 1, []]);
  });

  it('without the uid known, an object there when read back: not deleted again, and the error says it is still there', async () => {
    d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
    d.dropBeforeCommit('delete');
    const err = await outcome(store(false).delete('10.0.0.1'));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toMatch(
      /^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": .+; read back, an object of that name is there \(uid "[0-9a-f-]+"\); .+ not deleted again$/,
    );
    expect([deletes().length, d.requestsOf('get').length, uids().length]).toEqual([1, 1, 1]);
  });

  it('without the uid known, an object marked for deletion when read back: the error says it is being deleted, not that it was left', async () => {
    d.insert({
      metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4'), finalizers: ['example.com/hold'] },
      spec: { parentRef: WEB },
    });
    d.dropAfterCommit('delete');
    const err = await outcome(store(false).delete('10.0.0.1'));
    expect(err).toBeInstanceOf(KubernetesApiError);
    const message = (err as KubernetesApiError).message;
    expect(message).toContain('; read back, an object of that name is there (uid "');
    expect(message).toMatch(/, marked for deletion\); .+ cannot be told \(the cache does not hold the name\)$/);
    expect(message).not.toContain('not deleted again');
  });

  it('the read-back failing: a KubernetesApiError that says the object may have been deleted, and why it was not read', async () => {
    const { s } = await holding('10.0.0.1');
    d.dropAfterCommit('delete');
    d.failNext('get', 1, 503);
    const err = await outcome(s.delete('10.0.0.1'));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toMatch(
      /^delete ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": .+; the object may have been deleted, and reading it back failed: HTTP 503 /,
    );
  });

  it('release through an Allocator frees the address at once and tells onDeleteError nothing, where it was told the network error', async () => {
    const s = store();
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    try {
      await alloc.allocate('10.0.0.5', WEB);
      d.holdWatches(); // the watch would free it later: the release itself must
      d.dropAfterCommit('delete');
      const told: unknown[] = [];
      await alloc.release('10.0.0.5', (e) => told.push(e));
      expect([told, alloc.used(), uids()]).toEqual([[], 0, []]);
    } finally {
      alloc.destroy();
    }
  });
});
