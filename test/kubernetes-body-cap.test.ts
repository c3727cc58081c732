// An answer whose body never ends — a server, or something in between, streaming without end —
// fails its request once the body passes MAX_ANSWER_BODY_BYTES, with an error naming the request
// and the cap, and is read no further: the double stops writing as soon as the client lets go.
// Before, client-node read every body whole: the request grew memory until its deadline (gigabytes
// on a fast link), or ended in V8's "Cannot create a string longer than 0x1fffffe8 characters".
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BODY_BYTES } from '../adapters/kubernetes/answer-body.ts';
import { KubernetesApiError } from '../adapters/kubernetes/errors.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { addIPAddress, addServiceCIDR, cli, startCluster, type Cluster } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const MiB = 1024 * 1024;
const CAP = `on past ${MAX_ANSWER_BODY_BYTES / MiB} MiB, more than any answer of the API server holds, and was not read further`;

/**
 * What the double may have written past the cap before the client let go: what sits in the
 * socket buffers on both sides and the chunks in flight (a few MiB on loopback); a client
 * reading on would take all it is sent.
 */
const SLACK = 64 * MiB;

describe('an answer body without end', () => {
  let d: ApiServerDouble;
  const opened: { close(): void }[] = [];
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) o.close();
    await d.close();
  });

  // one minute: a client reading on would end on this deadline instead of on the cap
  const store = () => {
    const s = new KubernetesStore(kubeConfigFor(d.url), { start: false, requestTimeoutMs: 60_000 });
    opened.push(s);
    return s;
  };

  it('a get answered 200 with a JSON body that never ends: rejects naming the request and the cap, read no further', async () => {
    d.proxyAnswerNext('get', 'ipaddresses', '{"kind":"IPAddress","apiVersion":"networking.k8s.io/v1","metadata":{"name":"10.0.0.1"', {
      contentType: 'application/json',
      endless: true,
    });
    const err = await store()
      .get('10.0.0.1')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the answer (HTTP 200) went ${CAP} (a server or proxy sending without end?)`,
    );
    expect((err as KubernetesApiError).code).toBeUndefined();
    // told by a field, not by its message: the status of the answer that was cut off
    expect((err as KubernetesApiError).cutOffStatus).toBe(200);
    expect(d.endlessBytesWritten).toBeGreaterThan(MAX_ANSWER_BODY_BYTES - 2 * MiB);
    expect(d.endlessBytesWritten).toBeLessThan(MAX_ANSWER_BODY_BYTES + SLACK);
  });

  it('an error answer (503) whose body never ends, read by client-node for its Status: the same', async () => {
    d.proxyAnswerNext('get', 'ipaddresses', '<html><title>503 Service Unavailable</title>', { status: 503, endless: true });
    const err = await store()
      .get('10.0.0.1')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as Error).message).toContain(`get ipaddresses.networking.k8s.io "10.0.0.1": the answer (HTTP 503) went ${CAP}`);
    expect(err).toMatchObject({ code: undefined, cutOffStatus: 503 });
    expect(d.endlessBytesWritten).toBeLessThan(MAX_ANSWER_BODY_BYTES + SLACK);
  });
});

describe('ipallocator status, a list answered with a body that never ends', () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
  });
  afterEach(async () => {
    await c.close();
  });

  it('fails with the request and the cap said, exit 2', async () => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
    c.double.proxyAnswerNext('list', 'ipaddresses', '{"kind":"IPAddressList","apiVersion":"networking.k8s.io/v1","metadata":{},"items":[', {
      contentType: 'application/json',
      endless: true,
    });
    const r = await cli(['status', '--kubeconfig', c.kubeconfig, '--request-timeout', '60s']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    // Regression: "answered list … with a malformed body: list …: the answer (HTTP 200) went on
    // past 128 MiB": the request said twice, and nothing malformed was read
    expect(r.stderr).toMatch(
      new RegExp(
        `^ipallocator: the answer of the API server at http://127\\.0\\.0\\.1:\\d+ \\(context "double"\\) to list ipaddresses\\.networking\\.k8s\\.io \\(HTTP 200\\) went ${CAP.replace(/[.()]/g, '\\$&')} \\(a server or proxy sending without end\\?\\); nothing was changed\n$`,
      ),
    );
    expect(c.double.endlessBytesWritten).toBeLessThan(MAX_ANSWER_BODY_BYTES + SLACK);
  });

  it('check --fix: a delete so answered stops --fix, saying the object may or may not be gone', async () => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(c.double, '10.96.0.30', { namespace: 'default', name: 'gone' });
    c.double.proxyAnswerNext('delete', 'ipaddresses', '{"kind":"Status","apiVersion":"v1","status":"Success"', {
      contentType: 'application/json',
      endless: true,
    });
    const later = () => Date.now() + 61_000;
    const r = await cli(['check', '--fix', '--yes', '--kubeconfig', c.kubeconfig, '--request-timeout', '60s'], { now: later });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `ipallocator: --fix stopped: the answer of the API server at ${c.double.url} (context "double") to delete ipaddresses.networking.k8s.io "10.96.0.30" (HTTP 200) went ${CAP} (a server or proxy sending without end?); the IPAddress may have been deleted or not: run check again to see\n`,
    );
    expect(c.double.endlessBytesWritten).toBeLessThan(MAX_ANSWER_BODY_BYTES + SLACK);
  });
});
