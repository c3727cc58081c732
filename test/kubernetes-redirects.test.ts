// A redirect from the API server to another host. client-go's http.Client follows it (Go's
// net/http, up to 10), and since Go 1.8 leaves the Authorization header out when the new host is
// not the first one or a subdomain of it; fetch (undici under client-node 2.x, node-fetch under
// 1.x) follows it too and leaves the header out for another origin. The bearer token must never
// reach the other host.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { KubernetesApiError } from '../adapters/kubernetes/errors.ts';
import { kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';

/** An HTTP server on 127.0.0.1 that records each request's line and Authorization header. */
async function recordingServer(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ port: number; seen: string[]; close(): void }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '(no Authorization)'}`);
    answer(req, res);
  });
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
    const first = await recordingServer((_req, res) => res.writeHead(302, { location: `http://localhost:${other.port}/login` }).end());
    closing.push(first.close);
    const store = new KubernetesStore(kubeConfigFor(`http://127.0.0.1:${first.port}`), { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    await expect(store.get('10.96.0.10')).rejects.toBeInstanceOf(KubernetesApiError);
    expect(first.seen).toEqual([`GET /apis/networking.k8s.io/v1/ipaddresses/10.96.0.10 Bearer ${TEST_TOKEN}`]);
    expect(other.seen).toEqual(['GET /login (no Authorization)']);
  });
});
