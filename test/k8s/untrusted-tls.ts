// TLS material for tests of an API server whose certificate the client does not trust: a
// certificate authority, an intermediate it signed and a second one that intermediate signed, and
// server certificates for 127.0.0.1 (or another name) issued by them or self-signed, one key for all
// of them (P-256; made with openssl req and openssl ca -startdate/-enddate). Each is valid from
// 2020-01-01 to 2120-01-01, so that a machine whose clock is years behind or ahead takes them too,
// but EXPIRED_CERT and NOT_YET_VALID_CERT, out of their dates on purpose. Test material only: it
// secures nothing, and no private key of a certificate authority is kept.
import { createServer, type Server } from 'node:https';

/** A self-signed certificate authority, "ipallocator test CA (fake)". */
export const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBnjCCAUSgAwIBAgIBATAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAw
MDAwMFowJTEjMCEGA1UEAwwaaXBhbGxvY2F0b3IgdGVzdCBDQSAoZmFrZSkwWTAT
BgcqhkjOPQIBBggqhkjOPQMBBwNCAARRDl3xqlEzXBMUIWgxu36FFzQe9ovCwUBM
pOG9jRKgwXd63uNNYVDFGLQ+4VFu68nSzhJe945b/917wa89TIhto2MwYTAdBgNV
HQ4EFgQUQSN6S0I4pz+Sf1Op9Xj8xqYJH2gwHwYDVR0jBBgwFoAUQSN6S0I4pz+S
f1Op9Xj8xqYJH2gwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYI
KoZIzj0EAwIDSAAwRQIhAImgBz3jMlDMtAXVgvDzsASJ3YKKD61Yp3FnvAj5Zsy6
AiBBg21AUAXAFVreqG7xq6uoMIZYq6CyI/BCRWLc76KLNQ==
-----END CERTIFICATE-----
`;
/** An intermediate certificate authority CA_CERT signed. */
export const INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBqjCCAVGgAwIBAgIBAjAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAw
MDAwMFowMjEwMC4GA1UEAwwnaXBhbGxvY2F0b3IgdGVzdCBpbnRlcm1lZGlhdGUg
Q0EgKGZha2UpMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/HynVR/conKiTWCB
x79irp43CaoiaCFogIylD9jm6V8X+nfBfCh0UbWn0gN0SVTFPPqb7KNf2EXYtvh7
uxyrKKNjMGEwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0O
BBYEFKfzha10YvoSfkk/iYcLwbtFSIw7MB8GA1UdIwQYMBaAFEEjektCOKc/kn9T
qfV4/MamCR9oMAoGCCqGSM49BAMCA0cAMEQCIDAVwhdoQ/t1kv9bR66GZOeR+jsM
XjMcVI6jFM2GbL45AiAcPiP/QOjQcdaohts/wQXMZxCku+LaASIDUifBZVeOng==
-----END CERTIFICATE-----
`;
/** A second intermediate certificate authority, which INTERMEDIATE_CERT signed: CA_CERT is two above it. */
export const SECOND_INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBvzCCAWWgAwIBAgIBAzAKBggqhkjOPQQDAjAyMTAwLgYDVQQDDCdpcGFsbG9j
YXRvciB0ZXN0IGludGVybWVkaWF0ZSBDQSAoZmFrZSkwIBcNMjAwMTAxMDAwMDAw
WhgPMjEyMDAxMDEwMDAwMDBaMDkxNzA1BgNVBAMMLmlwYWxsb2NhdG9yIHRlc3Qg
c2Vjb25kIGludGVybWVkaWF0ZSBDQSAoZmFrZSkwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASKC3STW2Wco79KMRzAp0SgqUZQfYMMUDXCOh09fxaHLqR5GlvmBrWg
o3oQdppBi/C47iMIS6AVEvtIlQ3c44Zuo2MwYTAPBgNVHRMBAf8EBTADAQH/MA4G
A1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQU3kMKKfWFiXIArRJwm9K3ZzRKyVUwHwYD
VR0jBBgwFoAUp/OFrXRi+hJ+ST+JhwvBu0VIjDswCgYIKoZIzj0EAwIDSAAwRQIg
FQXWPoijhM4ggr/U1llb9F4OifUfJuUeQtNI8T1VDz8CIQCD+Ns7rkKm98WUeB1X
VKFkkkRuYaDCS5dnn01wZog5pQ==
-----END CERTIFICATE-----
`;
/** The private key of every server certificate below. */
export const ISSUED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgHY3hi41qXwhCPsLR
7zE1SjJwg9xyOd0UGJTwu2zIDqGhRANCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlyw
BjKfPSFRX3x2uwqNxMnI9kBADALulkcEO71xi09rgNtUbPvQmM9qaTv5
-----END PRIVATE KEY-----
`;
/** A self-signed certificate for 127.0.0.1. */
export const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBfTCCASOgAwIBAgIBBDAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAkxMjcuMC4w
LjEwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMM
CTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAZpPZ5DeS/7/Sa2
NGnig0xUvX7OXLAGMp89IVFffHa7Co3Eycj2QEAMAu6WRwQ7vXGLT2uA21Rs+9CY
z2ppO/mjZDBiMB0GA1UdDgQWBBRhRviWvpvnYMWM1A9WN7xWF/5ORDAfBgNVHSME
GDAWgBRhRviWvpvnYMWM1A9WN7xWF/5ORDAPBgNVHRMBAf8EBTADAQH/MA8GA1Ud
EQQIMAaHBH8AAAEwCgYIKoZIzj0EAwIDSAAwRQIgOiM3DMnBfgXLUQ5vXcSnNcuq
zphXHOjZgZHQgitPMqUCIQCmHxd9LcJ8LINqniMpD3RQSxvT/4OA/kn7w460bBc5
uw==
-----END CERTIFICATE-----
`;
/** A server certificate for 127.0.0.1 (IP subject alternative name) that CA_CERT issued. */
export const ISSUED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkjCCATigAwIBAgIBBTAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAw
MDAwMFowFDESMBAGA1UEAwwJMTI3LjAuMC4xMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEBmk9nkN5L/v9JrY0aeKDTFS9fs5csAYynz0hUV98drsKjcTJyPZAQAwC
7pZHBDu9cYtPa4DbVGz70JjPamk7+aNoMGYwDwYDVR0RBAgwBocEfwAAATATBgNV
HSUEDDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUYUb4lr6b52DFjNQPVje8Vhf+TkQw
HwYDVR0jBBgwFoAUQSN6S0I4pz+Sf1Op9Xj8xqYJH2gwCgYIKoZIzj0EAwIDSAAw
RQIhAOZTyyeTV7UrpW1Zau2yot4mKfyuvqdp4+44ToA0EPkRAiBCtkIOI6SY9pVb
Uick0Jki4cRHpbLJ07QA7s2EMXxiKQ==
-----END CERTIFICATE-----
`;
/** The same for 127.0.0.1, issued by INTERMEDIATE_CERT. */
export const ISSUED_BY_INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBnzCCAUWgAwIBAgIBBjAKBggqhkjOPQQDAjAyMTAwLgYDVQQDDCdpcGFsbG9j
YXRvciB0ZXN0IGludGVybWVkaWF0ZSBDQSAoZmFrZSkwIBcNMjAwMTAxMDAwMDAw
WhgPMjEyMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqG
SM49AgEGCCqGSM49AwEHA0IABAZpPZ5DeS/7/Sa2NGnig0xUvX7OXLAGMp89IVFf
fHa7Co3Eycj2QEAMAu6WRwQ7vXGLT2uA21Rs+9CYz2ppO/mjaDBmMA8GA1UdEQQI
MAaHBH8AAAEwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFGFG+Ja+m+dg
xYzUD1Y3vFYX/k5EMB8GA1UdIwQYMBaAFKfzha10YvoSfkk/iYcLwbtFSIw7MAoG
CCqGSM49BAMCA0gAMEUCIQC82n3jJogOYrYzVO2Lyl0AigzyiyUBR66Ypmta+AKN
iQIgHXHnFeFIRG88CpbQgVQMyH2vgYu85qlmoX3hwxVCjck=
-----END CERTIFICATE-----
`;
/** The same for 127.0.0.1, issued by SECOND_INTERMEDIATE_CERT. */
export const ISSUED_BY_SECOND_INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIBpTCCAUygAwIBAgIBBzAKBggqhkjOPQQDAjA5MTcwNQYDVQQDDC5pcGFsbG9j
YXRvciB0ZXN0IHNlY29uZCBpbnRlcm1lZGlhdGUgQ0EgKGZha2UpMCAXDTIwMDEw
MTAwMDAwMFoYDzIxMjAwMTAxMDAwMDAwWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlyw
BjKfPSFRX3x2uwqNxMnI9kBADALulkcEO71xi09rgNtUbPvQmM9qaTv5o2gwZjAP
BgNVHREECDAGhwR/AAABMBMGA1UdJQQMMAoGCCsGAQUFBwMBMB0GA1UdDgQWBBRh
RviWvpvnYMWM1A9WN7xWF/5ORDAfBgNVHSMEGDAWgBTeQwop9YWJcgCtEnCb0rdn
NErJVTAKBggqhkjOPQQDAgNHADBEAiBSLJYBnCsvJAtsSOOrtYg2xsgqeDp3S3F/
K1H7WgFuoQIgDVk5RFOJrRTB0tjruxFX2sg0fpSLRW20G10gqfvoe70=
-----END CERTIFICATE-----
`;
/** A certificate for 127.0.0.1 that CA_CERT issued, valid in the year 2000 only: it has expired. */
export const EXPIRED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIBCDAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAeFw0wMDAxMDEwMDAwMDBaFw0wMTAxMDEwMDAw
MDBaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABAZpPZ5DeS/7/Sa2NGnig0xUvX7OXLAGMp89IVFffHa7Co3Eycj2QEAMAu6W
RwQ7vXGLT2uA21Rs+9CYz2ppO/mjaDBmMA8GA1UdEQQIMAaHBH8AAAEwEwYDVR0l
BAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFGFG+Ja+m+dgxYzUD1Y3vFYX/k5EMB8G
A1UdIwQYMBaAFEEjektCOKc/kn9TqfV4/MamCR9oMAoGCCqGSM49BAMCA0gAMEUC
IC/F1SuL2PGBSWfegvXmDr4pM7j9xy6mPtJvO8RkvRdIAiEA4yMpg0KZx6Irevuj
s3cEEtxW8CmDFs9Fwnw+B1mJyUE=
-----END CERTIFICATE-----
`;
/** A certificate for 127.0.0.1 that CA_CERT issued, valid in the year 2100 only: not valid yet. */
export const NOT_YET_VALID_CERT = `-----BEGIN CERTIFICATE-----
MIIBlTCCATqgAwIBAgIBCTAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAiGA8yMTAwMDEwMTAwMDAwMFoYDzIxMDEwMTAx
MDAwMDAwWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQGaT2eQ3kv+/0mtjRp4oNMVL1+zlywBjKfPSFRX3x2uwqNxMnI9kBA
DALulkcEO71xi09rgNtUbPvQmM9qaTv5o2gwZjAPBgNVHREECDAGhwR/AAABMBMG
A1UdJQQMMAoGCCsGAQUFBwMBMB0GA1UdDgQWBBRhRviWvpvnYMWM1A9WN7xWF/5O
RDAfBgNVHSMEGDAWgBRBI3pLQjinP5J/U6n1ePzGpgkfaDAKBggqhkjOPQQDAgNJ
ADBGAiEAk+PoBHpGafhm1wJwq7DyQ/O1rX9kGqzyynWhvJcZlyQCIQCZruYDrFW9
IDXb/FUsCUFbOw0Ct+/RkwnYhcJXRziFTQ==
-----END CERTIFICATE-----
`;
/** A certificate that CA_CERT issued for the name api.cluster.example only (no IP address). */
export const OTHER_NAME_CERT = `-----BEGIN CERTIFICATE-----
MIIBoDCCAUegAwIBAgIBCjAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAw
MDAwMFowFDESMBAGA1UEAwwJMTI3LjAuMC4xMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEBmk9nkN5L/v9JrY0aeKDTFS9fs5csAYynz0hUV98drsKjcTJyPZAQAwC
7pZHBDu9cYtPa4DbVGz70JjPamk7+aN3MHUwHgYDVR0RBBcwFYITYXBpLmNsdXN0
ZXIuZXhhbXBsZTATBgNVHSUEDDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUYUb4lr6b
52DFjNQPVje8Vhf+TkQwHwYDVR0jBBgwFoAUQSN6S0I4pz+Sf1Op9Xj8xqYJH2gw
CgYIKoZIzj0EAwIDRwAwRAIgCDJ4vLpIAvjBrQ/QdnWv8DSGs37LVTUGoKg7feEc
lzgCIHvIL0SN209tjxASnp3gwWXTQ0eWcAPKSoGoZMkeC9+4
-----END CERTIFICATE-----
`;

/**
 * A certificate that CA_CERT issued with no subject alternative name: api.cluster.example is its
 * subject's common name only, which kubectl (Go) never checks a host against.
 */
export const NO_SAN_CERT = `-----BEGIN CERTIFICATE-----
MIIBizCCATGgAwIBAgIBCzAKBggqhkjOPQQDAjAlMSMwIQYDVQQDDBppcGFsbG9j
YXRvciB0ZXN0IENBIChmYWtlKTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAw
MDAwMFowHjEcMBoGA1UEAwwTYXBpLmNsdXN0ZXIuZXhhbXBsZTBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABAZpPZ5DeS/7/Sa2NGnig0xUvX7OXLAGMp89IVFffHa7
Co3Eycj2QEAMAu6WRwQ7vXGLT2uA21Rs+9CYz2ppO/mjVzBVMBMGA1UdJQQMMAoG
CCsGAQUFBwMBMB0GA1UdDgQWBBRhRviWvpvnYMWM1A9WN7xWF/5ORDAfBgNVHSME
GDAWgBRBI3pLQjinP5J/U6n1ePzGpgkfaDAKBggqhkjOPQQDAgNIADBFAiEAn6SS
6arcB+nJL8wCOeOeu+mT/eT0mE2JrpTpSA6XLdQCICZW3V3aj/h/3aS8achJ31QR
FMaHvfpWFo2QSXCR9B5O
-----END CERTIFICATE-----
`;

/**
 * A self-signed certificate whose only subject alternative name is a URI
 * (spiffe://cluster.example/apiserver), its subject's common name api.cluster.example: kubectl
 * (Go) checks a host name against DNS names alone, so it takes it for no host. Its own CA in a test.
 */
export const URI_SAN_ONLY_CERT = `-----BEGIN CERTIFICATE-----
MIIBsjCCAVigAwIBAgIBATAKBggqhkjOPQQDAjAeMRwwGgYDVQQDDBNhcGkuY2x1
c3Rlci5leGFtcGxlMCAXDTIwMDEwMTAwMDAwMFoYDzIxMjAwMTAxMDAwMDAwWjAe
MRwwGgYDVQQDDBNhcGkuY2x1c3Rlci5leGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZI
zj0DAQcDQgAEBmk9nkN5L/v9JrY0aeKDTFS9fs5csAYynz0hUV98drsKjcTJyPZA
QAwC7pZHBDu9cYtPa4DbVGz70JjPamk7+aOBhDCBgTAMBgNVHRMBAf8EAjAAMA4G
A1UdDwEB/wQEAwIHgDATBgNVHSUEDDAKBggrBgEFBQcDATAtBgNVHREEJjAkhiJz
cGlmZmU6Ly9jbHVzdGVyLmV4YW1wbGUvYXBpc2VydmVyMB0GA1UdDgQWBBRhRviW
vpvnYMWM1A9WN7xWF/5ORDAKBggqhkjOPQQDAgNIADBFAiEA7sev2qfdnxCGrh6q
8SO1tf2/g7Vw/k4JtRsMxQpQmRICIHYoihAO5RxkIwo5OSDYkM5lDtytz1s7pliV
r8FiIqmn
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
