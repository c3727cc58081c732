// The check of a server certificate's names that kubectl makes, applied to every TLS connection a
// request opens: to the API server (tls-material.ts withKubectlNameCheck) and to an https:// proxy
// (proxy-dispatch.ts).
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';

/**
 * The check of a server certificate's names that kubectl makes (Go's crypto/x509 VerifyHostname,
 * since Go 1.15): Node's tls.checkServerIdentity, but a certificate with no subject alternative
 * name is refused for any host, and one without a DNS name for any host name. Node's check (Deno's
 * too) takes the common name of its subject for a host name then, so a tls-server-name set to that
 * name was trusted where kubectl refuses it ("x509: certificate relies on legacy Common Name field,
 * use SANs instead"; "x509: certificate is not valid for any names"). The error is
 * Node's for a name that does not match (ERR_TLS_CERT_ALTNAME_INVALID, with `host` and `cert`),
 * which tls-material.ts says as the API server's certificate (untrustedCertificate) or the
 * proxy's (misnamedProxy).
 * @internal
 */
export function checkServerIdentityAsKubectl(hostname: string, cert: PeerCertificate): Error | undefined {
  const names = typeof cert.subjectaltname === 'string' ? cert.subjectaltname : '';
  // a host name is checked against the DNS names alone: Node's check takes the common name where
  // there is none (subject alternative names of other kinds only, as a SPIFFE certificate's URI)
  const checkable = isIP(hostname) !== 0 ? names !== '' : /(?:^|, )DNS:/.test(names);
  if (checkable && checkServerIdentity(hostname, cert) === undefined) return undefined;
  // Node's words for a host name, for an address too: tls-material.ts ALTNAME_WORDS reads the host and the names back
  const reason = `Host: ${hostname}. is not in the cert's altnames: ${names}`;
  return Object.assign(new Error(`Hostname/IP does not match certificate's altnames: ${reason}`), {
    code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    reason,
    host: hostname,
    cert,
  });
}
