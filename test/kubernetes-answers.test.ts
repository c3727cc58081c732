// What an error says about an HTTP answer whose body is no Kubernetes Status: a proxy's or load
// balancer's error page, a text/plain line, an empty body. The message names the status with its
// reason phrase and describes the body (content type, size, first words) so that an operator can
// tell that something other than the API server answered; text from the answer never brings a
// newline or a terminal escape into the message. Real HTTP from a small server of the test's own.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const GET = 'get ipaddresses.networking.k8s.io "10.96.0.10"';
const PROXY = 'not a Kubernetes Status (a proxy in front of the API server?)';

interface Row {
  name: string;
  code: number;
  headers: Record<string, string>;
  body: string;
  /** The message after `GET: `. */
  says: string;
}

const NGINX_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

const ROWS: Row[] = [
  {
    name: 'an HTML error page: its title',
    code: 502,
    headers: { 'Content-Type': 'text/html' },
    body: NGINX_502,
    says: `HTTP 502 Bad Gateway with a body of ${NGINX_502.length} bytes (text/html), ${PROXY}: "502 Bad Gateway"`,
  },
  {
    name: 'an HTML page without a title: its first text, tags left out',
    code: 503,
    headers: { 'Content-Type': 'text/html; charset=utf-8' },
    body: '<!DOCTYPE html><html><body>\n<h1>Maintenance</h1><p>back soon</p></body></html>',
    says: `HTTP 503 Service Unavailable with a body of 78 bytes (text/html), ${PROXY}: "Maintenance"`,
  },
  {
    name: 'text/plain: its first line that is not blank, trimmed',
    code: 503,
    headers: { 'Content-Type': 'text/plain' },
    body: '\n   upstream connect error or disconnect/reset before headers  \nreset reason: overflow\n',
    says: `HTTP 503 Service Unavailable with a body of 87 bytes (text/plain), ${PROXY}: "upstream connect error or disconnect/reset before headers"`,
  },
  {
    name: 'JSON that is no Status',
    code: 500,
    headers: { 'Content-Type': 'application/json' },
    body: '{"error":"backend down"}',
    says: `HTTP 500 Internal Server Error with a body of 24 bytes (application/json), ${PROXY}: "{\\"error\\":\\"backend down\\"}"`,
  },
  {
    name: 'an empty body without a content type',
    code: 502,
    headers: {},
    body: '',
    says: `HTTP 502 Bad Gateway with an empty body, ${PROXY}`,
  },
  {
    name: 'a status without a reason phrase of its own',
    code: 520,
    headers: { 'Content-Type': 'text/plain' },
    body: 'Web server is returning an unknown error',
    says: `HTTP 520 error with a body of 40 bytes (text/plain), ${PROXY}: "Web server is returning an unknown error"`,
  },
  {
    name: 'a long line: cut to 80 characters',
    code: 502,
    headers: { 'Content-Type': 'text/plain' },
    body: 'é'.repeat(300),
    says: `HTTP 502 Bad Gateway with a body of 600 bytes (text/plain), ${PROXY}: "${'é'.repeat(80)}"…`,
  },
  {
    name: 'a hostile body: its newline, escape sequence and direction override escaped, not acted on',
    code: 502,
    headers: { 'Content-Type': 'text/plain' },
    body: 'bad gateway\u001b[2J\u001b[31m\u202e\u0000 ok\r\nget ipaddresses: forged line',
    says: `HTTP 502 Bad Gateway with a body of 57 bytes (text/plain), ${PROXY}: "bad gateway\\x1b[2J\\x1b[31m\\u202e\\x00 ok"`,
  },
  {
    name: 'a content type that is no media type is not repeated',
    code: 502,
    headers: { 'Content-Type': 'text/plain\u00a0\u00a0or so' },
    body: 'down',
    says: `HTTP 502 Bad Gateway with a body of 4 bytes, ${PROXY}: "down"`,
  },
  {
    name: 'a Status message from the server is escaped too',
    code: 500,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'InternalError',
      message: 'etcd\n\u001b[31mfailed',
      code: 500,
    }),
    says: 'HTTP 500 InternalError: etcd\\u000a\\u001b[31mfailed',
  },
  {
    // (the whole body read as tags cost time growing with the square of its length: minutes for this one)
    name: 'a huge page of angle brackets without an end: described from its start, its size counted whole',
    code: 502,
    headers: { 'Content-Type': 'text/html' },
    body: `<html>${'<'.repeat(300_000)}`,
    says: `HTTP 502 Bad Gateway with a body of 300,006 bytes (text/html), ${PROXY}: "${'<'.repeat(80)}"…`,
  },
  {
    name: "a Status's reason is escaped as its message is",
    code: 500,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Internal\u001b[31mError\nget: forged',
      message: 'm',
      code: 500,
    }),
    says: 'HTTP 500 Internal\\u001b[31mError\\u000aget: forged: m',
  },
  {
    name: "a Status's huge message: its first 1,000 characters, and how many more",
    code: 500,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'InternalError',
      message: 'x'.repeat(5000),
      code: 500,
    }),
    says: `HTTP 500 InternalError: ${'x'.repeat(1000)}… (4,000 more characters)`,
  },
];

describe('an answer whose body is no Kubernetes Status is described, not reported as a bare status', () => {
  let server: Server;
  let url: string;
  let reply: Row = ROWS[0]!;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(reply.code, reply.headers);
        res.end(reply.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  for (const row of ROWS) {
    it(row.name, async () => {
      reply = row;
      const store = new KubernetesStore(kubeConfigFor(url), { start: false });
      try {
        const err = await store.get('10.96.0.10').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(KubernetesApiError);
        const e = err as KubernetesApiError;
        expect(e.code).toBe(row.code);
        expect(e.message).toBe(`${GET}: ${row.says}`);
        expect(e.message).not.toMatch(/[\p{Cc}\p{Cf}]/u); // no control or format character (escape, newline, direction override)
      } finally {
        store.close();
      }
    });
  }

  it('a 404 that is no Status: said to be a version the server does not serve, and the body described', async () => {
    reply = { name: '', code: 404, headers: { 'Content-Type': 'text/html' }, body: '<h1>Not Found</h1>', says: '' };
    const store = new KubernetesStore(kubeConfigFor(url), { start: false });
    try {
      const err = (await store.get('10.96.0.10').catch((e: unknown) => e)) as KubernetesApiError;
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect(err.message).toMatch(/^get .*: HTTP 404: the API server does not serve /);
      expect(err.message).toContain(`; the answer came with a body of 18 bytes (text/html), ${PROXY}: "Not Found"`);
    } finally {
      store.close();
    }
  });
});
