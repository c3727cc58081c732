// The Kubernetes store where @kubernetes/client-node is 1.x, installed alone: ipallocator's own
// import of client-node is 1.x here (mocked to the client-node-1 package), as in an application
// that installed @kubernetes/client-node@1.4. Elsewhere the tests give a 1.x KubeConfig to code
// that imported the 2.x installed beside it, which then sends with 1.x's own HTTP library; a
// 1.x-only install sends each request with answer-body.ts's streamingHttpLibrary instead (1.x's
// node-fetch, the body read as a stream), the path tested here.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_ANSWER_BODY_BYTES } from '../adapters/kubernetes/answer-body.ts';
import { KubernetesApiError } from '../adapters/kubernetes/errors.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { addIPAddress } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { until } from './k8s/helpers.ts';
import { SilentServer } from './k8s/silent-server.ts';
import { kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';

vi.mock('@kubernetes/client-node', () => import('client-node-1'));

const MiB = 1024 * 1024;
const SVC = { group: '', resource: 'services', namespace: 'default', name: 'web' };

describe('with client-node 1.x installed alone', () => {
  let d: ApiServerDouble;
  const opened: { close(): void }[] = [];
  beforeEach(async () => {
    d = await ApiServerDouble.start({ tls: true }); // over https://: credentials are sent
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) o.close();
    await d.close();
  });

  function store(): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(d.url), { start: false, requestTimeoutMs: 60_000 });
    opened.push(s);
    return s;
  }

  it('is what the store imports: a KubeConfig that makes an http.Agent, not an undici dispatcher', () => {
    const kc = new KubeConfig() as unknown as Record<string, unknown>;
    expect([typeof kc.createAgent, typeof kc.createDispatcher]).toEqual(['function', 'undefined']);
  });

  it('creates, gets and deletes, each request with its method, body and credentials', async () => {
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
    const s = store();
    await expect(s.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    await s.create({ name: '10.96.0.11', parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' } });
    await expect(s.get('10.96.0.11')).resolves.toMatchObject({ name: '10.96.0.11' });
    await s.delete('10.96.0.11');
    await expect(s.get('10.96.0.11')).resolves.toBeUndefined();
    expect(d.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'DELETE', 'GET']);
    expect(d.requests.every((r) => r.authorization === `Bearer ${TEST_TOKEN}`)).toBe(true);
  });

  it('lists and watches: the cache syncs, and follows a change made by another client', async () => {
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
    const s = new KubernetesStore(kubeConfigFor(d.url), { requestTimeoutMs: 10_000 });
    opened.push(s);
    await s.waitForSync({ timeoutMs: 10_000 });
    expect(s.cache.get('10.96.0.10')).toMatchObject({ name: '10.96.0.10' });
    addIPAddress(d, '10.96.0.11', { namespace: 'default', name: 'web' });
    await until(() => s.cache.get('10.96.0.11') !== undefined, 'the watch event');
  });

  // Regression: untested; the 1.x requests of the other tests were read whole by 1.x's own HTTP library
  it('an answer whose body never ends: rejects naming the request and the cap, read no further', async () => {
    d.proxyAnswerNext('get', 'ipaddresses', '{"kind":"IPAddress","apiVersion":"networking.k8s.io/v1","metadata":{"name":"10.0.0.1"', {
      contentType: 'application/json',
      endless: true,
    });
    const err = await store()
      .get('10.0.0.1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the answer (HTTP 200) went on past ${MAX_ANSWER_BODY_BYTES / MiB} MiB, ` +
        'more than any answer of the API server holds, and was not read further (a server or proxy sending without end?)',
    );
    // what sits in the socket buffers and the chunks in flight, at most, past the cap
    expect(d.endlessBytesWritten).toBeLessThan(MAX_ANSWER_BODY_BYTES + 64 * MiB);
  });

  // A request is taken as sent, and its lost answer read back, only once it was written on a
  // connection made and secured (requests.ts whenWritten), as under client-node 2.x.
  // Regression: 1.x's hand-over to node-fetch counted as sent, so a create whose TLS handshake
  // never completed was read back, and said that the object may have been created.
  describe('a lost answer', () => {
    it('a TLS handshake that never completes: its deadline passes, nothing is read back, and the error says only that', async () => {
      const silent = await SilentServer.start();
      try {
        const server = silent.url.replace('http://', 'https://');
        const s = new KubernetesStore(kubeConfigFor(server), { start: false, requestTimeoutMs: 500 });
        opened.push(s);
        const err = await s.create({ name: '10.0.0.1', parentRef: SVC }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(KubernetesApiError);
        expect((err as Error).message).toBe(
          `create ipaddresses.networking.k8s.io "10.0.0.1": no answer from ${server} within 500 ms (requestTimeoutMs)`,
        );
        expect(silent.requests).toBe(0);
      } finally {
        await silent.close();
      }
    });

    it('over https://, the connection dropped after the server stored the object: read back, and resolves to it', async () => {
      const s = new KubernetesStore(kubeConfigFor(d.url), { start: false, requestTimeoutMs: 2000 });
      opened.push(s);
      d.dropAfterCommit('create');
      const created = await s.create({ name: '10.0.0.1', parentRef: SVC });
      expect([created.uid, d.requestsOf('get').length]).toEqual([d.objects()[0]!.metadata.uid, 1]);
    });

    // node-fetch also takes a function returning the agent, whose requests cannot be watched: such
    // a request counts as sent once handed over, so that a create stored whose answer was lost is
    // read back rather than reported failed (and its object left behind).
    it('an agent given as a function: the connection dropped after the server stored the object: read back, and resolves to it', async () => {
      class FunctionAgentConfig extends KubeConfig {
        override async applySecurityAuthentication(context: Parameters<KubeConfig['applySecurityAuthentication']>[0]): Promise<void> {
          await super.applySecurityAuthentication(context);
          const agent = (context as unknown as { getAgent(): unknown }).getAgent();
          (context as unknown as { setAgent(a: unknown): void }).setAgent(() => agent);
        }
      }
      const s = new KubernetesStore(kubeConfigFor(d.url, undefined, { Config: FunctionAgentConfig }), {
        start: false,
        requestTimeoutMs: 2000,
      });
      opened.push(s);
      d.dropAfterCommit('create');
      const created = await s.create({ name: '10.0.0.1', parentRef: SVC });
      expect([created.uid, d.requestsOf('get').length]).toEqual([d.objects()[0]!.metadata.uid, 1]);
    });

    it('over http://, the connection dropped after the server deleted the object: read back, and resolves', async () => {
      const plain = await ApiServerDouble.start();
      try {
        const s = new KubernetesStore(kubeConfigFor(plain.url), { start: false, requestTimeoutMs: 2000 });
        opened.push(s);
        await s.create({ name: '10.0.0.1', parentRef: SVC });
        plain.dropAfterCommit('delete');
        await s.delete('10.0.0.1');
        expect([plain.requestsOf('get').length, plain.objects()]).toEqual([1, []]);
      } finally {
        await plain.close();
      }
    });
  });
});
