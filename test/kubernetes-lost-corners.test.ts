// The read-back of creates whose answer was lost, in its corners: a resend that meets its own first
// send, a handshake reset, a resend that cannot go out, a createServiceCIDR sent twice. Each test
// states the behaviour docs/kubernetes.md promises.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceCIDR, deleteServiceCIDR, KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { Allocator } from '../adapters/allocator.ts';
import { ErrAllocated } from '../adapters/errors.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { record, WEB } from './k8s/lost-answers.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

describe('a create whose answer was lost, in its corners', () => {
  // docs/kubernetes.md: "A read-back that fails leaves the outcome unknown, and the error says so".
  // Here the first send lands after the read-back found nothing, the second send meets it (409),
  // and reading that back fails: the create says AlreadyExistsError (a collision), allocate(ip)
  // ErrAllocated, and this create's own object is left behind with nothing saying so.
  it('the resend meets its own first send (409) and that read-back fails: the error says the outcome is unknown, not ErrAllocated', async () => {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    const s = new KubernetesStore(kubeConfigFor(d.url), { requestTimeoutMs: 1500 });
    closing.push(() => s.close());
    await s.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store: s });
    closing.push(() => alloc.destroy());
    d.holdWatches();
    d.dropBeforeCommit('create');
    const held = d.holdReply('get');
    const allocating = alloc.allocate('10.0.0.5', WEB).then(
      () => undefined,
      (e: unknown) => e,
    );
    await held.applied; // the read-back found nothing (its 404 held)
    const first = d.requestsOf('create')[0]!;
    // the first send lands now, as kube-apiserver finishing a write whose client had gone
    const late = await fetch(`${d.url}/apis/networking.k8s.io/v1/ipaddresses?fieldManager=${first.query.fieldManager}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
      body: JSON.stringify(first.body),
    });
    expect(late.status).toBe(201);
    d.failNext('get', 1, 503); // the second read-back fails
    held.release();
    const err = await allocating;
    expect(err).not.toBeInstanceOf(ErrAllocated);
    expect(String((err as Error | undefined)?.message)).toContain('reading it back failed');
  });

  // docs/kubernetes.md: "A create that failed before it went out — …, the TLS handshake, … — is
  // not read back: nothing reached the server". A server (a load balancer without backends) that
  // resets the connection on the TLS ClientHello: the create is read back, and the error says "the
  // object may have been created".
  it('the connection reset during the TLS handshake: not read back, and the error does not say the object may have been created', async () => {
    let requests = 0;
    const rst = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => {
        requests++;
        socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => rst.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise<void>((resolve) => rst.close(() => resolve())));
    const port = (rst.address() as net.AddressInfo).port;
    const s = new KubernetesStore(kubeConfigFor(`https://127.0.0.1:${port}`), { start: false, requestTimeoutMs: 2000 });
    closing.push(() => s.close());
    const err = await s.create(record('10.0.0.1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).not.toContain('may have been created');
    expect(requests, 'TLS handshakes begun: the create, and no read-back').toBe(1);
  });

  // The first send stored the object and was answered 500 with a Retry-After; the resend cannot
  // go out (the kubeconfig's certificate-authority file is gone meanwhile). The object may exist:
  // the error must not read as if the create was never sent.
  it('the resend after a waited-out 5xx cannot go out: the error says the object may have been created', async () => {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    const dir = mkdtempSync(join(tmpdir(), 'lost-review-'));
    closing.push(() => rmSync(dir, { recursive: true, force: true }));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, 'not read: the cluster is plain HTTP\n');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: d.url, caFile }],
      users: [{ name: 'tester', token: TEST_TOKEN }],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    const s = new KubernetesStore(kc, { start: false, requestTimeoutMs: 5000 });
    closing.push(() => s.close());
    d.timeOutAfterCommit('create');
    const creating = s.create(record('10.0.0.1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    while (d.requestsOf('create').length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    rmSync(caFile); // during the wait the 500's Retry-After asked for
    const err = await creating;
    expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toContain('answered 500 once with a Retry-After, waited out as it asked;');
    expect((err as Error).message).toContain('was not sent again: cannot read the certificate-authority file');
    expect((err as Error).message).toContain('may have been created');
  });
});

describe('createServiceCIDR whose first send may have stored the object', () => {
  it('its second send fails too: the error still says the first may have stored the object', async () => {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    d.failNext('create', 2, 502); // naming no wait: may have taken effect, so sent once more
    const err = await createServiceCIDR(kubeConfigFor(d.url), 'extra', ['10.97.0.0/24']).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(d.requestsOf('create')).toHaveLength(2);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).code).toBe(502);
    expect((err as Error).message).toContain('the first send may have stored the object');
  });
});

// docs/kubernetes.md: deleteServiceCIDR whose answer was lost (or came as a 500, 502, 503 or 504)
// reads the ServiceCIDR back, as the store's delete does without a uid known.
describe.each(BOTH_CLIENT_NODES)('client-node %s: deleteServiceCIDR whose answer was lost', (_version, Config) => {
  const SC = 'servicecidrs';
  async function doubleWith(finalizers?: string[]): Promise<ApiServerDouble> {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    d.insert({ metadata: { name: 'extra', ...(finalizers && { finalizers }) }, spec: { cidrs: ['10.97.0.0/24'] } }, SC);
    return d;
  }
  const remove = (d: ApiServerDouble) =>
    deleteServiceCIDR(kubeConfigFor(d.url, undefined, { Config }), 'extra', { requestTimeoutMs: 1500 }).then(
      (deleted) => ({ deleted }),
      (e: unknown) => e,
    );

  it('its connection dropped after the server deleted it: read back, gone, resolves true', async () => {
    const d = await doubleWith();
    d.dropAfterCommit('delete');
    expect(await remove(d)).toEqual({ deleted: true });
    expect([d.requestsOf('delete').length, d.requestsOf('get').map((r) => r.path), d.objects(SC)]).toEqual([
      1,
      ['/apis/networking.k8s.io/v1/servicecidrs/extra'],
      [],
    ]);
  });

  it('answered 503 naming no wait after the server marked it for deletion (its finalizer): read back, resolves true', async () => {
    const d = await doubleWith(['networking.k8s.io/service-cidr-finalizer']);
    d.failAfterCommit('delete', 503);
    expect(await remove(d)).toEqual({ deleted: true });
    expect([d.requestsOf('delete').length, d.requestsOf('get').length]).toEqual([1, 1]);
  });

  it('dropped before the server deleted it: read back, still there and not deleted again, the error says so', async () => {
    const d = await doubleWith();
    d.dropBeforeCommit('delete');
    const err = await remove(d);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toMatch(
      /^delete servicecidrs\.networking\.k8s\.io "extra": .+; read back, a ServiceCIDR of that name is there \(uid "[0-9a-f-]+"\), not marked for deletion: .+, so it was not deleted again$/,
    );
    expect([d.requestsOf('delete').length, d.requestsOf('get').length, d.objects(SC).length]).toEqual([1, 1, 1]);
  });

  it('the read-back failing: the error says the ServiceCIDR may have been deleted, and why it was not read', async () => {
    const d = await doubleWith();
    d.dropAfterCommit('delete');
    d.failNext('get', 1, 503);
    const err = await remove(d);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toMatch(
      /^delete servicecidrs\.networking\.k8s\.io "extra": .+; the object may have been deleted, and reading it back failed: HTTP 503 /,
    );
  });

  it('answered 501: the answer stands, nothing read back', async () => {
    const d = await doubleWith();
    d.failNext('delete', 1, 501);
    const err = await remove(d);
    expect((err as KubernetesApiError).code).toBe(501);
    expect([d.requestsOf('get').length, d.objects(SC).length]).toEqual([0, 1]);
  });
});
