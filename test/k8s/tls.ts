// TLS material for tests: an API server's self-signed certificate for 127.0.0.1 and its key, a
// client certificate with its key, and a key that belongs to neither (P-256, valid for 100 years;
// made with openssl req -x509 -newkey ec). Test material only: it secures nothing.
import { createServer, type Server } from 'node:https';

export const SERVER_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUHnkfCGeJ0m59rPmGMsPpOc56MDAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwNTA4NTkxOVoYDzIxMjYxMTEx
MDg1OTE5WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATD5agVTj1ZhJdIsHZhSvTWc3RvpcQZm+nx+Aok+D5eIrdPtdVNnuTT
htCy1A8VYNv7CfC8p/FOFVIgr+2iHVDgo2QwYjAdBgNVHQ4EFgQUEJ8/56Fn3BVb
qImbf3z6d5bJk8YwHwYDVR0jBBgwFoAUEJ8/56Fn3BVbqImbf3z6d5bJk8YwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IGcaLQRywtSCWFiyAxYAul4XAvVJwPA/kKjiDfhkmMPIAiEA+Frz9yo+cxdCFREo
BnchJtO+NYaYrEiyGH7NNctb0G0=
-----END CERTIFICATE-----
`;
export const SERVER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJpisvaXgqKWQ7eRu
bT1D5Yt3fKQnpU7zs0earH8XN0ihRANCAATD5agVTj1ZhJdIsHZhSvTWc3RvpcQZ
m+nx+Aok+D5eIrdPtdVNnuTThtCy1A8VYNv7CfC8p/FOFVIgr+2iHVDg
-----END PRIVATE KEY-----
`;
export const CLIENT_CERT = `-----BEGIN CERTIFICATE-----
MIIBeDCCAR+gAwIBAgIUHFNbeNVo431kxE1vaKpoy1Vsus4wCgYIKoZIzj0EAwIw
ETEPMA0GA1UEAwwGdGVzdGVyMCAXDTI2MTIwNTA4NTkyMFoYDzIxMjYxMTExMDg1
OTIwWjARMQ8wDQYDVQQDDAZ0ZXN0ZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AAQ9DuecoaJbF/UEgRbY2taRlfMVfwDydmmCpy4qSyelohsnfcPozAyI7s6yCo+p
Ave8Jo+n8SxgM7y8rssLJtZoo1MwUTAdBgNVHQ4EFgQUB7M2r4kbLSG0Qdc6ZKVN
oOPkB44wHwYDVR0jBBgwFoAUB7M2r4kbLSG0Qdc6ZKVNoOPkB44wDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiA9kORwxtmQBQ5/aXeN7XCt0JOGgJCG
EFRvB1g4ABVG0AIgXrExaYjNgrw1KqC1s6er+F0vitvGNmTZ+ibEm+qjB5Q=
-----END CERTIFICATE-----
`;
export const CLIENT_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkT/YUDiWWDg2VfnW
5jnpp5sgm1QdDHyvkB2M0D0Jml6hRANCAAQ9DuecoaJbF/UEgRbY2taRlfMVfwDy
dmmCpy4qSyelohsnfcPozAyI7s6yCo+pAve8Jo+n8SxgM7y8rssLJtZo
-----END PRIVATE KEY-----
`;
/** A private key that is not CLIENT_CERT's. */
export const OTHER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvY0hitQWD1hZiNVB
Y0hXgeVSu55hXwAeWl9YfPF0qb6hRANCAATD4Bdgj97eECh34HnqI2C0XPyTPnc+
u6hkUlBKZyE9o9lhnzbWfEJoGotJy5M1bZOX1dnsUl+jwVfp+Qf+3El4
-----END PRIVATE KEY-----
`;

/** base64, as a kubeconfig's *-data fields hold their PEM text. */
export function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** An HTTPS server on 127.0.0.1 with SERVER_CERT that answers every request 200 `{}`; its URL and how to close it. */
export async function startTlsServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer({ cert: SERVER_CERT, key: SERVER_KEY }, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    // not waited for: under Deno a connection whose handshake failed can keep close() from finishing
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
