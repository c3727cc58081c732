// TLS material for tests: an API server's self-signed certificate for 127.0.0.1 and its key, a
// client certificate with its key, a key that belongs to neither, a certificate named by its common
// name only, and one for ::1 (P-256; self-signed with openssl ca -selfsign -startdate/-enddate, valid from
// 2020-01-01 to 2120-01-01, so that a machine whose clock is years behind or ahead takes them
// too). Test material only: it secures nothing.
import { createServer, type Server } from 'node:https';

export const SERVER_CERT = `-----BEGIN CERTIFICATE-----
MIIBfTCCASOgAwIBAgIBDDAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAkxMjcuMC4w
LjEwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMM
CTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABMPlqBVOPVmEl0iw
dmFK9NZzdG+lxBmb6fH4CiT4Pl4it0+11U2e5NOG0LLUDxVg2/sJ8Lyn8U4VUiCv
7aIdUOCjZDBiMB0GA1UdDgQWBBQQnz/noWfcFVuoiZt/fPp3lsmTxjAfBgNVHSME
GDAWgBQQnz/noWfcFVuoiZt/fPp3lsmTxjAPBgNVHRMBAf8EBTADAQH/MA8GA1Ud
EQQIMAaHBH8AAAEwCgYIKoZIzj0EAwIDSAAwRQIgZRdiCe/8SGMYcoAKvpENfnKM
m1RLFvOs0VjXcUhuT4ECIQCwggm3OnpLXxW8kzQM2Ai6zN9SkOk13EVc7PdCM7ry
QA==
-----END CERTIFICATE-----
`;
export const SERVER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJpisvaXgqKWQ7eRu
bT1D5Yt3fKQnpU7zs0earH8XN0ihRANCAATD5agVTj1ZhJdIsHZhSvTWc3RvpcQZ
m+nx+Aok+D5eIrdPtdVNnuTThtCy1A8VYNv7CfC8p/FOFVIgr+2iHVDg
-----END PRIVATE KEY-----
`;
export const CLIENT_CERT = `-----BEGIN CERTIFICATE-----
MIIBZjCCAQygAwIBAgIBDTAKBggqhkjOPQQDAjARMQ8wDQYDVQQDDAZ0ZXN0ZXIw
IBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMBExDzANBgNVBAMMBnRl
c3RlcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABD0O55yholsX9QSBFtja1pGV
8xV/APJ2aYKnLipLJ6WiGyd9w+jMDIjuzrIKj6kC97wmj6fxLGAzvLyuywsm1mij
UzBRMB0GA1UdDgQWBBQHszaviRstIbRB1zpkpU2g4+QHjjAfBgNVHSMEGDAWgBQH
szaviRstIbRB1zpkpU2g4+QHjjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMC
A0gAMEUCIHUFmhgEkhjG8v+4QZvc9VsPQNAOUIkL8PXck6H4wfGMAiEAgqFrcquw
n/ATpkw3QRtuOqat1exUtOX8oE8B85s2bUw=
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

/**
 * A self-signed certificate whose only name is its subject's common name, localhost: no subject
 * alternative name, which kubectl (Go) needs, where Node's and Deno's checks take the common name.
 * Not marked a CA (basicConstraints CA:FALSE), so that Deno takes it as its own authority. Key:
 * SERVER_KEY.
 */
export const CN_ONLY_CERT = `-----BEGIN CERTIFICATE-----
MIIBbTCCAROgAwIBAgIBDjAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAlsb2NhbGhv
c3QwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMM
CWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABMPlqBVOPVmEl0iw
dmFK9NZzdG+lxBmb6fH4CiT4Pl4it0+11U2e5NOG0LLUDxVg2/sJ8Lyn8U4VUiCv
7aIdUOCjVDBSMAwGA1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQM
MAoGCCsGAQUFBwMBMB0GA1UdDgQWBBQQnz/noWfcFVuoiZt/fPp3lsmTxjAKBggq
hkjOPQQDAgNIADBFAiEAhYwCNBerlWfMgUKqmQ30D14Zlwm1YQsrZIEHw2gGTZMC
IFZQc1GHsfeNWE5mvGA5jzkq6bfyZpRp+k3B0C3M7zjU
-----END CERTIFICATE-----
`;
/**
 * A self-signed certificate for ::1 (an IP subject alternative name), not marked a CA, as
 * CN_ONLY_CERT. Key: SERVER_KEY.
 */
export const IPV6_LOOPBACK_CERT = `-----BEGIN CERTIFICATE-----
MIIBfjCCASSgAwIBAgIBDzAKBggqhkjOPQQDAjAOMQwwCgYDVQQDDAM6OjEwIBcN
MjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMA4xDDAKBgNVBAMMAzo6MTBZ
MBMGByqGSM49AgEGCCqGSM49AwEHA0IABMPlqBVOPVmEl0iwdmFK9NZzdG+lxBmb
6fH4CiT4Pl4it0+11U2e5NOG0LLUDxVg2/sJ8Lyn8U4VUiCv7aIdUOCjcTBvMAwG
A1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsGAQUFBwMB
MB0GA1UdDgQWBBQQnz/noWfcFVuoiZt/fPp3lsmTxjAbBgNVHREEFDAShxAAAAAA
AAAAAAAAAAAAAAABMAoGCCqGSM49BAMCA0gAMEUCIQCMexekcqbeYkIopT2lcLAl
4iByvhw0fOkgRJHM1yG9dgIgKYf0zsbIel1cLO6sUMU6HymwxZ1ohOgFvtSQs5Ft
jC4=
-----END CERTIFICATE-----
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
