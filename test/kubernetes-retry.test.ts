// An answer that asks the client to come back later, as client-go reads it (rest/with_retry.go:
// withRetry.IsNextRetry → checkWait): a 429, or any status ≥ 500, carrying a Retry-After header
// is sent again after that wait, whatever the verb, at most 10 times per request, within the
// request's deadline; a 5xx without the header is a failure. Real HTTP against the API-server
// double (whose Statuses naming a wait carry the header, as kube-apiserver writes them) and
// against small servers of the test's own (a proxy's 503 in text, kube-apiserver's ServerTimeout);
// the cap and the deadline's message on fake timers. The tests assert what was sent and what each
// call settled with, never how long anything took.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { ApiException } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubernetesApiError, KubernetesStore, type KubernetesStoreOptions } from '../adapters/kubernetes/index.ts';
import { ApiRequests } from '../adapters/kubernetes/requests.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { until } from './k8s/helpers.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { outcome, record, WEB } from './k8s/lost-answers.ts';

const IPADDRESSES = 'ipaddresses.networking.k8s.io';

/** An HTTP answer a test server gives. */
interface Reply {
  code: number;
  headers?: Record<string, string>;
  /** JSON (an object) or text. */
  body: unknown;
}

/** A proxy's or load balancer's answer in front of the API server: text, no Status. */
const proxyText = (code: number, headers: Record<string, string> = {}): Reply => ({
  code,
  headers: { 'Content-Type': 'text/plain', ...headers },
  body: 'upstream unavailable, try again later\n',
});

/** A metav1.Status as kube-apiserver writes it. */
const status = (code: number, reason: string, message: string, details?: object, headers: Record<string, string> = {}): Reply => ({
  code,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code },
});

/**
 * A server of the test's own: `reply(req, n)` answers the nth request (1-based) or, undefined, the
 * default — a create echoed as 201 Created. Records each request's method and URL.
 */
async function scriptedServer(reply: (req: IncomingMessage, n: number) => Reply | undefined) {
  const received: { method: string; url: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '' });
      const r = reply(req, received.length);
      if (r === undefined) {
        const obj = JSON.parse(body) as { metadata: Record<string, unknown> };
        obj.metadata = { ...obj.metadata, uid: 'u1', resourceVersion: '7' };
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(obj));
        return;
      }
      if (r.body === null) {
        res.writeHead(r.code, r.headers); // a watch held open
        res.flushHeaders();
        return;
      }
      res.writeHead(r.code, r.headers);
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('a 5xx with Retry-After is sent again after the wait, as client-go does', () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function serve(reply: (req: IncomingMessage, n: number) => Reply | undefined) {
    const server = await scriptedServer(reply);
    closers.push(server.close);
    return server;
  }
  function store(url: string, options: KubernetesStoreOptions = {}): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(url), { start: false, ...options });
    closers.push(() => s.close());
    return s;
  }

  it('a create answered 503 with Retry-After by a proxy in front of the API server is sent again, and succeeds', async () => {
    const server = await serve((_, n) => (n === 1 ? proxyText(503, { 'Retry-After': '1' }) : undefined));
    const created = await store(server.url).create(record('10.96.0.10'));
    expect(created.name).toBe('10.96.0.10');
    // the same create, its fieldManager (its own mark: kubernetes-create-resent.test.ts) the same
    const post = {
      method: 'POST',
      url: expect.stringMatching(/^\/apis\/networking\.k8s\.io\/v1\/ipaddresses\?fieldManager=ipallocator-[0-9a-f]{32}$/),
    };
    expect(server.received).toEqual([post, post]);
    expect(server.received[1]!.url).toBe(server.received[0]!.url);
  });

  it('kube-apiserver’s ServerTimeout (500, etcd unreachable: "please try again", Retry-After) is sent again', async () => {
    const serverTimeout = status(
      500,
      'ServerTimeout',
      'The create operation against ipaddresses.networking.k8s.io could not be completed at this time, please try again.',
      { name: 'create', group: 'networking.k8s.io', kind: 'ipaddresses', retryAfterSeconds: 1 },
      { 'Retry-After': '1' },
    );
    const server = await serve((_, n) => (n === 1 ? serverTimeout : undefined));
    expect((await store(server.url).create(record('10.96.0.11'))).name).toBe('10.96.0.11');
    expect(server.received.length).toBe(2);
  });

  it('a 5xx without a Retry-After header is not sent again, the Status’s retryAfterSeconds alone included (client-go reads the header): the create is read back', async () => {
    const answers: Reply[] = [
      proxyText(502),
      proxyText(503),
      status(500, 'InternalError', 'Internal error occurred: etcdserver: request timed out'),
      status(504, 'Timeout', 'request did not complete', { retryAfterSeconds: 1 }), // no header
      proxyText(503, { 'Retry-After': 'Fri, 04 Dec 2026 13:00:00 GMT' }), // a date: not a number of seconds
    ];
    for (const answer of answers) {
      const server = await serve(() => answer);
      const err = await outcome(store(server.url).create(record('10.96.0.12')));
      expect(err, JSON.stringify(answer)).toBeInstanceOf(KubernetesApiError);
      expect((err as KubernetesApiError).code).toBe(answer.code);
      expect((err as KubernetesApiError).timeoutMs).toBeUndefined();
      // 500, 502, 503 and 504 do not say the create was left undone: read back (answered the same)
      expect((err as KubernetesApiError).message).toContain('; the object may have been created, and reading it back failed: HTTP');
      expect(
        server.received.map((r) => r.method),
        JSON.stringify(answer),
      ).toEqual(['POST', 'GET']);
    }
  });

  it('the deadline covers the waits; its message names the 503 waited out, not throttling', async () => {
    // a deadline long enough for each 503 to arrive on a loaded machine, and shorter than the wait it asks for
    const server = await serve(() => proxyText(503, { 'Retry-After': '60' }));
    const err = (await outcome(store(server.url, { requestTimeoutMs: 2000 }).create(record('10.96.0.13')))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    // the 503 does not say the create went unhandled: it is read back, and that read waits out a 503 too
    const timedOut = `no answer from ${server.url} within 2000 ms (requestTimeoutMs; the server answered 503 once with a Retry-After meanwhile)`;
    expect(err.message).toBe(
      `create ${IPADDRESSES} "10.96.0.13": ${timedOut}; the object may have been created, and reading it back failed: ${timedOut}`,
    );
    expect(err.timeoutMs).toBe(2000);
    expect(server.received.map((r) => r.method)).toEqual(['POST', 'GET']);
  });

  it('a list page answered 503 with Retry-After is asked again with the same continue token (the listing goes on); meanwhile lastError names the 503', async () => {
    const item = (name: string) => ({
      metadata: { name, uid: `u-${name}`, resourceVersion: '5', labels: allocatorLabels('IPv4') },
      spec: { parentRef: WEB },
    });
    const page = (name: string, cont?: string): Reply => ({
      code: 200,
      headers: { 'Content-Type': 'application/json' },
      body: {
        kind: 'IPAddressList',
        apiVersion: 'networking.k8s.io/v1',
        metadata: { resourceVersion: '5', continue: cont },
        items: [item(name)],
      },
    });
    let secondPageAsked = 0;
    const server = await serve((req) => {
      const query = new URL(req.url ?? '', 'http://x').searchParams;
      if (query.get('watch') === 'true' || query.get('watch') === '1')
        return { code: 200, headers: { 'Content-Type': 'application/json' }, body: null };
      if (query.get('continue') !== 'page-2') return page('10.96.0.1', 'page-2');
      return ++secondPageAsked === 1 ? proxyText(503, { 'Retry-After': '1' }) : page('10.96.0.2');
    });
    const s = store(server.url, { pageSize: 1, backoff: { initialMs: 1, maxMs: 5 } });
    s.start();
    await until(() => s.lastError !== undefined, 'the 503 reported');
    expect((s.lastError as KubernetesApiError).code).toBe(503);
    expect(s.lastError?.message).toMatch(/^list ipaddresses\.networking\.k8s\.io: HTTP 503/);
    await s.waitForSync();
    expect(
      s.cache
        .list()
        .map((r) => r.name)
        .sort(),
    ).toEqual(['10.96.0.1', '10.96.0.2']);
    const lists = server.received
      .filter((r) => !/[?&]watch=/.test(r.url))
      .map((r) => new URL(r.url, 'http://x').searchParams.get('continue'));
    expect(lists).toEqual([null, 'page-2', 'page-2']);
    expect([s.stats.lists, s.lastError]).toEqual([1, undefined]);
  });
});

describe('against the API-server double', () => {
  let d: ApiServerDouble;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    await d.close();
  });

  it('a 504 Timeout naming a wait (Status and Retry-After) on a get and a delete is sent again; a create answered 503 naming none is read back', async () => {
    const s = new KubernetesStore(kubeConfigFor(d.url), { start: false });
    try {
      await s.create(record('10.0.0.1'));
      d.failNext('get', 1, 504); // NewTimeoutError(…, 1): retryAfterSeconds 1, header Retry-After: 1
      expect((await s.get('10.0.0.1'))?.name).toBe('10.0.0.1');
      expect(d.requestsOf('get').length).toBe(2);
      d.failNext('delete', 1, 504);
      await s.delete('10.0.0.1');
      expect(d.requestsOf('delete').length).toBe(2);
      expect(d.objects()).toEqual([]);
      d.failNext('create', 1, 503); // NewServiceUnavailable: no wait named
      // it may have been stored: read back, not there, and sent once more
      expect((await s.create(record('10.0.0.2'))).name).toBe('10.0.0.2');
      expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([3, 3]);
    } finally {
      s.close();
    }
  });

  describe('a create the server committed but answered with a ServerTimeout (500, Retry-After), sent again', () => {
    // The second send meets the object the first one made (409). Read back, it carries the
    // create's own fieldManager: the create succeeds with it (the other objects a resend can
    // meet, which stay a collision: kubernetes-create-resent.test.ts).

    it('resolves to the object the first send made, the only one on the server', async () => {
      const s = new KubernetesStore(kubeConfigFor(d.url), { start: false });
      try {
        d.timeOutAfterCommit('create');
        const created = await s.create(record('10.0.0.1'));
        expect(created.uid).toBe(d.objects()[0]!.metadata.uid);
        expect([d.requestsOf('create').length, d.objects().map((o) => o.metadata.name)]).toEqual([2, ['10.0.0.1']]);
      } finally {
        s.close();
      }
    });
  });

  describe('a delete the server committed but answered with a ServerTimeout (500, Retry-After)', () => {
    const owners = () => d.objects().map((o) => [o.metadata.name, (o.spec as { parentRef: { name: string } }).parentRef.name]);

    it('is sent again naming its object by uid: the name re-created by another owner meanwhile keeps its object', async () => {
      // Regression: the plain DELETE sent again deleted the other owner's new object, and a third
      // owner was then given the same address.
      const s = new KubernetesStore(kubeConfigFor(d.url));
      try {
        await s.waitForSync();
        await s.create(record('10.0.0.3'));
        const uid = d.objects()[0]!.metadata.uid;
        d.timeOutAfterCommit('delete');
        const deleting = s.delete('10.0.0.3');
        await until(() => d.objects().length === 0, 'the first delete applied');
        d.insert({ metadata: { name: '10.0.0.3', labels: allocatorLabels('IPv4') }, spec: { parentRef: { ...WEB, name: 'other' } } });
        // Another object there (409, its uid precondition failed): read back, as after a lost
        // answer, it is another uid — the one meant is gone: the delete succeeds, and the other
        // owner's object stays.
        expect(await outcome(deleting)).toEqual({ resolved: undefined });
        expect(d.requestsOf('delete').map((r) => r.body ?? null)).toEqual([null, { preconditions: { uid } }]);
        expect(d.requestsOf('get').length).toBe(1);
        expect(owners()).toEqual([['10.0.0.3', 'other']]);
      } finally {
        s.close();
      }
    });

    it('sent again and finding the object gone, succeeds: the earlier send deleted it; the cache drops it', async () => {
      const s = new KubernetesStore(kubeConfigFor(d.url));
      try {
        await s.waitForSync();
        await s.create(record('10.0.0.5'));
        d.timeOutAfterCommit('delete');
        expect(await outcome(s.delete('10.0.0.5'))).toEqual({ resolved: undefined });
        expect([d.requestsOf('delete').length, d.objects().length, s.cache.get('10.0.0.5')]).toEqual([2, 0, undefined]);
      } finally {
        s.close();
      }
    });

    it('with no uid known (the cache does not hold the name) is not sent again: read back, gone, it resolves', async () => {
      const s = new KubernetesStore(kubeConfigFor(d.url), { start: false });
      try {
        d.insert({ metadata: { name: '10.0.0.4', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } });
        d.timeOutAfterCommit('delete');
        await s.delete('10.0.0.4');
        expect([d.requestsOf('delete').length, d.requestsOf('get').length, d.objects().length]).toEqual([1, 1, 0]);
      } finally {
        s.close();
      }
    });
  });
});

describe('how many times, and the deadline’s message (fake timers)', () => {
  const TARGET = { verb: 'create', resource: IPADDRESSES, name: '10.96.0.20' } as const;
  /** client-node's rejection for an HTTP answer (the headers as client-node 2.x gives them: lower case). */
  const answer = (code: number, retryAfter?: string) =>
    new ApiException(code, `HTTP-Code: ${code}`, 'try again later', retryAfter === undefined ? {} : { 'retry-after': retryAfter });

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs the fake clock (1 s at a time, up to `limitS`) until `p` settles; what it settled with. */
  async function settle(p: Promise<unknown>, limitS = 120): Promise<unknown> {
    let settled = false;
    const result = outcome(p).finally(() => (settled = true));
    for (let s = 0; s < limitS && !settled; s++) await vi.advanceTimersByTimeAsync(1000);
    expect(settled, 'the request settled').toBe(true);
    return result;
  }

  // Regression: the eleventh answer was handed back as it came, so the error read as a single
  // failure ("HTTP 503 …") with nothing saying the request had been sent 11 times.
  it('at most 10 times in all (11 sends), 429s and 5xx counted together; then it gives up, saying so and quoting the last answer', async () => {
    const rows: [number[], string][] = [
      [[503], 'answered 503 10 times with a Retry-After'],
      [[429, 503], 'throttled it (429) 5 times and answered 503 5 times with a Retry-After'],
      [[500, 502, 429, 504], 'throttled it (429) 2 times and answered 500 3 times, 502 3 times, 504 2 times with a Retry-After'],
    ];
    for (const [codes, said] of rows) {
      const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
      let sent = 0;
      const heard: number[] = [];
      const err = await settle(
        requests.run(
          TARGET,
          async () => {
            throw answer(codes[sent++ % codes.length]!, '1');
          },
          (e) => heard.push(e.code!),
        ),
      );
      expect(sent, String(codes)).toBe(11);
      expect(heard, String(codes)).toEqual(Array.from({ length: 10 }, (_, i) => codes[i % codes.length]));
      const last = codes[10 % codes.length]!;
      expect(err).toBeInstanceOf(KubernetesApiError);
      const e = err as KubernetesApiError;
      expect([e.code, e.resends], String(codes)).toEqual([last, 10]);
      expect(e.message, String(codes)).toBe(
        `create ${IPADDRESSES} "10.96.0.20": gave up after 10 resends (the server ${said}, each waited out as it asked); ` +
          `the last answer: HTTP ${last} ${last === 429 ? 'Too Many Requests' : 'Service Unavailable'} ` +
          'with a body of 15 bytes, not a Kubernetes Status (a proxy in front of the API server?): "try again later"',
      );
    }
  });

  it('given up, the last answer’s Status is kept: its code, reason and message', async () => {
    const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
    const statusBody = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'the server was unable to return a response in the time allotted, but may still be processing the request',
      reason: 'ServerTimeout',
      details: { retryAfterSeconds: 1 },
      code: 500,
    });
    const err = (await settle(
      requests.run(TARGET, async () => {
        throw new ApiException(500, 'HTTP-Code: 500', statusBody, { 'retry-after': '1' });
      }),
    )) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect([err.code, err.reason, err.resends, err.timeoutMs]).toEqual([500, 'ServerTimeout', 10, undefined]);
    expect(err.message).toBe(
      `create ${IPADDRESSES} "10.96.0.20": gave up after 10 resends (the server answered 500 10 times with a Retry-After, each waited out as it asked); ` +
        'the last answer: HTTP 500 ServerTimeout: the server was unable to return a response in the time allotted, but may still be processing the request',
    );
  });

  it('given up on a proxy’s answer (no Status), the last answer is described: its reason phrase, type and first words', async () => {
    const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
    const err = (await settle(
      requests.run(TARGET, async () => {
        throw new ApiException(503, 'HTTP-Code: 503', 'upstream unavailable\n', { 'retry-after': '1', 'content-type': 'text/plain' });
      }),
    )) as KubernetesApiError;
    expect([err.code, err.reason, err.resends]).toEqual([503, undefined, 10]);
    expect(err.message).toBe(
      `create ${IPADDRESSES} "10.96.0.20": gave up after 10 resends (the server answered 503 10 times with a Retry-After, each waited out as it asked); ` +
        'the last answer: HTTP 503 Service Unavailable with a body of 21 bytes (text/plain), not a Kubernetes Status (a proxy in front of the API server?): "upstream unavailable"',
    );
  });

  it('a request answered at once, or after fewer waits, carries no resends', async () => {
    const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
    let sent = 0;
    const err = await settle(
      requests.run(TARGET, async () => {
        throw sent++ === 0 ? answer(503, '1') : answer(500);
      }),
    );
    expect(err).toBeInstanceOf(ApiException); // the answer as client-node threw it: the caller translates
  });

  it('Retry-After is read as client-go reads it (strconv.Atoi of the first value): a sign, several values, an overflow', async () => {
    const rows: [string, number][] = [
      ['+3', 2], // sent again
      ['-1', 2], // sent again (client-go at once; here after 200 ms, below)
      ['2, 5', 2], // two headers joined by fetch: the first counts
      ['99999999999999999999999', 1], // no int64: no wait to honour, the answer stands
      ['1.5', 1],
    ];
    for (const [header, sends] of rows) {
      const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
      let sent = 0;
      const result = await settle(
        requests.run(TARGET, async () => {
          if (sent++ === 0) throw answer(503, header);
          return 'created';
        }),
      );
      expect([header, sent], header).toEqual([header, sends]);
      expect(result, header).toEqual(sends === 2 ? { resolved: 'created' } : expect.any(ApiException));
    }
  });

  // Regression: a Retry-After of 0 (or below) was waited 1 s, as if the server had asked for a
  // second; client-go sends again at once (rest/with_retry.go checkWait: strconv.Atoi's 0, a
  // negative sleep returns at once), held back only by its client-side rate limiter, 5 requests
  // a second by default. Here: after 200 ms, that pace. A 429's Status naming 0 names no wait
  // (apimachinery's SuggestsClientDelay takes only a positive retryAfterSeconds).
  it('Retry-After: 0 or a negative number is sent again after 200 ms, not a second', async () => {
    for (const header of ['0', '-5', '-0', '+0']) {
      const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
      let sent = 0;
      const waits: number[] = [];
      const result = outcome(
        requests.run(
          TARGET,
          async () => {
            if (sent++ === 0) throw answer(503, header);
            return 'created';
          },
          (_e, seconds) => waits.push(seconds),
        ),
      );
      await vi.advanceTimersByTimeAsync(150);
      expect([header, sent], 'not before 200 ms').toEqual([header, 1]);
      await vi.advanceTimersByTimeAsync(100);
      expect([header, sent], 'sent again by 250 ms').toEqual([header, 2]);
      expect(await result, header).toEqual({ resolved: 'created' });
      expect(waits, header).toEqual([0.2]);
    }
  });

  it('a value that is no whole number of seconds names no wait, as for client-go: an HTTP date, a fraction, text, nothing', async () => {
    for (const header of ['Fri, 04 Dec 2026 13:00:00 GMT', '1.5', 'soon', '', ' ']) {
      const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
      let sent = 0;
      const err = await settle(
        requests.run(TARGET, async () => {
          sent++;
          throw answer(503, header);
        }),
      );
      expect([JSON.stringify(header), sent]).toEqual([JSON.stringify(header), 1]);
      expect((err as ApiException<unknown>).code).toBe(503); // the answer stands
    }
  });

  it('a 429 without the header: its Status’s retryAfterSeconds counts only when positive', async () => {
    const throttled = (seconds: number) =>
      new ApiException(
        429,
        'HTTP-Code: 429',
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'TooManyRequests',
          code: 429,
          details: { retryAfterSeconds: seconds },
        }),
        {},
      );
    for (const [seconds, sends] of [
      [2, 2],
      [0, 1],
      [-3, 1],
    ] as const) {
      const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
      let sent = 0;
      await settle(
        requests.run(TARGET, async () => {
          if (sent++ === 0) throw throttled(seconds);
          return 'created';
        }),
      );
      expect([seconds, sent]).toEqual([seconds, sends]);
    }
  });

  it('a 5xx without Retry-After after waits ends the request with that answer', async () => {
    const requests = new ApiRequests('https://10.0.0.1:6443', Infinity);
    const script = [answer(503, '1'), answer(429, '2'), answer(500)];
    let sent = 0;
    const err = await settle(
      requests.run(TARGET, async () => {
        throw script[sent++]!;
      }),
    );
    expect([sent, (err as ApiException<unknown>).code]).toEqual([3, 500]);
  });

  it('the deadline’s message counts each kind of answer waited out', async () => {
    const requests = new ApiRequests('https://10.0.0.1:6443', 3500);
    const script = [answer(429, '1'), answer(503, '1'), answer(503, '1'), answer(500, '1')];
    let sent = 0;
    const err = (await settle(
      requests.run(TARGET, async () => {
        throw script[Math.min(sent++, script.length - 1)]!;
      }),
    )) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.message).toBe(
      `create ${IPADDRESSES} "10.96.0.20": no answer from https://10.0.0.1:6443 within 3500 ms ` +
        '(requestTimeoutMs; the server throttled it (429) once and answered 503 2 times, 500 once with a Retry-After meanwhile)',
    );
    expect(sent).toBe(4);
  });
});

// A watch refused with a wait (a 429, or a 5xx with Retry-After) was sent again after the
// informer's own backoff alone — 200 ms at first —, however long the server asked it to wait;
// client-go's rest client waits the Retry-After out before it sends the watch again (rest/request.go
// Watch, rest/with_retry.go). The double answers as kube-apiserver does (a Status naming the wait,
// and the Retry-After header); the clock is fake (setTimeout and Date; the network is real), so
// the tests say which requests were sent by which moment, never how long anything took.
describe('the wait a refused watch or a list asks for is honoured before the next request (fake clock)', () => {
  let d: ApiServerDouble;
  let s: KubernetesStore | undefined;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(async () => {
    s?.close();
    s = undefined;
    vi.useRealTimers();
    await d.close();
  });

  /** Lets the real network work (setImmediate is not faked) until `cond` holds; the clock stands still. */
  async function settled(cond: () => boolean, what: string): Promise<void> {
    for (let i = 0; !cond(); i++) {
      if (i > 200_000) throw new Error(`gave up waiting for ${what}`);
      await new Promise((r) => setImmediate(r));
    }
  }
  /** Moves the fake clock on by `ms`, 100 ms at a time, letting the network answer in between. */
  async function advance(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 100) {
      await vi.advanceTimersByTimeAsync(Math.min(100, ms - t));
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    }
  }
  const lists = () => d.requestsOf('list').length;
  const watches = () => d.requestsOf('watch').length;

  const rows: { name: string; code: number; retryAfter: number; waitS: number; next: 'watch' | 'list' }[] = [
    { name: '429 TooManyRequests, Retry-After: 7: the watch resumed after 7 s', code: 429, retryAfter: 7, waitS: 7, next: 'watch' },
    { name: '503 ServiceUnavailable, Retry-After: 7: the watch resumed after 7 s', code: 503, retryAfter: 7, waitS: 7, next: 'watch' },
    { name: '500 InternalError, Retry-After: 7: the re-list sent after 7 s', code: 500, retryAfter: 7, waitS: 7, next: 'list' },
    { name: '429, Retry-After: 3600: kept to 60 s, as every request’s wait', code: 429, retryAfter: 3600, waitS: 60, next: 'watch' },
  ];
  for (const row of rows) {
    it(`a watch refused with ${row.name}`, async () => {
      s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 1, maxMs: 5, jitter: 0 }, watchTimeoutSeconds: 300 });
      await settled(() => s!.state === 'synced' && d.openWatches() === 1, 'synced and watching');
      d.bookmark(); // the watch brings an event: its end is resumed at once, without backoff
      await settled(() => s!.stats.watches === 1 && d.openWatches() === 1, 'the bookmark');
      await advance(100);
      d.failNext('watch', 1, row.code, 'try later', row.retryAfter);
      d.closeWatches();
      await settled(() => watches() === 2 && (s!.lastError as KubernetesApiError | undefined)?.code === row.code, 'the refused watch');
      const refused = d.requestsOf('watch')[1]!;
      expect(refused.query.resourceVersion).toBe(d.requestsOf('watch')[0]!.query.resourceVersion); // resumed from where it was

      await advance(row.waitS * 1000 - 500);
      expect([watches(), lists()], 'nothing sent before the wait is over').toEqual([2, 1]);
      await advance(1000);
      if (row.next === 'watch') {
        await settled(() => watches() === 3, 'the watch sent again');
        expect(d.requestsOf('watch')[2]!.query.resourceVersion).toBe(refused.query.resourceVersion);
        expect(lists()).toBe(1);
      } else {
        await settled(() => lists() === 2, 'the re-list');
      }
      await settled(() => s!.state === 'synced', 'synced again');
    });
  }

  it('a list page whose wait the deadline cut short: the next list waits the rest of it out', async () => {
    // 503 asking for 10 s; the request's deadline (3 s) ends it first. The informer's backoff
    // (1 ms) alone would list again at once.
    d.failNext('list', 1, 503, 'etcd is unhappy', 10);
    s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 1, maxMs: 5, jitter: 0 }, requestTimeoutMs: 3000 });
    await settled(() => lists() === 1 && s!.lastError !== undefined, 'the 503 heard');
    await advance(3500);
    expect((s.lastError as KubernetesApiError).timeoutMs).toBe(3000);
    await advance(6000);
    expect(lists(), 'no list before the 10 s are over').toBe(1);
    await advance(1000);
    await settled(() => lists() === 2 && s!.state === 'synced', 'listed again, and synced');
  });

  it.each([
    ['set back an hour', -3_600_000],
    ['set forward an hour', 3_600_000],
  ])('a wall clock %s during that wait neither stretches nor skips it', async (_name, step) => {
    d.failNext('list', 1, 503, 'etcd is unhappy', 10);
    s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 1, maxMs: 5, jitter: 0 }, requestTimeoutMs: 3000 });
    await settled(() => lists() === 1 && s!.lastError !== undefined, 'the 503 heard');
    vi.setSystemTime(Date.now() + step); // NTP, a VM restored
    await advance(3500);
    expect((s.lastError as KubernetesApiError).timeoutMs).toBe(3000);
    await advance(5500); // 9 s after the answer that asked for 10
    expect(lists()).toBe(1);
    await advance(1500);
    await settled(() => lists() === 2 && s!.state === 'synced', 'listed again once the 10 s were over, and synced');
  });
});
