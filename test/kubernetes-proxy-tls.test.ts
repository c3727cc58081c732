// The TLS connection to an https:// proxy: its certificate's names are checked as kubectl checks
// them (Go's crypto/x509: the subject alternative names only, never the common name of the
// subject), as the API server's are, and a certificate the check refuses is said to be the proxy's.
//
// A proxy's certificate is checked against the runtime's trusted CAs only, which are read as the
// process starts (NODE_EXTRA_CA_CERTS; DENO_CERT under Deno): each case runs in a child process
// (k8s/proxy-get-child.ts) given the proxy's certificate so.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { underDeno } from '../adapters/peer-install.ts';
import { startForwardProxy } from './doubles/forward-proxy.ts';
import { CN_ONLY_CERT, IPV6_LOOPBACK_CERT, SERVER_KEY } from './k8s/tls.ts';
import { CA_CERT, ISSUED_CERT, ISSUED_KEY, startServerWith } from './k8s/untrusted-tls.ts';

/** For the tests, each of which starts a process: on a loaded machine, that alone may take tens of seconds. */
const CHILD_TESTS = { timeout: 180_000 };

const CLIENT_NODES = [
  ['2.x', []],
  ['1.x', ['client-node-1']],
] as const;

/**
 * What a get through `proxyUrl` to `server` (whose CA is CA_CERT) says, from a child process that
 * trusts `trusted` (PEM) for the proxy's certificate.
 */
async function getThrough(server: string, proxyUrl: string, trusted: string, version: readonly string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ipallocator-proxy-tls-'));
  const caFile = join(dir, 'proxy-ca.pem');
  writeFileSync(caFile, trusted);
  const root = join(import.meta.dirname, '..');
  const child = join(import.meta.dirname, 'k8s', 'proxy-get-child.ts');
  // Deno's own connections (client-node 2.x's) take DENO_CERT; those of node:https (1.x's) NODE_EXTRA_CA_CERTS
  const runtime = underDeno() ? ['run', '-A'] : ['--import', 'tsx'];
  const env = underDeno() && version.length === 0 ? { DENO_CERT: caFile } : { NODE_EXTRA_CA_CERTS: caFile };
  try {
    return await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        [...runtime, child, server, CA_CERT, proxyUrl, ...version],
        { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 120_000 },
        (err, stdout, stderr) => (err === null ? done(stdout.trim()) : fail(new Error(`${err.message}\n${stderr}`))),
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("an https:// proxy's certificate is checked for the proxy's name as kubectl checks it", CHILD_TESTS, () => {
  const closing: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  const cases = [
    // Regression: Node's check of the names (Deno's too) took the common name of a certificate with
    // no subject alternative name, so such a proxy was trusted where kubectl refuses it
    [
      'one whose only name is its common name',
      CN_ONLY_CERT,
      SERVER_KEY,
      CN_ONLY_CERT,
      'it has no subject alternative name, the only names kubectl checks a host against (never the common name of its ' +
        "subject): kubectl refuses it too; it must be issued again, with the proxy's host name or address as a subject alternative name",
    ],
    // Regression: said as "the connection to the proxy at … failed: Hostname/IP does not match
    // certificate's altnames: …", with no word of what to do
    [
      'one issued for another name',
      ISSUED_CERT,
      ISSUED_KEY,
      CA_CERT,
      'it names IP Address:127.0.0.1 (a host name is checked against its DNS names, an address against its IP addresses, ' +
        'as kubectl checks them): name the proxy in its URL by one of those, or have its certificate issued again for the host the URL names',
    ],
  ] as const;
  it.each(CLIENT_NODES.flatMap(([version, child]) => cases.map((c) => [version, ...c, child] as const)))(
    "with client-node %s, %s is refused, said to be the proxy's, before anything is sent to it",
    async (_version, _what, cert, key, trusted, why, child) => {
      const api = await startServerWith(ISSUED_CERT);
      closing.push(api.close);
      const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' }, tls: { cert, key } });
      closing.push(proxy.close);
      const proxyUrl = proxy.url.replace('127.0.0.1', 'localhost');
      expect(await getThrough(api.url, proxyUrl, trusted, child)).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${api.url} was not sent: the certificate of the proxy at ` +
          `${proxyUrl} (proxy-url of cluster "prod" in the kubeconfig) is not issued for localhost (ERR_TLS_CERT_ALTNAME_INVALID): ${why}`,
      );
      expect(proxy.seen).toEqual([]);
    },
  );
});

describe('an https:// proxy named by an IPv6 address (https://[::1]:port)', CHILD_TESTS, () => {
  const closing: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it.each(CLIENT_NODES)('with client-node %s, is connected to, its certificate checked against that address', async (_version, child) => {
    const api = await startServerWith(ISSUED_CERT);
    closing.push(api.close);
    const proxy = await startForwardProxy({
      hosts: { '127.0.0.1': '127.0.0.1' },
      tls: { cert: IPV6_LOOPBACK_CERT, key: SERVER_KEY },
      listen: '::1',
    });
    closing.push(proxy.close);
    // the server's `{}` is no IPAddress: what matters is that it answered, through the proxy
    expect(await getThrough(api.url, proxy.url, IPV6_LOOPBACK_CERT, child)).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /,
    );
    expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT ${new URL(api.url).host}`]);
  });
});
