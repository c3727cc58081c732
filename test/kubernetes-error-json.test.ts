// JSON.stringify of a KubernetesApiError, as a logger writes it: the message (an Error's own
// message is not enumerable, and was left out), the HTTP status and the server's Status, the cause
// when there is one; never the stack. The same shape as the IPAllocatorError classes' toJSON.
import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** What a store's `get` of 10.0.0.7 rejects with, the double set up by `arrange`. */
async function getFailure(arrange: (double: ApiServerDouble) => unknown, requestTimeoutMs = 5000): Promise<KubernetesApiError> {
  const double = await ApiServerDouble.start();
  closing.push(() => double.close());
  const store = new KubernetesStore(kubeConfigFor(double.url), { start: false, requestTimeoutMs });
  closing.push(() => store.close());
  await arrange(double);
  const err = await store.get('10.0.0.7').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubernetesApiError);
  return err as KubernetesApiError;
}

describe('JSON.stringify of a KubernetesApiError', () => {
  it('an answer with a Status: its name, message and code first, then reason, the Status field by field, verb and name', async () => {
    const err = await getFailure((d) => d.failNext('get', 1, 500, 'etcd is down'));
    const written = JSON.stringify(err);
    expect(JSON.parse(written)).toEqual({
      name: 'KubernetesApiError',
      message: err.message,
      code: 500,
      reason: 'InternalError',
      status: { ...err.status },
      verb: 'get',
      resourceName: '10.0.0.7',
    });
    expect(err.message).toContain('etcd is down');
    expect(JSON.parse(written).status).toMatchObject({
      kind: 'Status',
      code: 500,
      reason: 'InternalError',
      message: expect.stringContaining('etcd is down'),
    });
    expect(Object.keys(JSON.parse(written)).slice(0, 3)).toEqual(['name', 'message', 'code']);
    expect(written).not.toContain('stack');
    expect(JSON.parse(JSON.stringify({ err })).err.message).toBe(err.message); // as a logger nests it
  });

  it('no answer: no code, the cause as its name, message and code', async () => {
    const err = await getFailure((d) => d.stopListening());
    const json = JSON.parse(JSON.stringify(err));
    expect(json).toEqual({
      name: 'KubernetesApiError',
      message: err.message,
      verb: 'get',
      resourceName: '10.0.0.7',
      cause: { name: 'TypeError', message: 'fetch failed' },
    });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('no answer in time: timeoutMs, and no cause', async () => {
    const err = await getFailure((d) => d.setLatency(2000, 'get'), 200);
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      name: 'KubernetesApiError',
      message: err.message,
      verb: 'get',
      resourceName: '10.0.0.7',
      timeoutMs: 200,
    });
  });
});
