// The certificates the TLS tests present are valid from long before any run of them to long after:
// a machine whose clock is behind (or ahead) by years runs those tests as any other does. Only
// EXPIRED_CERT and NOT_YET_VALID_CERT are out of their dates, as their names say, on such a clock too.
// Regression: they were valid from the day they were made, and every TLS test failed on a clock
// behind that day ("certificate is not yet valid").
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as tls from './k8s/tls.ts';
import * as untrusted from './k8s/untrusted-tls.ts';

/** Each exported certificate of the two fixture modules, by its module and name. */
const certificates = Object.entries({ tls, untrusted }).flatMap(([module, exports]) =>
  Object.entries(exports as Record<string, unknown>).flatMap(([name, value]) =>
    typeof value === 'string' && value.startsWith('-----BEGIN CERTIFICATE-----') ? [[`${module}.${name}`, value] as const] : [],
  ),
);

const YEAR_2021 = Date.UTC(2021, 0, 1);
const YEAR_2099 = Date.UTC(2099, 0, 1);

/** A certificate's dates, in ms since the epoch. */
function datesOf(pem: string): { from: number; to: number } {
  const certificate = new X509Certificate(pem);
  return { from: Date.parse(certificate.validFrom), to: Date.parse(certificate.validTo) };
}

describe('the certificates of the TLS tests', () => {
  it('are found', () => {
    expect(certificates.map(([name]) => name)).toEqual(expect.arrayContaining(['tls.SERVER_CERT', 'untrusted.CA_CERT']));
  });

  it.each(certificates.filter(([name]) => name !== 'untrusted.EXPIRED_CERT' && name !== 'untrusted.NOT_YET_VALID_CERT'))(
    '%s is valid from 2020 at the latest to 2099 at least',
    (_name, pem) => {
      const { from, to } = datesOf(pem);
      expect(from).toBeLessThan(YEAR_2021);
      expect(to).toBeGreaterThan(YEAR_2099);
    },
  );

  it('EXPIRED_CERT ended before 2020, NOT_YET_VALID_CERT starts after 2099', () => {
    expect(datesOf(untrusted.EXPIRED_CERT).to).toBeLessThan(Date.UTC(2020, 0, 1));
    expect(datesOf(untrusted.NOT_YET_VALID_CERT).from).toBeGreaterThan(YEAR_2099);
  });
});
