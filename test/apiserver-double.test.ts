// The API-server double's own behaviour, over raw HTTP (fetch) so it is checked independently of
// client-node: Status objects, resourceVersion order, label selectors, watch resume and 410.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import { ApiServerDouble, parseSelector, selectorMatches, type KubeObject } from './k8s/apiserver-double.ts';

const V1 = '/apis/networking.k8s.io/v1/ipaddresses';
const V1BETA1 = '/apis/networking.k8s.io/v1beta1/ipaddresses';

function ip(
  name: string,
  labels: Record<string, string> = {},
  parentRef: unknown = { resource: 'services', namespace: 'default', name: 'svc' },
) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name, labels },
    spec: parentRef === null ? {} : { parentRef },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers of every shape
type Json = any;

/** One request with a fresh connection each time (no keep-alive left behind). */
function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ code: number; json: Json; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      base + path,
      { method, agent: false, headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/**
 * A watch stream collecting events; `until(n)` resolves when n lines arrived; `ended` on end.
 * `lines` holds every line as received; `events` those that are JSON.
 */
function openWatch(base: string, path: string) {
  const events: { type: string; object: Json }[] = [];
  const lines: string[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let endResolve!: () => void;
  const ended = new Promise<void>((r) => (endResolve = r));
  let req!: http.ClientRequest;
  const ready = new Promise<void>((resolve, reject) => {
    req = http.get(base + path, { agent: false }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          lines.push(line);
          try {
            events.push(JSON.parse(line));
          } catch {
            // kept in `lines` only: a line the double was told to send as it is
          }
          buf = buf.slice(i + 1);
          for (const w of [...waiters]) {
            if (lines.length < w.n) continue;
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      });
      res.on('end', endResolve);
      res.on('close', endResolve);
      res.on('error', endResolve);
      resolve();
    });
    req.on('error', (e) => {
      endResolve();
      reject(e);
    });
  });
  return {
    events,
    lines,
    ready,
    ended,
    until(n: number) {
      if (lines.length >= n) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
    close() {
      req.destroy();
    },
  };
}

describe('ApiServerDouble', () => {
  let d: ApiServerDouble;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    await d.close();
  });

  it('creates with name, uid, resourceVersion and creationTimestamp, and serves kind/apiVersion', async () => {
    const r = await request(d.url, 'POST', V1, ip('10.0.0.1', { a: 'b' }));
    expect(r.code).toBe(201);
    expect(r.json.kind).toBe('IPAddress');
    expect(r.json.apiVersion).toBe('networking.k8s.io/v1');
    expect(r.json.metadata.name).toBe('10.0.0.1');
    expect(r.json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(r.json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.json.metadata.labels).toEqual({ a: 'b' });
    const g = await request(d.url, 'GET', `${V1BETA1}/10.0.0.1`);
    expect(g.code).toBe(200);
    expect(g.json.apiVersion).toBe('networking.k8s.io/v1beta1');
    expect(g.json.metadata.uid).toBe(r.json.metadata.uid);
  });

  it('records a create’s managedFields under its fieldManager, as kube-apiserver does; insert() records none', async () => {
    const r = await request(d.url, 'POST', `${V1}?fieldManager=ipallocator-1`, ip('10.0.0.1', { a: 'b' }));
    expect(r.json.metadata.managedFields).toEqual([
      {
        manager: 'ipallocator-1',
        operation: 'Update',
        apiVersion: 'networking.k8s.io/v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
          'f:spec': { 'f:parentRef': { '.': {}, 'f:resource': {}, 'f:namespace': {}, 'f:name': {} } },
        },
      },
    ]);
    expect((await request(d.url, 'GET', `${V1}/10.0.0.1`)).json.metadata.managedFields).toEqual(r.json.metadata.managedFields);
    const long = await request(d.url, 'POST', `${V1}?fieldManager=${'m'.repeat(129)}`, ip('10.0.0.2'));
    expect([long.code, long.json.reason]).toEqual([422, 'Invalid']);
    d.insert(ip('10.0.0.3') as KubeObject);
    expect((await request(d.url, 'GET', `${V1}/10.0.0.3`)).json.metadata.managedFields).toBeUndefined();
  });

  it('answers a duplicate create with the 409 AlreadyExists Status', async () => {
    await request(d.url, 'POST', V1, ip('10.0.0.1'));
    const r = await request(d.url, 'POST', V1, ip('10.0.0.1'));
    expect(r.code).toBe(409);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'ipaddresses.networking.k8s.io "10.0.0.1" already exists',
      reason: 'AlreadyExists',
      details: { name: '10.0.0.1', group: 'networking.k8s.io', kind: 'ipaddresses' },
      code: 409,
    });
  });

  it('rejects a missing parentRef with 422 Invalid, unless switched off', async () => {
    const r = await request(d.url, 'POST', V1, ip('10.0.0.1', {}, null));
    expect(r.code).toBe(422);
    expect(r.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      message: 'IPAddress.networking.k8s.io "10.0.0.1" is invalid: spec.parentRef: Required value',
      details: {
        name: '10.0.0.1',
        group: 'networking.k8s.io',
        kind: 'IPAddress',
        causes: [{ reason: 'FieldValueRequired', field: 'spec.parentRef' }],
      },
    });
    d.requireParentRef = false;
    expect((await request(d.url, 'POST', V1, ip('10.0.0.1', {}, null))).code).toBe(201);
  });

  it('answers GET and DELETE of a missing name with the 404 NotFound Status', async () => {
    const notFound = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'ipaddresses.networking.k8s.io "10.0.0.9" not found',
      reason: 'NotFound',
      details: { name: '10.0.0.9', group: 'networking.k8s.io', kind: 'ipaddresses' },
      code: 404,
    };
    const g = await request(d.url, 'GET', `${V1}/10.0.0.9`);
    expect([g.code, g.json]).toEqual([404, notFound]);
    const del = await request(d.url, 'DELETE', `${V1}/10.0.0.9`);
    expect([del.code, del.json]).toEqual([404, notFound]);
  });

  it('deletes with a 200 Status Success carrying name, group, resource and uid', async () => {
    const c = await request(d.url, 'POST', V1, ip('2001:db8::1'));
    const r = await request(d.url, 'DELETE', `${V1}/${encodeURIComponent('2001:db8::1')}`);
    expect(r.code).toBe(200);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: '2001:db8::1', group: 'networking.k8s.io', kind: 'ipaddresses', uid: c.json.metadata.uid },
    });
    expect(d.objects()).toEqual([]);
  });

  it('honours DeleteOptions preconditions (uid, resourceVersion): a mismatch is 409 Conflict and nothing is deleted', async () => {
    const c = await request(d.url, 'POST', V1, ip('10.0.0.2'));
    const { uid, resourceVersion } = c.json.metadata;
    const wrongUid = await request(d.url, 'DELETE', `${V1}/10.0.0.2`, { preconditions: { uid: 'other' } });
    expect([wrongUid.code, wrongUid.json.reason, wrongUid.json.message]).toEqual([
      409,
      'Conflict',
      `Operation cannot be fulfilled on ipaddresses.networking.k8s.io "10.0.0.2": Precondition failed: UID in precondition: other, UID in object meta: ${uid}`,
    ]);
    const wrongRv = await request(d.url, 'DELETE', `${V1}/10.0.0.2`, { preconditions: { resourceVersion: 'stale' } });
    expect([wrongRv.code, wrongRv.json.reason]).toEqual([409, 'Conflict']);
    expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.2']);
    const ok = await request(d.url, 'DELETE', `${V1}/10.0.0.2`, { preconditions: { uid, resourceVersion } });
    expect(ok.code).toBe(200);
    expect(d.objects()).toEqual([]);
  });

  it('answers a delete of an object a finalizer holds with the object, marked for deletion, and deletes it when the last finalizer goes', async () => {
    const c = await request(d.url, 'POST', V1, {
      ...ip('10.0.0.1'),
      metadata: { ...ip('10.0.0.1').metadata, finalizers: ['example.com/hold'] },
    });
    expect(c.code).toBe(201);
    const r = await request(d.url, 'DELETE', `${V1}/10.0.0.1`);
    expect(r.code).toBe(200);
    expect(r.json).toMatchObject({ kind: 'IPAddress', metadata: { name: '10.0.0.1', uid: c.json.metadata.uid } });
    expect(typeof r.json.metadata.deletionTimestamp).toBe('string');
    expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']);
    expect(d.modify('10.0.0.1', (o) => (o.metadata.finalizers = []))).toBe(true);
    expect(d.objects()).toEqual([]);
  });

  it('takes a strictly increasing resourceVersion on every write, shared by all objects', async () => {
    const seen: number[] = [];
    for (let i = 1; i <= 5; i++) seen.push(Number((await request(d.url, 'POST', V1, ip(`10.0.0.${i}`))).json.metadata.resourceVersion));
    await request(d.url, 'DELETE', `${V1}/10.0.0.1`);
    seen.push(Number(d.resourceVersion));
    seen.push(Number((await request(d.url, 'POST', V1, ip('10.0.0.1'))).json.metadata.resourceVersion));
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
    const list = await request(d.url, 'GET', V1);
    expect(list.json.metadata.resourceVersion).toBe(d.resourceVersion);
  });

  it('lists with labelSelector (=, ==, !=, exists, !exists, in, notin), sorted, without per-item kind', async () => {
    await request(d.url, 'POST', V1, ip('10.0.0.3', { fam: 'v4', owner: 'x' }));
    await request(d.url, 'POST', V1, ip('10.0.0.1', { fam: 'v4', owner: 'y' }));
    await request(d.url, 'POST', V1, ip('2001:db8::1', { fam: 'v6' }));
    const names = async (sel?: string) => {
      const r = await request(d.url, 'GET', sel === undefined ? V1 : `${V1}?labelSelector=${encodeURIComponent(sel)}`);
      expect(r.code).toBe(200);
      expect(r.json.kind).toBe('IPAddressList');
      expect(r.json.apiVersion).toBe('networking.k8s.io/v1');
      for (const it of r.json.items) expect(it.kind).toBeUndefined();
      return r.json.items.map((o: KubeObject) => o.metadata.name);
    };
    expect(await names()).toEqual(['10.0.0.1', '10.0.0.3', '2001:db8::1']);
    expect(await names('fam=v4')).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(await names('fam==v4,owner=x')).toEqual(['10.0.0.3']);
    expect(await names('fam!=v4')).toEqual(['2001:db8::1']);
    expect(await names('owner')).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(await names('!owner')).toEqual(['2001:db8::1']);
    expect(await names('owner in (y,z)')).toEqual(['10.0.0.1']);
    expect(await names('owner notin (y)')).toEqual(['10.0.0.3', '2001:db8::1']);
    expect((await request(d.url, 'GET', `${V1}?labelSelector=${encodeURIComponent('a=(b')}`)).code).toBe(400);
  });

  it('pages a list with limit/continue over one snapshot; a token from before compact() gets 410', async () => {
    for (let i = 1; i <= 5; i++) await request(d.url, 'POST', V1, ip(`10.0.0.${i}`));
    const p1 = await request(d.url, 'GET', `${V1}?limit=2`);
    expect(p1.json.items.map((o: KubeObject) => o.metadata.name)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(p1.json.metadata.remainingItemCount).toBe(3);
    await request(d.url, 'DELETE', `${V1}/10.0.0.3`); // not visible in the snapshot
    const p2 = await request(d.url, 'GET', `${V1}?limit=2&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    expect(p2.json.items.map((o: KubeObject) => o.metadata.name)).toEqual(['10.0.0.3', '10.0.0.4']);
    expect(p2.json.metadata.resourceVersion).toBe(p1.json.metadata.resourceVersion);
    d.compact();
    const p3 = await request(d.url, 'GET', `${V1}?limit=2&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
    expect(p3.code).toBe(410);
    expect(p3.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
  });

  it('watch from a resourceVersion replays later events in order, then streams live ones', async () => {
    const a = await request(d.url, 'POST', V1, ip('10.0.0.1'));
    const from = a.json.metadata.resourceVersion;
    await request(d.url, 'POST', V1, ip('10.0.0.2'));
    await request(d.url, 'DELETE', `${V1}/10.0.0.1`);
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=${from}`);
    await w.ready;
    await w.until(2);
    await request(d.url, 'POST', V1, ip('10.0.0.3'));
    await w.until(3);
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', '10.0.0.2'],
      ['DELETED', '10.0.0.1'],
      ['ADDED', '10.0.0.3'],
    ]);
    for (const e of w.events) expect(e.object).toMatchObject({ kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1' });
    const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    w.close();
    await w.ended;
  });

  it('watch without a resourceVersion starts with synthetic ADDED events for the current state', async () => {
    await request(d.url, 'POST', V1, ip('10.0.0.2', { f: 'x' }));
    await request(d.url, 'POST', V1, ip('10.0.0.1', { f: 'y' }));
    const w = openWatch(d.url, `${V1}?watch=true&labelSelector=f%3Dx`);
    await w.ready;
    await w.until(1);
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', '10.0.0.2']]);
    w.close();
    await w.ended;
  });

  it('filters watch events by label selector, turning label changes into ADDED/DELETED', async () => {
    const c = await request(d.url, 'POST', V1, ip('10.0.0.1', { f: 'x' }));
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=${c.json.metadata.resourceVersion}&labelSelector=f%3Dx`);
    await w.ready;
    await request(d.url, 'POST', V1, ip('10.0.0.2', { f: 'y' })); // filtered out
    d.modify('10.0.0.1', (o) => (o.metadata.labels = { f: 'y' })); // stops matching → DELETED
    d.modify('10.0.0.2', (o) => (o.metadata.labels = { f: 'x' })); // starts matching → ADDED
    d.modify('10.0.0.2', (o) => (o.metadata.labels = { f: 'x', g: '1' })); // still matching → MODIFIED
    await w.until(3);
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['DELETED', '10.0.0.1'],
      ['ADDED', '10.0.0.2'],
      ['MODIFIED', '10.0.0.2'],
    ]);
    w.close();
    await w.ended;
  });

  it('answers a watch from a compacted resourceVersion with HTTP 200 and one ERROR 410 Expired event', async () => {
    await request(d.url, 'POST', V1, ip('10.0.0.1'));
    await request(d.url, 'POST', V1, ip('10.0.0.2'));
    d.compact();
    const floor = d.resourceVersion;
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w.ready;
    await w.ended;
    expect(w.events).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: 1 (${floor})`,
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
    // From the compaction point on, nothing is missed: no 410.
    const ok = openWatch(d.url, `${V1}?watch=true&resourceVersion=${floor}`);
    await ok.ready;
    await request(d.url, 'POST', V1, ip('10.0.0.3'));
    await ok.until(1);
    expect(ok.events[0]!.type).toBe('ADDED');
    ok.close();
    await ok.ended;
  });

  it('expires resourceVersions that fell out of the history window', async () => {
    const small = await ApiServerDouble.start({ historyLimit: 2 });
    try {
      for (let i = 1; i <= 4; i++) await request(small.url, 'POST', V1, ip(`10.0.0.${i}`));
      const w = openWatch(small.url, `${V1}?watch=true&resourceVersion=1`);
      await w.ready;
      await w.ended;
      expect(w.events[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    } finally {
      await small.close();
    }
  });

  it('sends BOOKMARK events only to watches that allow them', async () => {
    const plain = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    const bm = openWatch(d.url, `${V1}?watch=true&resourceVersion=1&allowWatchBookmarks=true`);
    await Promise.all([plain.ready, bm.ready]);
    d.bookmark();
    await request(d.url, 'POST', V1, ip('10.0.0.1'));
    await bm.until(2);
    await plain.until(1);
    expect(bm.events[0]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '1' } },
    });
    expect(plain.events.map((e) => e.type)).toEqual(['ADDED']);
    plain.close();
    bm.close();
    await Promise.all([plain.ended, bm.ended]);
  });

  it('fails the next N requests of a verb with a 5xx Status, then recovers', async () => {
    d.failNext('create', 2, 503, 'etcd is down');
    const a = await request(d.url, 'POST', V1, ip('10.0.0.1'));
    expect([a.code, a.json]).toEqual([
      503,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'etcd is down',
        reason: 'ServiceUnavailable',
        code: 503,
      },
    ]);
    expect((await request(d.url, 'GET', V1)).code).toBe(200); // other verbs unaffected
    expect((await request(d.url, 'POST', V1, ip('10.0.0.1'))).code).toBe(503);
    expect((await request(d.url, 'POST', V1, ip('10.0.0.1'))).code).toBe(201);
    d.failNext('get', 1, 500);
    const g = await request(d.url, 'GET', `${V1}/10.0.0.1`);
    expect(g.json).toMatchObject({ reason: 'InternalError', code: 500, message: 'Internal error occurred: injected fault' });
    expect([a.headers['retry-after'], g.headers['retry-after']]).toEqual([undefined, undefined]); // no wait named
  });

  it('a Status naming a wait (details.retryAfterSeconds) carries it as a Retry-After header, as kube-apiserver writes errors', async () => {
    for (const code of [429, 504]) {
      d.failNext('get', 1, code);
      const r = await request(d.url, 'GET', `${V1}/10.0.0.1`);
      expect([r.code, (r.json as { details?: unknown }).details, r.headers['retry-after']]).toEqual([code, { retryAfterSeconds: 1 }, '1']);
    }
  });

  it('holds watch events until released, and ends or drops open watches on demand', async () => {
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w.ready;
    d.holdWatches();
    await request(d.url, 'POST', V1, ip('10.0.0.1'));
    await request(d.url, 'POST', V1, ip('10.0.0.2'));
    expect(w.events).toEqual([]);
    d.releaseWatches();
    await w.until(2);
    expect(w.events.map((e) => e.object.metadata.name)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(d.openWatches()).toBe(1);
    d.closeWatches();
    await w.ended;
    expect(d.openWatches()).toBe(0);

    const w2 = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w2.ready;
    await w2.until(2);
    d.dropWatches();
    await w2.ended;
    expect(d.openWatches()).toBe(0);
  });

  it('writes text to open watches as given (sendWatchText), and cuts events in half while storing the change (cutWatchEvents)', async () => {
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w.ready;
    d.sendWatchText('<html>');
    d.sendWatchText('</html>\n');
    d.cutWatchEvents(1);
    await request(d.url, 'POST', V1, ip('10.0.0.1'));
    await request(d.url, 'POST', V1, ip('10.0.0.2'));
    await w.until(3);
    expect(w.lines[0]).toBe('<html></html>');
    const stored = (await request(d.url, 'GET', `${V1}/10.0.0.1`)).json;
    const whole = JSON.stringify({ type: 'ADDED', object: stored });
    expect(w.lines[1]).toBe(whole.slice(0, Math.floor(whole.length / 2)));
    expect(w.events.map((e) => e.object.metadata.name)).toEqual(['10.0.0.2']); // only the next event was cut
    expect((await request(d.url, 'GET', V1)).json.items.map((o: Json) => o.metadata.name)).toEqual(['10.0.0.1', '10.0.0.2']);
    w.close();
  });

  it('records each request’s target and headers as sent', async () => {
    await request(d.url, 'GET', `${V1}?limit=5&labelSelector=a%3Db`);
    const [r] = d.requestsOf('list');
    expect(r!.target).toBe(`${V1}?limit=5&labelSelector=a%3Db`);
    expect(r!.headers).toContainEqual(['host', d.url.slice('http://'.length)]);
  });

  it('holds a reply while the request takes effect and the watch moves on', async () => {
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w.ready;
    const heldCreate = d.holdReply('create');
    let created: { code: number; json: Json } | undefined;
    const creating = request(d.url, 'POST', V1, ip('10.0.0.1')).then((r) => (created = r));
    await heldCreate.applied;
    expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']); // stored…
    await w.until(1); // …and on the watch, while the reply waits
    d.remove('10.0.0.1'); // another client deletes it
    await w.until(2);
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(created).toBeUndefined();
    heldCreate.release();
    await creating;
    expect(created!.code).toBe(201);
    expect(created!.json.metadata.resourceVersion).toBe(w.events[0]!.object.metadata.resourceVersion);

    const heldDelete = d.holdReply('delete');
    await request(d.url, 'POST', V1, ip('10.0.0.2'));
    const deleting = request(d.url, 'DELETE', `${V1}/10.0.0.2`);
    await heldDelete.applied;
    expect(d.objects()).toEqual([]);
    heldDelete.release();
    expect((await deleting).json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await request(d.url, 'POST', V1, ip('10.0.0.3'))).code).toBe(201); // one hold, one reply
    w.close();
    await w.ended;
  });

  it('delivers events in order under watch lag', async () => {
    const w = openWatch(d.url, `${V1}?watch=true&resourceVersion=1`);
    await w.ready;
    d.setWatchLag(20);
    for (let i = 1; i <= 5; i++) await request(d.url, 'POST', V1, ip(`10.0.0.${i}`));
    await w.until(5);
    expect(w.events.map((e) => e.object.metadata.name)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']);
    w.close();
    await w.ended;
  });

  it('answers unknown paths with 404 and unsupported verbs with 405, and records requests', async () => {
    const r = await request(d.url, 'GET', '/apis/networking.k8s.io/v2/ipaddresses');
    expect(r.code).toBe(404);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' });
    expect((await request(d.url, 'PUT', `${V1}/10.0.0.1`, ip('10.0.0.1'))).code).toBe(405);
    await request(d.url, 'POST', V1, ip('10.0.0.1', { x: 'y' }));
    expect(d.requestsOf('create').at(-1)!.body).toEqual(ip('10.0.0.1', { x: 'y' }));
  });

  it('serves servicecidrs minimally', async () => {
    const path = '/apis/networking.k8s.io/v1/servicecidrs';
    const c = await request(d.url, 'POST', path, { metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/12'] } });
    expect(c.code).toBe(201);
    expect(c.json.kind).toBe('ServiceCIDR');
    expect((await request(d.url, 'GET', `${path}/kubernetes`)).json.spec).toEqual({ cidrs: ['10.96.0.0/12'] });
    expect((await request(d.url, 'GET', path)).json.kind).toBe('ServiceCIDRList');
  });

  it('parses selectors like apimachinery', () => {
    expect(selectorMatches(parseSelector('a=b,c!=d'), { a: 'b' })).toBe(true);
    expect(selectorMatches(parseSelector('a=b,c!=d'), { a: 'b', c: 'd' })).toBe(false);
    expect(selectorMatches(parseSelector(''), {})).toBe(true);
    expect(() => parseSelector('a=(b')).toThrow();
  });
});
