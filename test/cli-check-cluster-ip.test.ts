// `check` reads a ClusterIP as kube-apiserver's repair loop does (netutils.ParseIPSloppy): a dotted
// quad may carry leading zeros, read as decimal. parseClusterIP tries the strict parser first and
// the sloppy quad only after it; the slow reading below (the quad's octets as numbers, then the
// strict parser) is the oracle it must agree with.
import { describe, expect, it } from 'vitest';
import { parseAddress, parseClusterIP } from '../cli/ranges.ts';

function slowClusterIP(text: string) {
  const quad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad === null) return parseAddress(text);
  const octets = quad.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? parseAddress(octets.join('.')) : undefined;
}

const rows: [name: string, text: string][] = [
  ['canonical IPv4', '10.96.0.10'],
  ['leading zeros, read as decimal', '10.96.0.010'],
  ['all octets padded', '010.096.000.001'],
  ['an octet above 255', '10.96.0.256'],
  ['a padded octet above 255', '10.96.0.0256'],
  ['four digits', '10.96.0.1000'],
  ['three parts', '10.96.1'],
  ['five parts', '10.96.0.1.1'],
  ['an empty octet', '10..0.1'],
  ['hex octet', '0x0a.96.0.1'],
  ['non-ASCII digits', '١٠.٩٦.٠.١'],
  ['trailing newline', '10.96.0.1\n'],
  ['spaces', ' 10.96.0.1'],
  ['canonical IPv6', 'fd00:96::a'],
  ['upper-case IPv6', 'FD00:96::A'],
  ['IPv4-mapped, padded', '::ffff:10.96.0.010'],
  ['IPv4-mapped', '::ffff:10.96.0.10'],
  ['a zone', 'fe80::1%eth0'],
  ['empty', ''],
  ['None', 'None'],
];

describe('parseClusterIP reads as the slow sloppy reading does', () => {
  it.each(rows)('%s', (_, text) => {
    expect(parseClusterIP(text)).toEqual(slowClusterIP(text));
  });
  it('every dotted quad of 1 to 3 digits an octet, padded or not, around the 255 edge', () => {
    for (const octet of ['0', '00', '000', '7', '07', '007', '99', '099', '255', '256', '300', '999']) {
      for (const text of [`${octet}.1.2.3`, `1.${octet}.2.3`, `1.2.3.${octet}`])
        expect(parseClusterIP(text), text).toEqual(slowClusterIP(text));
    }
  });
});
