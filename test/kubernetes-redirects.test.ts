// A redirect from the API server to another host. client-go's http.Client follows it (Go's
// net/http, up to 10), and since Go 1.8 leaves the Authorization header out when the new host is
// not the first one or a subdomain of it; fetch (undici under client-node 2.x, node-fetch under
// 1.x) follows it too and leaves the header out for another origin. The bearer token must never
// reach the other host. The API server is reached over https where the token's way is the
// point: kubectl sends no credentials to an http:// server.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceCIDR, deleteServiceCIDR, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { KubernetesApiError } from '../adapters/kubernetes/errors.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { until } from './k8s/helpers.ts';
import { kubeConfigFor, TEST_TOKEN, writeKubeconfig } from './k8s/kubeconfig.ts';
import { cli } from './cli-helpers.ts';
import { SERVER_CERT, SERVER_KEY } from './k8s/tls.ts';

/**
 * An HTTP server on 127.0.0.1 that records each request's line and Authorization header; with
 * `tls: true` an HTTPS one (tls.ts SERVER_CERT; kubeConfigFor does not check it).
 */
async function recordingServer(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: { tls?: boolean } = {},
): Promise<{ port: number; seen: string[]; close(): void }> {
  const seen: string[] = [];
  const record = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '(no Authorization)'}`);
    answer(req, res);
  };
  const server = options.tls ? https.createServer({ cert: SERVER_CERT, key: SERVER_KEY }, record) : http.createServer(record);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, close: () => server.close() };
}

describe('a redirect from the API server to another host', () => {
  const closing: (() => void)[] = [];
  afterEach(() => {
    for (const close of closing.splice(0)) close();
  });

  it('is followed without the bearer token, as Go drops Authorization for another host', async () => {
    // an SSO front page, as a misconfigured load balancer in front of the API server sends one to
    const other = await recordingServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>'));
    closing.push(other.close);
    const first = await recordingServer((_req, res) => res.writeHead(302, { location: `http://localhost:${other.port}/login` }).end(), {
      tls: true,
    });
    closing.push(first.close);
    const store = new KubernetesStore(kubeConfigFor(`https://127.0.0.1:${first.port}`), { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    await expect(store.get('10.96.0.10')).rejects.toBeInstanceOf(KubernetesApiError);
    expect(first.seen).toEqual([`GET /apis/networking.k8s.io/v1/ipaddresses/10.96.0.10 Bearer ${TEST_TOKEN}`]);
    expect(other.seen).toEqual(['GET /login (no Authorization)']);
  });

  // Regression: the errors named the API server as the one that answered (client-node 2.x's
  // answer does not say where fetch ended), and a 404 from the other host was said to be the API
  // server not serving networking.k8s.io/v1.
  describe('errors name the host that answered, or failed', () => {
    async function redirectingTo(location: string) {
      const first = await recordingServer((_req, res) => res.writeHead(302, { location }).end());
      closing.push(first.close);
      const store = new KubernetesStore(kubeConfigFor(`http://127.0.0.1:${first.port}`), { start: false, requestTimeoutMs: 10_000 });
      closing.push(() => store.close());
      return { first, store };
    }

    it('a page that is no JSON (a login page)', async () => {
      const other = await recordingServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>'));
      closing.push(other.close);
      const { first, store } = await redirectingTo(`http://localhost:${other.port}/login`);
      await expect(store.get('10.96.0.10')).rejects.toThrow(
        `get ipaddresses.networking.k8s.io "10.96.0.10": the API server answered with a malformed body (content type text/html) from http://localhost:${other.port}, where the API server redirected the request: not JSON`,
      );
      const kubeconfig = writeKubeconfig(`http://127.0.0.1:${first.port}`);
      closing.push(kubeconfig.remove);
      const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `ipallocator: http://localhost:${other.port}, where the API server at http://127.0.0.1:${first.port} (context "double") redirected the request, answered list servicecidrs.networking.k8s.io with a malformed body (content type text/html)`,
      );
    });

    it("an error answer: not read as the API server's (a 404 is no API version not served, nor a missing object)", async () => {
      const other = await recordingServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page'));
      closing.push(other.close);
      const { first, store } = await redirectingTo(`http://localhost:${other.port}/login`);
      const err = await store.get('10.96.0.10').then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as KubernetesApiError).code).toBe(404);
      expect((err as Error).message).toContain(
        `(answered by http://localhost:${other.port}, where the API server at http://127.0.0.1:${first.port} redirected the request)`,
      );
      expect((err as Error).message).not.toContain('does not serve');
    });

    // Regression: deleteServiceCIDR resolved false ("no such ServiceCIDR") on the other host's 404
    // when its body was a Status naming the object, and createServiceCIDR read its 409 as the name
    // being taken and read the object back
    it("the ServiceCIDR helpers: the other host's 404 or 409 is no answer about the ServiceCIDR, even in a Status naming it", async () => {
      const statusNaming = (code: number, reason: string) =>
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason,
          code,
          details: { name: 'sc-1', kind: 'servicecidrs' },
        });
      for (const [code, reason] of [
        [404, 'NotFound'],
        [409, 'AlreadyExists'],
      ] as const) {
        const other = await recordingServer((_req, res) =>
          res.writeHead(code, { 'content-type': 'application/json' }).end(statusNaming(code, reason)),
        );
        closing.push(other.close);
        const first = await recordingServer((_req, res) =>
          res.writeHead(307, { location: `http://localhost:${other.port}/elsewhere` }).end(),
        );
        closing.push(first.close);
        const kc = kubeConfigFor(`http://127.0.0.1:${first.port}`);
        const call = code === 404 ? deleteServiceCIDR(kc, 'sc-1') : createServiceCIDR(kc, 'sc-1', ['10.96.0.0/16']);
        const err = await call.then(
          (r) => r,
          (e: unknown) => e,
        );
        expect(err, `${code}`).toBeInstanceOf(KubernetesApiError);
        expect((err as KubernetesApiError).code).toBe(code);
        expect((err as Error).message).toContain(
          `(answered by http://localhost:${other.port}, where the API server at http://127.0.0.1:${first.port} redirected the request)`,
        );
        expect(first.seen, `${code}: nothing read back`).toHaveLength(1);
      }
    });

    // Regression: the command line read the other host's 404 on its first listing as the API
    // server not serving networking.k8s.io v1, tried v1beta1, and said the cluster serves neither;
    // its 401 as the API server refusing the credentials; and named the API server as the host
    it("the command line: the other host's 404 or 401 is not the API server's, and that host is named", async () => {
      for (const code of [404, 401]) {
        const other = await recordingServer((_req, res) => res.writeHead(code, { 'content-type': 'text/plain' }).end('no such page'));
        closing.push(other.close);
        const first = await recordingServer((_req, res) => res.writeHead(302, { location: `http://localhost:${other.port}/login` }).end(), {
          tls: true,
        });
        closing.push(first.close);
        const kubeconfig = writeKubeconfig(`https://127.0.0.1:${first.port}`);
        closing.push(kubeconfig.remove);
        const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
        expect(r.code, `${code}`).toBe(2);
        expect(r.stderr, `${code}`).toContain(
          `ipallocator: http://localhost:${other.port}, where the API server at https://127.0.0.1:${first.port} (context "double") redirected the request, answered list servicecidrs.networking.k8s.io: HTTP ${code} ${code === 404 ? 'Not Found' : 'Unauthorized'}`,
        );
        expect(first.seen, `${code}: no second listing in v1beta1`).toEqual([
          `GET /apis/networking.k8s.io/v1/servicecidrs?limit=500 Bearer ${TEST_TOKEN}`,
        ]);
      }
    });

    // Regression: a 2xx from the other host that looked like the answer asked for was taken as
    // the API server's: the object read, created or deleted, a list taken as the cluster's state
    it("a 2xx that looks like the answer asked for: not taken as the API server's, by the library or the command line", async () => {
      const ipAddress = {
        kind: 'IPAddress',
        apiVersion: 'networking.k8s.io/v1',
        metadata: { name: '10.96.0.10', uid: 'u-1', resourceVersion: '7' },
        spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'dns' } },
      };
      const emptyList = { kind: 'ServiceCIDRList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '7' }, items: [] };
      const other = await recordingServer((req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(req.url?.includes('/servicecidrs') ? emptyList : ipAddress)),
      );
      closing.push(other.close);
      // the path kept, as a load balancer moving the API elsewhere would keep it
      const first = await recordingServer((req, res) => res.writeHead(302, { location: `http://localhost:${other.port}${req.url}` }).end());
      closing.push(first.close);
      const store = new KubernetesStore(kubeConfigFor(`http://127.0.0.1:${first.port}`), { start: false, requestTimeoutMs: 10_000 });
      closing.push(() => store.close());
      const refused = `the API server answered with a redirect to http://localhost:${other.port}, whose 2xx answer is not taken as the API server's`;
      await expect(store.get('10.96.0.10')).rejects.toThrow(`get ipaddresses.networking.k8s.io "10.96.0.10": ${refused}`);
      await expect(store.create({ name: '10.96.0.10', labels: {}, parentRef: ipAddress.spec.parentRef } as never)).rejects.toThrow(
        `create ipaddresses.networking.k8s.io "10.96.0.10": ${refused}`,
      );
      // the method it arrived with is named only where the redirect changed it: a 302 turns a
      // create into a GET, and leaves a get as it was. No credentials were sent to the http://
      // API server, so none were left out on the way (regression: the message said the request
      // reached that host "without its Authorization header", which it never had)
      const reached =
        'and the request reached that host without credentials, as the API server had it (none are sent to an http:// server)';
      await expect(store.get('10.96.0.10')).rejects.toThrow(`${refused}: the API server redirects no API request, ${reached}`);
      await expect(store.create({ name: '10.96.0.10', labels: {}, parentRef: ipAddress.spec.parentRef } as never)).rejects.toThrow(
        `${refused}: the API server redirects no API request, ${reached}, as a GET`,
      );
      const kubeconfig = writeKubeconfig(`http://127.0.0.1:${first.port}`);
      closing.push(kubeconfig.remove);
      const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain(
        `ipallocator: the API server at http://127.0.0.1:${first.port} (context "double") answered list servicecidrs.networking.k8s.io with a redirect to http://localhost:${other.port}, whose 2xx answer is not taken as the API server's`,
      );
    });

    // Regression: the command line said "the API server … kept turning the request away as too
    // busy" when the host a redirect led to answered each attempt 429
    it('a 429 from that host until the timeout: the command line names it as the host that turned the request away', async () => {
      const other = await recordingServer((_req, res) =>
        res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' })
          .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 })),
      );
      closing.push(other.close);
      const first = await recordingServer((_req, res) => res.writeHead(302, { location: `http://localhost:${other.port}/busy` }).end());
      closing.push(first.close);
      const kubeconfig = writeKubeconfig(`http://127.0.0.1:${first.port}`);
      closing.push(kubeconfig.remove);
      // a timeout long enough for the redirect and the first 429 to arrive on a loaded machine
      const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '3s']);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain(
        `ipallocator: http://localhost:${other.port}, where the API server at http://127.0.0.1:${first.port} (context "double") redirected the request, kept turning the request away as too busy (429 Too Many Requests`,
      );
    });

    it('a host that cannot be reached: the library and the command line name it', async () => {
      const gone = await recordingServer(() => {});
      gone.close();
      const { first, store } = await redirectingTo(`http://127.0.0.1:${gone.port}/login`);
      await expect(store.get('10.96.0.10')).rejects.toThrow(
        `(http://127.0.0.1:${gone.port}, where the API server at http://127.0.0.1:${first.port} redirected the request)`,
      );
      const kubeconfig = writeKubeconfig(`http://127.0.0.1:${first.port}`);
      closing.push(kubeconfig.remove);
      const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `cannot reach http://127.0.0.1:${gone.port}, where the API server at http://127.0.0.1:${first.port} (context "double") redirected the request: connection refused (ECONNREFUSED)`,
      );
    });

    // Regression: fetch refuses a bad port before the Location is seen, and the message said a
    // redirect but not where to ("fetch does not say which URL"); the query is not shown (it may
    // hold a credential, as a login page's return token)
    it('a port fetch never connects to: the library and the command line say where the redirect led', async () => {
      const { first, store } = await redirectingTo('http://127.0.0.1:6000/login?state=secret');
      const why =
        'answered with a redirect to http://127.0.0.1:6000/login, on port 6000, a port fetch never connects to, ' +
        `one of the Fetch standard's "bad ports"; kube-apiserver does not redirect API requests: something in front of it does ` +
        '(a proxy, a login page), or the kubeconfig names another server';
      await expect(store.get('10.96.0.10')).rejects.toThrow(
        `get ipaddresses.networking.k8s.io "10.96.0.10": fetch failed: bad port (the API server at http://127.0.0.1:${first.port}): the API server ${why}`,
      );
      const kubeconfig = writeKubeconfig(`http://127.0.0.1:${first.port}`);
      closing.push(kubeconfig.remove);
      const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: list servicecidrs.networking.k8s.io failed: the API server at http://127.0.0.1:${first.port} (context "double") ${why}\n`,
      );
    });
  });
});

describe("a redirect that leaves the API server's answer to another request", () => {
  const closing: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  const taken = {
    name: '10.96.0.10',
    labels: {},
    parentRef: { group: '', resource: 'services', namespace: 'default', name: 'dns' },
  };
  const path = '/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10';

  async function doubleHolding() {
    const double = await ApiServerDouble.start({ tls: true });
    closing.push(() => double.close());
    // another client's address: a create of it must fail, never resolve as made
    double.insert({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IPAddress',
      metadata: { name: taken.name },
      spec: { parentRef: taken.parentRef },
    });
    const store = new KubernetesStore(kubeConfigFor(double.url), { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    return { double, store };
  }

  // Regression: a front proxy's 303 on the API server's own origin made fetch send the create
  // again as a GET of the object, and that object, another client's, was taken as the one made:
  // the address handed out twice
  it("a 303 on the API server's origin that turns a create into a GET: refused, not taken as made", async () => {
    const { double, store } = await doubleHolding();
    double.proxyAnswerNext('create', 'ipaddresses', '', { status: 303, contentType: 'text/plain', headers: { location: path } });
    await expect(store.create({ ...taken, parentRef: { ...taken.parentRef, name: 'web' } })).rejects.toThrow(
      `create ipaddresses.networking.k8s.io "10.96.0.10": the API server answered with a redirect that sent the request again as a GET, whose 2xx answer is not the answer to the create`,
    );
    // the object read is the other client's, as it was
    expect(double.requestsOf('get').map((r) => r.path)).toEqual([path]);
    expect(double.objects().map((o) => o.spec)).toEqual([{ parentRef: taken.parentRef }]);
  });

  // Regression: a redirect through another host and back reached the API server without the
  // bearer token (fetch drops it for good at the first other origin), and its 2xx was taken
  it('a redirect through another host and back to the API server: refused, naming that host', async () => {
    const { double, store } = await doubleHolding();
    const back = await recordingServer((req, res) => res.writeHead(307, { location: `${double.url}${req.url}` }).end());
    closing.push(back.close);
    double.proxyAnswerNext('get', 'ipaddresses', '', {
      status: 307,
      contentType: 'text/plain',
      headers: { location: `http://localhost:${back.port}${path}` },
    });
    await expect(store.get('10.96.0.10')).rejects.toThrow(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the API server answered with a redirect to http://localhost:${back.port}, whose 2xx answer is not taken as the API server's: ` +
        'the API server redirects no API request, and the request reached that host without an Authorization header (fetch leaves out the one a user may have for another origin)',
    );
    expect(double.requestsOf('get').map((r) => r.authorization ?? '(none)')).toEqual([`Bearer ${TEST_TOKEN}`, '(none)']);
  });

  it('a redirect from an http:// API server to an https:// host: refused, saying no credentials were sent, by the library and the command line', async () => {
    const { double } = await doubleHolding();
    double.insert({ metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/24'] } }, 'servicecidrs');
    const plain = await recordingServer((req, res) => res.writeHead(301, { location: `${double.url}${req.url}` }).end());
    closing.push(plain.close);
    const server = `http://127.0.0.1:${plain.port}`;
    const store = new KubernetesStore(kubeConfigFor(server), { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    const said =
      `a redirect to ${double.url}, whose 2xx answer is not taken as the API server's: the API server redirects no API request, ` +
      'and the request reached that host without credentials, as the API server had it (none are sent to an http:// server)';
    await expect(store.get('10.96.0.10')).rejects.toThrow(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the API server answered with ${said}`,
    );
    const kubeconfig = writeKubeconfig(server);
    closing.push(kubeconfig.remove);
    const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain(
      `ipallocator: the API server at ${server} (context "double") answered list servicecidrs.networking.k8s.io with ${said}\n`,
    );
    expect(plain.seen.every((line) => line.endsWith('(no Authorization)'))).toBe(true);
  });

  it("a 307 on the API server's origin keeps the request as it was: its answer is the API server's", async () => {
    const { double, store } = await doubleHolding();
    double.proxyAnswerNext('get', 'ipaddresses', '', { status: 307, contentType: 'text/plain', headers: { location: path } });
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10', parentRef: taken.parentRef });
  });

  it("the command line: a listing redirected through another host and back is not taken as the cluster's", async () => {
    const { double } = await doubleHolding();
    const back = await recordingServer((req, res) => res.writeHead(307, { location: `${double.url}${req.url}` }).end());
    closing.push(back.close);
    double.proxyAnswerNext('list', 'servicecidrs', '', {
      status: 307,
      contentType: 'text/plain',
      headers: { location: `http://localhost:${back.port}/apis/networking.k8s.io/v1/servicecidrs?limit=500` },
    });
    const kubeconfig = writeKubeconfig(double.url);
    closing.push(kubeconfig.remove);
    const r = await cli(['status', '--kubeconfig', kubeconfig.path, '--request-timeout', '10s']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain(
      `ipallocator: the API server at ${double.url} (context "double") answered list servicecidrs.networking.k8s.io with a redirect to http://localhost:${back.port}, whose 2xx answer is not taken as the API server's`,
    );
  });
});

describe('a watch redirected away from the API server', () => {
  // Regression: only a 200 after a redirect was refused; another host's 410 Gone was read as the
  // API server's (an expired resourceVersion: re-listed at once, counted as expired, no failure
  // said), and so would its 429 (its Retry-After waited out) or 401 (the credential forgotten)
  it("its answer of another status is refused too, not read as the API server's (a 410 Gone is no expiry)", async () => {
    const double = await ApiServerDouble.start();
    const gone = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' };
    const other = await recordingServer((_req, res) =>
      res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify(gone)),
    );
    const store = new KubernetesStore(kubeConfigFor(double.url), { requestTimeoutMs: 10_000 });
    try {
      double.proxyAnswerNext('watch', 'ipaddresses', '', {
        status: 307,
        contentType: 'text/plain',
        headers: { location: `http://localhost:${other.port}/apis/networking.k8s.io/v1/ipaddresses?watch=true` },
      });
      const failures: string[] = [];
      store.onStateChange((_state, error) => {
        if (error !== undefined) failures.push(error.message);
      });
      await store.waitForSync();
      await until(() => other.seen.length > 0 && double.requestsOf('watch').length >= 2, 'a watch again, to the API server');
      expect(store.stats.expired).toBe(0);
      expect(failures[0]).toContain(
        `watch ipaddresses.networking.k8s.io: the API server answered with a redirect to http://localhost:${other.port}, whose answer (HTTP 410) is not taken as the API server's`,
      );
    } finally {
      await store.close();
      await double.close();
      other.close();
    }
  });

  // Regression: a watch fetch followed to another host was read as the cluster's changes: the
  // objects of that host (here another cluster's API server, as a load balancer moving the API
  // elsewhere would send it) entered the store's cache as if they were the cluster's
  it("is not read: the other host's objects never enter the cache, and the failure names the redirect", async () => {
    const double = await ApiServerDouble.start();
    const other = await ApiServerDouble.start();
    const store = new KubernetesStore(kubeConfigFor(double.url), { requestTimeoutMs: 10_000 });
    try {
      const parentRef = { group: '', resource: 'services', namespace: 'default', name: 'dns' };
      double.insert({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '10.96.0.10' }, spec: { parentRef } });
      other.insert({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '10.96.0.99' }, spec: { parentRef } });
      double.proxyAnswerNext('watch', 'ipaddresses', '', {
        status: 307,
        contentType: 'text/plain',
        headers: { location: `${other.url.replace('127.0.0.1', 'localhost')}/apis/networking.k8s.io/v1/ipaddresses?watch=true` },
      });
      const failures: string[] = [];
      store.onStateChange((_state, error) => {
        if (error !== undefined) failures.push(error.message);
      });
      await store.waitForSync();
      // either the other host's object came in, or the watch was sent again to the API server
      await until(() => store.cache.get('10.96.0.99') !== undefined || double.requestsOf('watch').length >= 2, 'a watch again');
      expect(store.cache.list().map((r) => r.name)).toEqual(['10.96.0.10']);
      expect(failures[0]).toContain(
        `watch ipaddresses.networking.k8s.io: the API server answered with a redirect to ${other.url.replace('127.0.0.1', 'localhost')}, whose 2xx answer is not taken as the API server's`,
      );
    } finally {
      await store.close();
      await double.close();
      await other.close();
    }
  });
});
