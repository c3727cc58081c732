// An API server whose certificate the client does not trust — self-signed with no
// certificate-authority in the kubeconfig, issued by another CA, expired, or for another name —
// is said as such, with why and what to set in the kubeconfig: not as fetch's bare "self-signed
// certificate (DEPTH_ZERO_SELF_SIGNED_CERT)", which says neither.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { underDeno } from '../adapters/peer-install.ts';
import { KubernetesApiError, KubernetesStore, SyncTimeoutError } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { cli } from './cli-helpers.ts';
import { startForwardProxy } from './doubles/forward-proxy.ts';
import { startSocks5Proxy } from './doubles/socks5-proxy.ts';
import { settledGet, until } from './k8s/helpers.ts';
import { base64, SERVER_CERT } from './k8s/tls.ts';
import {
  CA_CERT,
  EXPIRED_CERT,
  INTERMEDIATE_CERT,
  ISSUED_BY_INTERMEDIATE_CERT,
  ISSUED_BY_SECOND_INTERMEDIATE_CERT,
  ISSUED_CERT,
  ISSUED_KEY,
  NO_SAN_CERT,
  NOT_YET_VALID_CERT,
  OTHER_NAME_CERT,
  SECOND_INTERMEDIATE_CERT,
  SELF_SIGNED_CERT,
  startServerWith,
  URI_SAN_ONLY_CERT,
} from './k8s/untrusted-tls.ts';

const UNTRUSTED = "the API server's certificate is not trusted";
const NO_CA =
  'cluster "prod" in the kubeconfig has no certificate-authority to check it with (only the runtime\'s trusted CAs were): ' +
  "set its certificate-authority (a file) or certificate-authority-data (the file's content, base64) to the cluster's CA certificate";
const NOT_ITS_CA =
  'the certificate-authority-data of cluster "prod" in the kubeconfig is not the certificate authority that issued it: ' +
  "set it to the cluster's CA certificate";
/** The same for a certificate whose issuer is not found at all: a missing intermediate certificate looks alike. */
const NOT_ITS_CA_OR_NO_INTERMEDIATE =
  'the certificate-authority-data of cluster "prod" in the kubeconfig is not the certificate authority that issued it, ' +
  "or the server does not send the intermediate certificates between the two: set it to the cluster's CA certificate; " +
  'if it is that already, add the intermediate certificates to it, or have the server send them after its own';
/** The same for a chain sent that leads to no CA: an intermediate certificate left out of it looks alike. */
const NOT_ITS_CA_OR_NOT_ALL_INTERMEDIATES =
  'the certificate-authority-data of cluster "prod" in the kubeconfig is not the certificate authority that issued it, ' +
  "or the server does not send all the intermediate certificates between the two: set it to the cluster's CA certificate; " +
  'if it is that already, add the missing intermediate certificates to it, or have the server send them after its own';
/** Deno's TLS says a certificate out of its dates in the words of one whose issuer is unknown. */
const OR_DATES = underDeno()
  ? ' (under Deno a certificate that has expired, or is not valid yet, is said in these words too: check its dates)'
  : '';

/** settledGet from a server presenting `chain` (on `host`, default 127.0.0.1): its answer, and the server's URL. */
async function getError(
  chain: string,
  cluster: { caData?: string; tlsServerName?: string },
  { Config = KubeConfig, host }: { Config?: typeof KubeConfig; host?: string } = {},
): Promise<{ err: unknown; url: string }> {
  const server = await startServerWith(chain, host);
  try {
    return { err: await settledGet({ server: server.url, ...cluster }, { token: 't' }, Config), url: server.url };
  } finally {
    server.close();
  }
}

describe('an API server whose certificate is not trusted', () => {
  // Regression: each was said as fetch's failure and nothing more, e.g. "fetch failed: self-signed
  // certificate (DEPTH_ZERO_SELF_SIGNED_CERT) (the API server at https://127.0.0.1:…)"
  it.each([
    ['self-signed, no certificate-authority', SELF_SIGNED_CERT, {}, `it is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT), and ${NO_CA}`],
    [
      'self-signed, another certificate-authority-data',
      SELF_SIGNED_CERT,
      { caData: base64(CA_CERT) },
      `it is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT), and ${NOT_ITS_CA}`,
    ],
    [
      'issued by a CA it is sent without, no certificate-authority',
      ISSUED_CERT,
      {},
      `its issuer is not a trusted certificate authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE), and ${NO_CA}${OR_DATES}`,
    ],
    [
      'issued by a CA it is sent without, another certificate-authority-data',
      ISSUED_CERT,
      { caData: base64(SERVER_CERT) },
      `its issuer is not a trusted certificate authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE), and ${NOT_ITS_CA_OR_NO_INTERMEDIATE}${OR_DATES}`,
    ],
    [
      // Regression: said to be "not the certificate authority that issued it", which the root is not, though it is the right one
      'issued by an intermediate CA it is sent without, the root CA as certificate-authority-data',
      ISSUED_BY_INTERMEDIATE_CERT,
      { caData: base64(CA_CERT) },
      `its issuer is not a trusted certificate authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE), and ${NOT_ITS_CA_OR_NO_INTERMEDIATE}${OR_DATES}`,
    ],
    [
      'sent with an intermediate CA, another certificate-authority-data',
      ISSUED_BY_INTERMEDIATE_CERT + INTERMEDIATE_CERT,
      { caData: base64(SERVER_CERT) },
      `its chain leads to a certificate authority that is not trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY), and ${NOT_ITS_CA_OR_NOT_ALL_INTERMEDIATES}`,
    ],
    [
      // Regression: said to be "not the certificate authority that issued it" only, though it is the right one
      'issued by the second of two intermediate CAs, sent with that one only, the root CA as certificate-authority-data',
      ISSUED_BY_SECOND_INTERMEDIATE_CERT + SECOND_INTERMEDIATE_CERT,
      { caData: base64(CA_CERT) },
      `its chain leads to a certificate authority that is not trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY), and ${NOT_ITS_CA_OR_NOT_ALL_INTERMEDIATES}`,
    ],
    [
      'sent with the self-signed CA that issued it, no certificate-authority',
      ISSUED_CERT + CA_CERT,
      {},
      `its chain ends in a self-signed certificate authority that is not trusted (SELF_SIGNED_CERT_IN_CHAIN), and ${NO_CA}`,
    ],
    [
      'sent with an intermediate CA, no certificate-authority',
      ISSUED_BY_INTERMEDIATE_CERT + INTERMEDIATE_CERT,
      {},
      `its chain leads to a certificate authority that is not trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY), and ${NO_CA}`,
    ],
  ])('%s: said not trusted, why, and which certificate-authority to set', async (_what, chain, cluster, why) => {
    const { err, url } = await getError(chain, cluster);
    expect(err).toBeInstanceOf(KubernetesApiError);
    const e = err as KubernetesApiError;
    expect([e.message, e.code]).toEqual([
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: ${UNTRUSTED}: ${why}`,
      undefined,
    ]);
  });

  it('a server that does not send its intermediate certificates is trusted once it sends them, or once the certificate-authority-data holds them', async () => {
    for (const [chain, ca] of [
      [ISSUED_BY_INTERMEDIATE_CERT + INTERMEDIATE_CERT, CA_CERT],
      [ISSUED_BY_INTERMEDIATE_CERT, INTERMEDIATE_CERT + CA_CERT],
      [ISSUED_BY_SECOND_INTERMEDIATE_CERT + SECOND_INTERMEDIATE_CERT + INTERMEDIATE_CERT, CA_CERT],
      [ISSUED_BY_SECOND_INTERMEDIATE_CERT + SECOND_INTERMEDIATE_CERT, INTERMEDIATE_CERT + CA_CERT],
    ]) {
      // the server's `{}` is no IPAddress: what matters is that it answered
      const { err } = await getError(chain!, { caData: base64(ca!) });
      expect((err as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
    }
  });

  it('a certificate-authority-data of the intermediate CA alone: under Node, the root it leads to is said to be missing (Deno trusts it)', async () => {
    // Regression: said as fetch's words only, "unable to get issuer certificate (UNABLE_TO_GET_ISSUER_CERT)"
    const { err, url } = await getError(ISSUED_BY_INTERMEDIATE_CERT + INTERMEDIATE_CERT, { caData: base64(INTERMEDIATE_CERT) });
    if (underDeno()) {
      expect((err as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
      return;
    }
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: ${UNTRUSTED}: ` +
        'the certificate authority its chain leads to was found, but not the one that issued that (UNABLE_TO_GET_ISSUER_CERT), and ' +
        'the certificate-authority-data of cluster "prod" in the kubeconfig holds an intermediate certificate authority without the root above it: ' +
        "add the cluster's root CA certificate to it",
    );
  });

  it('expired, or not valid yet: said so where the TLS layer tells it apart (Node), never as a certificate-authority to set', async () => {
    for (const [chain, code, said] of [
      [
        EXPIRED_CERT,
        'CERT_HAS_EXPIRED',
        'has expired (CERT_HAS_EXPIRED), or the clock here is wrong: it must be renewed on the server (no kubeconfig setting makes it valid)',
      ],
      [
        NOT_YET_VALID_CERT,
        'CERT_NOT_YET_VALID',
        'is not valid yet (CERT_NOT_YET_VALID): the clock here, or that of the machine that issued it, is wrong',
      ],
    ] as const) {
      const { err, url } = await getError(chain, { caData: base64(CA_CERT) });
      expect(err, code).toBeInstanceOf(KubernetesApiError);
      const expected = underDeno()
        ? `${UNTRUSTED}: its issuer is not a trusted certificate authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE), and ${NOT_ITS_CA_OR_NO_INTERMEDIATE}${OR_DATES}`
        : `the API server's certificate ${said}`;
      expect((err as Error).message, code).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: ${expected}`,
      );
      // Regression: with no certificate-authority, Deno's words went without the hint about dates
      // (a certificate of a CA the runtime trusts, expired, is said so under Deno too)
      const noCA = await getError(chain, {});
      const withoutCA = underDeno()
        ? `${UNTRUSTED}: its issuer is not a trusted certificate authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE), and ${NO_CA}${OR_DATES}`
        : `the API server's certificate ${said}`;
      expect((noCA.err as Error).message, `${code}, no certificate-authority`).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${noCA.url} was not sent: ${withoutCA}`,
      );
    }
  });

  it('issued for another name: the name asked for and those it holds are said, and tls-server-name set to one of them is what makes it work', async () => {
    const { err, url } = await getError(OTHER_NAME_CERT, { caData: base64(CA_CERT) });
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: the API server's certificate is not issued for 127.0.0.1 ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL of cluster "prod" in the kubeconfig: it names DNS:api.cluster.example; ' +
        "set the cluster's tls-server-name to a name it holds, or its server to an address it names",
    );
    const wrongName = await getError(OTHER_NAME_CERT, { caData: base64(CA_CERT), tlsServerName: 'api.other.example' });
    expect((wrongName.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${wrongName.url} was not sent: the API server's certificate is not issued for api.other.example ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: it names DNS:api.cluster.example; ' +
        'set the tls-server-name to a name it holds',
    );
    // one that names addresses only: a tls-server-name (a host name) would not help
    const addressesOnly = await getError(ISSUED_CERT, { caData: base64(CA_CERT) }, { host: '127.0.0.2' });
    expect((addressesOnly.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${addressesOnly.url} was not sent: the API server's certificate is not issued for 127.0.0.2 ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL of cluster "prod" in the kubeconfig: it names IP Address:127.0.0.1; ' +
        'set its server to an address it names',
    );
    // the server's `{}` is no IPAddress: what matters is that it answered
    const fixed = await getError(OTHER_NAME_CERT, { caData: base64(CA_CERT), tlsServerName: 'api.cluster.example' });
    expect((fixed.err as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
  });

  // Regression: node-fetch keeps neither the host asked for nor the certificate of the failure:
  // said "not issued for (ERR_TLS_CERT_ALTNAME_INVALID)", and "it has no subject alternative name"
  // of a certificate that has some
  it('with client-node 1.x too, the name asked for and those it holds are said', async () => {
    const Config = KubeConfig1 as unknown as typeof KubeConfig;
    const { err, url } = await getError(OTHER_NAME_CERT, { caData: base64(CA_CERT) }, { Config });
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: the API server's certificate is not issued for 127.0.0.1 ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL of cluster "prod" in the kubeconfig: it names DNS:api.cluster.example; ' +
        "set the cluster's tls-server-name to a name it holds, or its server to an address it names",
    );
    const wrongName = await getError(OTHER_NAME_CERT, { caData: base64(CA_CERT), tlsServerName: 'api.other.example' }, { Config });
    expect((wrongName.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${wrongName.url} was not sent: the API server's certificate is not issued for api.other.example ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: it names DNS:api.cluster.example; ' +
        'set the tls-server-name to a name it holds',
    );
    const addressesOnly = await getError(ISSUED_CERT, { caData: base64(CA_CERT) }, { Config, host: '127.0.0.2' });
    expect((addressesOnly.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${addressesOnly.url} was not sent: the API server's certificate is not issued for 127.0.0.2 ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL of cluster "prod" in the kubeconfig: it names IP Address:127.0.0.1; ' +
        'set its server to an address it names',
    );
  });

  it('names addresses only, with a tls-server-name set: told to remove the tls-server-name, which no name it holds could match', async () => {
    // Regression: told to "set the tls-server-name to a name it holds", where it holds none
    const { err, url } = await getError(ISSUED_CERT, { caData: base64(CA_CERT), tlsServerName: 'api.cluster.example' });
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: the API server's certificate is not issued for api.cluster.example ` +
        '(ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: it names IP Address:127.0.0.1, ' +
        "no host name (a tls-server-name is one); remove the tls-server-name, so that it is checked against the server URL's host, " +
        'and set the server to an address it names',
    );
    // the server's `{}` is no IPAddress: what matters is that it answered
    const fixed = await getError(ISSUED_CERT, { caData: base64(CA_CERT) });
    expect((fixed.err as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
  });

  it('with no subject alternative name: said that kubectl takes it for no host, and that it must be issued again with one', async () => {
    // Regression: said to name "no host", with advice no setting could follow ("set its server to an
    // address it names", "set the tls-server-name to a name it holds"); Node and Deno check a host
    // name against its common name (api.cluster.example) where kubectl never does
    const noSan =
      'it has no subject alternative name, the only names kubectl checks a host against (never the common name of its subject): ' +
      'kubectl refuses it whatever the server and tls-server-name; it must be issued again, with the host name or address of the ' +
      'server as a subject alternative name';
    const byAddress = await getError(NO_SAN_CERT, { caData: base64(CA_CERT) });
    expect((byAddress.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${byAddress.url} was not sent: the API server's certificate is not issued for 127.0.0.1 ` +
        `(ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL of cluster "prod" in the kubeconfig: ${noSan}`,
    );
    const byName = await getError(NO_SAN_CERT, { caData: base64(CA_CERT), tlsServerName: 'api.other.example' });
    expect((byName.err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${byName.url} was not sent: the API server's certificate is not issued for api.other.example ` +
        `(ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: ${noSan}`,
    );
    // Regression: a tls-server-name equal to its common name was taken, by Node's and Deno's check
    // of the names (tls.checkServerIdentity), where kubectl refuses it; so it is, by client-node
    // 2.x and 1.x, directly and through each kind of proxy
    const server = await startServerWith(NO_SAN_CERT);
    const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' } });
    const socks = await startSocks5Proxy({});
    try {
      for (const [Config, version] of [
        [KubeConfig, '2.x'],
        [KubeConfig1 as unknown as typeof KubeConfig, '1.x'],
      ] as const) {
        for (const proxyUrl of [undefined, proxy.url, socks.url]) {
          const cluster = {
            server: server.url,
            caData: base64(CA_CERT),
            tlsServerName: 'api.cluster.example',
            ...(proxyUrl && { proxyUrl }),
          };
          const err = await settledGet(cluster, { token: 't' }, Config);
          expect((err as Error).message, `client-node ${version} through ${proxyUrl ?? 'no proxy'}`).toBe(
            `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: the API server's certificate is not issued for api.cluster.example ` +
              `(ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: ${noSan}`,
          );
        }
      }
      // with insecure-skip-tls-verify nothing is checked, its names neither (the server's `{}` is no IPAddress: it answered)
      const unchecked = await settledGet({ server: server.url, skipTLSVerify: true, tlsServerName: 'api.cluster.example' }, { token: 't' });
      expect((unchecked as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
    } finally {
      server.close();
      await proxy.close();
      await socks.close();
    }
  });

  // Regression: Node's check of the names (Deno's too) takes the common name for a host name when
  // the subject alternative names hold no DNS name (URI names only, as a SPIFFE certificate),
  // so such a certificate was taken for its common name, where kubectl takes it for no host
  it('with subject alternative names but no DNS name: not taken for the common name of its subject, by client-node 2.x and 1.x', async () => {
    for (const Config of [KubeConfig, KubeConfig1 as unknown as typeof KubeConfig]) {
      const { err, url } = await getError(
        URI_SAN_ONLY_CERT,
        { caData: base64(URI_SAN_ONLY_CERT), tlsServerName: 'api.cluster.example' },
        { Config },
      );
      expect((err as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: the API server's certificate is not ` +
          'issued for api.cluster.example (ERR_TLS_CERT_ALTNAME_INVALID), the tls-server-name of cluster "prod" in the kubeconfig: ' +
          'it names URI:spiffe://cluster.example/apiserver, neither a host name nor an address, the only names kubectl checks a ' +
          'host against: it must be issued again, with the host name or address of the server as a subject alternative name',
      );
    }
  });

  it("of a host a redirect led to: not said to be the API server's, nor the cluster's certificate-authority to blame", async () => {
    const other = await startServerWith(SELF_SIGNED_CERT);
    const apiServer = createServer({ cert: ISSUED_CERT, key: ISSUED_KEY }, (_req, res) =>
      res.writeHead(302, { location: `${other.url}/login` }).end(),
    );
    await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;
    try {
      const err = await settledGet({ server: url, caData: base64(CA_CERT) }, { token: 't' });
      expect((err as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": fetch failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT) ` +
          `(${other.url}, where the API server at ${url} redirected the request)`,
      );
    } finally {
      other.close();
      apiServer.closeAllConnections();
      apiServer.close();
    }
  });

  it('with @kubernetes/client-node 1.x too', async () => {
    const { err, url } = await getError(SELF_SIGNED_CERT, {}, { Config: KubeConfig1 as unknown as typeof KubeConfig });
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: ${UNTRUSTED}: it is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT), and ${NO_CA}`,
    );
  });
});

describe('a store whose API server has a certificate it does not trust', () => {
  let double: ApiServerDouble;
  let dir: string;
  beforeEach(async () => {
    double = await ApiServerDouble.start({ tls: true }); // tls.ts SERVER_CERT: self-signed, for 127.0.0.1
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-untrusted-'));
  });
  afterEach(async () => {
    await double.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // A certificate does not become trusted by waiting, but the kubeconfig's certificate-authority
  // file is read again for each connection, and the server's certificate may be replaced: the
  // informer keeps listing, as for any other failure on the kubeconfig's TLS material.
  it('waitForSync times out with lastError saying so; the list goes on, and succeeds once the certificate-authority file holds the CA', async () => {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, CA_CERT); // a CA, but not the one that issued the server's certificate
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'prod', server: double.url, caFile }],
      users: [{ name: 'dev', token: 't' }],
      contexts: [{ name: 'x', cluster: 'prod', user: 'dev' }],
      currentContext: 'x',
    });
    const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000, backoff: { initialMs: 50, maxMs: 200 } });
    try {
      // the list fails however long the machine takes to connect; only then is the wait timed
      await until(() => store.lastError !== undefined, 'the list to fail');
      const timedOut = await store.waitForSync({ timeoutMs: 1_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(timedOut).toBeInstanceOf(SyncTimeoutError);
      const said =
        `list ipaddresses.networking.k8s.io: the request to ${double.url} was not sent: the API server's certificate is not trusted: it is self-signed ` +
        '(DEPTH_ZERO_SELF_SIGNED_CERT), and the certificate-authority of cluster "prod" in the kubeconfig is not the certificate authority ' +
        "that issued it: set it to the cluster's CA certificate";
      expect((timedOut as SyncTimeoutError).lastError?.message).toBe(said);
      expect(store.lastError?.message).toBe(said);
      writeFileSync(caFile, SERVER_CERT);
      await store.waitForSync({ timeoutMs: 10_000 });
    } finally {
      store.close();
    }
  });

  it('the command line says it of the context, naming the kubeconfig to correct', async () => {
    const path = join(dir, 'config');
    writeFileSync(
      path,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: "${double.url}"}\n` +
        'users:\n- name: dev\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: prod, user: dev}\ncurrent-context: x\n',
    );
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${double.url} was not sent: ` +
        `${UNTRUSTED}: it is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT), and ${NO_CA}\n`,
    ]);
    expect(double.requests).toEqual([]);
  });
});

describe('an https:// proxy whose certificate is not trusted', () => {
  /** Where the runtime takes more trusted CAs, as the message says it for `ca` (the CA that issued the proxy's certificate). */
  function addIt(ca: string, selfSigned: boolean, Config: typeof KubeConfig): string {
    if (!underDeno()) return `add ${ca} to a PEM file named by the environment variable NODE_EXTRA_CA_CERTS, which Node reads as it starts`;
    const selfSignedToo = selfSigned
      ? '; Deno takes a self-signed certificate as its own CA only when it is not marked a CA (basicConstraints CA:FALSE)'
      : '';
    // client-node 1.x connects with node:https, for which Deno takes neither --cert nor DENO_CERT
    return Config === KubeConfig
      ? `pass ${ca} to Deno with --cert <file>, or name that PEM file in DENO_CERT or NODE_EXTRA_CA_CERTS${selfSignedToo}`
      : `add ${ca} to a PEM file named by the environment variable NODE_EXTRA_CA_CERTS, which Deno reads as it starts ` +
          `(with client-node 1.x, whose connections Deno makes as Node's, neither --cert nor DENO_CERT is used for them)${selfSignedToo}`;
  }

  // Regression: said as "the connection to the proxy at … failed: self-signed certificate
  // (DEPTH_ZERO_SELF_SIGNED_CERT)", with no word of what to do, nor that the cluster's CA is not used for it
  it.each([
    ['self-signed', SELF_SIGNED_CERT, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'it is self-signed', ''],
    [
      'issued by a CA the runtime does not trust',
      ISSUED_CERT,
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'its issuer is not a trusted certificate authority',
      OR_DATES,
    ],
  ])(
    "%s: said to be the proxy's, with where the runtime takes the CA that issued it, by client-node 2.x and 1.x",
    async (_what, cert, code, why, orDates) => {
      const api = await startServerWith(ISSUED_CERT);
      const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' }, tls: { cert, key: ISSUED_KEY } });
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      try {
        // Regression: client-node 1.x's said it as the API server's certificate, and blamed the
        // cluster's certificate-authority-data.
        // Regression: with client-node 1.x, a proxy named by its address was given to TLS as the
        // server name: Node warned (DEP0123), and Deno refused it, said as the API server's failure
        for (const [Config, proxyUrl] of [
          [KubeConfig, proxy.url],
          [KubeConfig1 as unknown as typeof KubeConfig, proxy.url],
          [KubeConfig1 as unknown as typeof KubeConfig, proxy.url.replace('127.0.0.1', 'localhost')],
        ] as const) {
          const err = await settledGet({ server: api.url, caData: base64(CA_CERT), proxyUrl }, { token: 't' }, Config);
          expect(err).toBeInstanceOf(KubernetesApiError);
          const selfSigned = code === 'DEPTH_ZERO_SELF_SIGNED_CERT';
          const ca = `the certificate of the CA that issued it${selfSigned ? ' (for a self-signed certificate, the certificate itself)' : ''}`;
          expect((err as Error).message, proxyUrl).toBe(
            `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${api.url} was not sent: the certificate of the proxy at ${proxyUrl} ` +
              `(proxy-url of cluster "prod" in the kubeconfig) is not trusted: ${why} (${code}); a proxy's certificate is checked against the ` +
              `runtime's trusted CAs only, not with the cluster's certificate-authority, which kubectl checks it with: ${addIt(ca, selfSigned, Config)}${orDates}`,
          );
        }
        expect(proxy.seen).toEqual([]);
        await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
        expect(warnings.map((w) => `${w.name} ${(w as { code?: string }).code}`)).toEqual([]);
      } finally {
        process.off('warning', onWarning);
        api.close();
        await proxy.close();
      }
    },
  );

  // What the message advises, for the runtime the test runs under: the proxy is then trusted, and
  // the request goes through it to the API server. Each case is a process of its own (the runtime
  // reads its CAs as it starts), 3 under Node and 7 under Deno: on a loaded machine, each may take
  // tens of seconds to start.
  it('the CA that issued its certificate, given to the runtime as the message says, makes it trusted', { timeout: 240_000 }, async () => {
    const api = await startServerWith(ISSUED_CERT);
    const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' }, tls: { cert: ISSUED_CERT, key: ISSUED_KEY } });
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-proxy-ca-'));
    const caFile = join(dir, 'proxy-ca.pem');
    writeFileSync(caFile, CA_CERT);
    const root = join(import.meta.dirname, '..');
    const child = join(import.meta.dirname, 'k8s', 'proxy-get-child.ts');
    const run = (args: string[], env: Record<string, string>, version: string[] = []) =>
      new Promise<string>((done, fail) =>
        execFile(
          process.execPath,
          [...args, child, api.url, CA_CERT, proxy.url, ...version],
          { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 120_000 },
          (err, stdout, stderr) => (err === null ? done(stdout) : fail(new Error(`${err.message}\n${stderr}`))),
        ),
      );
    // the server's `{}` is no IPAddress: what matters is that it answered, through the proxy
    const answered = /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /;
    try {
      // Regression: with client-node 1.x, under Deno, a proxy named by its address (as here)
      // failed every request: its agent gave TLS the address as the server name
      const runs = underDeno()
        ? [
            run(['run', '-A', '--cert', caFile], {}),
            run(['run', '-A'], { DENO_CERT: caFile }),
            run(['run', '-A'], { NODE_EXTRA_CA_CERTS: caFile }),
            run(['run', '-A'], { NODE_EXTRA_CA_CERTS: caFile }, ['client-node-1']),
          ]
        : [
            run(['--import', 'tsx'], { NODE_EXTRA_CA_CERTS: caFile }),
            run(['--import', 'tsx'], { NODE_EXTRA_CA_CERTS: caFile }, ['client-node-1']),
          ];
      for (const out of await Promise.all(runs)) expect(out).toMatch(answered);
      // and without it, the same child is refused by the proxy's certificate
      const without = await run(underDeno() ? ['run', '-A'] : ['--import', 'tsx'], {});
      expect(without).toMatch(/ is not trusted: its issuer is not a trusted certificate authority \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\); /);
      if (underDeno()) {
        // with client-node 1.x, Deno's --cert and DENO_CERT are not used for it: the message names NODE_EXTRA_CA_CERTS alone
        for (const [args, env] of [
          [['run', '-A', '--cert', caFile], {}],
          [['run', '-A'], { DENO_CERT: caFile }],
        ] as const) {
          expect(await run([...args], env, ['client-node-1'])).toContain(
            'add the certificate of the CA that issued it to a PEM file named by the environment variable NODE_EXTRA_CA_CERTS, which Deno reads as it starts',
          );
        }
      }
      expect(proxy.seen.filter(({ line }) => line.startsWith('CONNECT ')).length).toBe(runs.length);
    } finally {
      api.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
