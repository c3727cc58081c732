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
import { kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';

vi.mock('@kubernetes/client-node', () => import('client-node-1'));

const MiB = 1024 * 1024;

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
});
