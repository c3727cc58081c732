// TLS material for tests of an API server whose certificate the client does not trust: a
// certificate authority, an intermediate it signed, and server certificates for 127.0.0.1 (or
// another name) issued by them or self-signed, one key for all of them (P-256; made with openssl req -x509,
// openssl x509 -req and openssl ca -startdate/-enddate). Test material only: it secures nothing,
// and no private key of a certificate authority is kept.
import { createServer, type Server } from 'node:https';

/** A self-signed certificate authority, "ipallocator test CA (fake)", valid for 100 years. */
export const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBsjCCAVegAwIBAgIUXj4J5aT1BhkC2gyDL9RlctVjBpswCgYIKoZIzj0EAwIw
JTEjMCEGA1UEAwwaaXBhbGxvY2F0b3IgdGVzdCBDQSAoZmFrZSkwIBcNMjYxMjA3
MDc1MDU0WhgPMjEyNjExMTMwNzUwNTRaMCUxIzAhBgNVBAMMGmlwYWxsb2NhdG9y
IHRlc3QgQ0EgKGZha2UpMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEMZxai8Nr
WFA2o/sUXnE13HQEm4Yp3INyTQCBIPK1Xev27+INEhd0Lo3fDaleTd3+1Mcbk9QH
rI9PhIuzY179zqNjMGEwHQYDVR0OBBYEFGH3YMjcszLG8+H9Do9GsSQXHKRJMB8G
A1UdIwQYMBaAFGH3YMjcszLG8+H9Do9GsSQXHKRJMA8GA1UdEwEB/wQFMAMBAf8w
DgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMCA0kAMEYCIQDn54Gk3xri36Gw9RB5
IlVd9oNYn6MUHpcknZIi6j03ugIhAN0kHWvP0LYMidNmzX6EuIz1GCOwcI3rnzVj
WMV66Kzl
-----END CERTIFICATE-----
`;
/** An intermediate certificate authority CA_CERT signed. */
export const INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBqzCCAVGgAwIBAgIBAjAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yNjEyMDcwNzUwNTRaGA8yMTI2MTExMzA3
NTA1NFowMjEwMC4GA1UEAwwnaXBhbGxvY2F0b3IgdGVzdCBpbnRlcm1lZGlhdGUg
Q0EgKGZha2UpMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOlLr32I9E+Hz4JHK
Bjbe7aApDaWdS2z0Ev1liqloD/2LIUyxciAHrkZ4jRAZCHfBZyXrKdbg3KctgqJC
sN/6QKNjMGEwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0O
BBYEFKIoPNlcpScTWT/u5e67xAs8AWwhMB8GA1UdIwQYMBaAFGH3YMjcszLG8+H9
Do9GsSQXHKRJMAoGCCqGSM49BAMCA0gAMEUCIQCVNJsXhel2Rt1ZhXrXUIJaBqMq
UTCZxos6s4nBKMF0wAIgCuK16kQuuvjU3hGWPZackfPpT3M/PPh/o5Gn22MkcEU=
-----END CERTIFICATE-----
`;
/** The private key of every server certificate below. */
export const ISSUED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgHY3hi41qXwhCPsLR
7zE1SjJwg9xyOd0UGJTwu2zIDqGhRANCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlyw
BjKfPSFRX3x2uwqNxMnI9kBADALulkcEO71xi09rgNtUbPvQmM9qaTv5
-----END PRIVATE KEY-----
`;
/** A self-signed certificate for 127.0.0.1, valid for 100 years. */
export const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUIsFO2gKbN3StpCH+gyNsI7GoUCcwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwNzA3NTQxN1oYDzIxMjYxMTEz
MDc1NDE3WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlywBjKfPSFRX3x2uwqNxMnI9kBA
DALulkcEO71xi09rgNtUbPvQmM9qaTv5o2QwYjAdBgNVHQ4EFgQUYUb4lr6b52DF
jNQPVje8Vhf+TkQwHwYDVR0jBBgwFoAUYUb4lr6b52DFjNQPVje8Vhf+TkQwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IBUD0beIFxHVeilApI5pEKbWrO3b1vGWnf0w2LlT8JMIAiEAxnepgTZgyNuBLFmT
GbPO72ZOfzie62coBtijD2jB3q4=
-----END CERTIFICATE-----
`;
/** A server certificate for 127.0.0.1 (IP subject alternative name) that CA_CERT issued, valid for 100 years. */
export const ISSUED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkTCCATigAwIBAgIBAzAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yNjEyMDcwNzUwNTRaGA8yMTI2MTExMzA3
NTA1NFowFDESMBAGA1UEAwwJMTI3LjAuMC4xMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEBmk9nkN5L/v9JrY0aeKDTFS9fs5csAYynz0hUV98drsKjcTJyPZAQAwC
7pZHBDu9cYtPa4DbVGz70JjPamk7+aNoMGYwDwYDVR0RBAgwBocEfwAAATATBgNV
HSUEDDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUYUb4lr6b52DFjNQPVje8Vhf+TkQw
HwYDVR0jBBgwFoAUYfdgyNyzMsbz4f0Oj0axJBccpEkwCgYIKoZIzj0EAwIDRwAw
RAIgXDZ89Pl23WdgI7Qfqn6NuVef8boC8+lmSjMkQH3F070CIDtPvy4nr+7/HdO/
3D85+qtCgnyDsZp27rnyN1d3tl3Y
-----END CERTIFICATE-----
`;
/** The same for 127.0.0.1, issued by INTERMEDIATE_CERT. */
export const ISSUED_BY_INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBoDCCAUWgAwIBAgIBBTAKBggqhkjOPQQDAjAyMTAwLgYDVQQDDCdpcGFsbG9j
YXRvciB0ZXN0IGludGVybWVkaWF0ZSBDQSAoZmFrZSkwIBcNMjYxMjA3MDc1MDU1
WhgPMjEyNjExMTMwNzUwNTVaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqG
SM49AgEGCCqGSM49AwEHA0IABAZpPZ5DeS/7/Sa2NGnig0xUvX7OXLAGMp89IVFf
fHa7Co3Eycj2QEAMAu6WRwQ7vXGLT2uA21Rs+9CYz2ppO/mjaDBmMA8GA1UdEQQI
MAaHBH8AAAEwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFGFG+Ja+m+dg
xYzUD1Y3vFYX/k5EMB8GA1UdIwQYMBaAFKIoPNlcpScTWT/u5e67xAs8AWwhMAoG
CCqGSM49BAMCA0kAMEYCIQCg4vPwk2pPF3y6glPtmZ7VovjCddzBhPBF3BpbDFM9
uAIhAMYWd3dWi2wyv0IApc+M/Mz9sJIFIdUi61J+zHgoJ7lJ
-----END CERTIFICATE-----
`;
/** A certificate for 127.0.0.1 that CA_CERT issued, valid in the year 2000 only: it has expired. */
export const EXPIRED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIBATAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAeFw0wMDAxMDEwMDAwMDBaFw0wMTAxMDEwMDAw
MDBaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABAZpPZ5DeS/7/Sa2NGnig0xUvX7OXLAGMp89IVFffHa7Co3Eycj2QEAMAu6W
RwQ7vXGLT2uA21Rs+9CYz2ppO/mjaDBmMA8GA1UdEQQIMAaHBH8AAAEwEwYDVR0l
BAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFGFG+Ja+m+dgxYzUD1Y3vFYX/k5EMB8G
A1UdIwQYMBaAFGH3YMjcszLG8+H9Do9GsSQXHKRJMAoGCCqGSM49BAMCA0gAMEUC
IChrCGfVXrlsuxO3fa+x8B6EfvJ4rANlKhBLEKZX0Qw+AiEAynOZJMp2AMBReE8i
Wwu4aWwCSt7GMH+tiLe7y58hliA=
-----END CERTIFICATE-----
`;
/** A certificate for 127.0.0.1 that CA_CERT issued, valid in the year 2100 only: not valid yet. */
export const NOT_YET_VALID_CERT = `-----BEGIN CERTIFICATE-----
MIIBkzCCATqgAwIBAgIBAjAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAiGA8yMTAwMDEwMTAwMDAwMFoYDzIxMDEwMTAx
MDAwMDAwWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlywBjKfPSFRX3x2uwqNxMnI9kBA
DALulkcEO71xi09rgNtUbPvQmM9qaTv5o2gwZjAPBgNVHREECDAGhwR/AAABMBMG
A1UdJQQMMAoGCCsGAQUFBwMBMB0GA1UdDgQWBBRhRviWvpvnYMWM1A9WN7xWF/5O
RDAfBgNVHSMEGDAWgBRh92DI3LMyxvPh/Q6PRrEkFxykSTAKBggqhkjOPQQDAgNH
ADBEAiBtsIo55vbcOVD78mXRrNsV/lTO+YntRMP/eXse1+XhSQIgFrSApH+1rLCm
D439yTd5omcPkrjKsq6Ru2jFp/K4zNo=
-----END CERTIFICATE-----
`;
/** A certificate that CA_CERT issued for the name api.cluster.example only (no IP address). */
export const OTHER_NAME_CERT = `-----BEGIN CERTIFICATE-----
MIIBojCCAUegAwIBAgIBBDAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yNjEyMDcwNzUwNTRaGA8yMTI2MTExMzA3
NTA1NFowFDESMBAGA1UEAwwJMTI3LjAuMC4xMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEBmk9nkN5L/v9JrY0aeKDTFS9fs5csAYynz0hUV98drsKjcTJyPZAQAwC
7pZHBDu9cYtPa4DbVGz70JjPamk7+aN3MHUwHgYDVR0RBBcwFYITYXBpLmNsdXN0
ZXIuZXhhbXBsZTATBgNVHSUEDDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUYUb4lr6b
52DFjNQPVje8Vhf+TkQwHwYDVR0jBBgwFoAUYfdgyNyzMsbz4f0Oj0axJBccpEkw
CgYIKoZIzj0EAwIDSQAwRgIhAMvvmYwW+BGtZ/iOvI3p/yjNJsOPi25KeEE85GB+
aT8tAiEAkBptYv9eCogytyhDIKMk/NiN6JufL4ZV6jG4Akl9Ktw=
-----END CERTIFICATE-----
`;

/**
 * An HTTPS server on `host` (default 127.0.0.1; any 127.x.y.z is the loopback's on Linux) presenting
 * `chain` (PEM, the server's certificate first) that answers every request 200 `{}`.
 */
export async function startServerWith(chain: string, host = '127.0.0.1'): Promise<{ url: string; close: () => void }> {
  const server: Server = createServer({ cert: chain, key: ISSUED_KEY }, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://${host}:${port}`,
    // not waited for: under Deno a connection whose handshake failed can keep close() from finishing
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
