// IPAddress records as the allocators read and write them: the two labels upstream writes on
// every record, and how a record's name is read back as an address.
import { parseAddrInto, type Family } from './address.ts';
import { CONTROLLER_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY, type IPAddressRecord } from './store.ts';
import type { IPFamily } from './types.ts';

const LABELS_V4: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv4', [LABEL_MANAGED_BY]: CONTROLLER_NAME });
const LABELS_V6: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv6', [LABEL_MANAGED_BY]: CONTROLLER_NAME });

/** The two labels upstream writes, as one frozen object per family (shared by every record). */
export function labelsFor(family: IPFamily): Readonly<Record<string, string>> {
  return family === 'IPv4' ? LABELS_V4 : LABELS_V6;
}

/** True when the record carries both allocator labels for `family` (upstream's list selector). */
export function hasAllocatorLabels(record: IPAddressRecord, family: IPFamily): boolean {
  return record.labels[LABEL_IP_FAMILY] === family && record.labels[LABEL_MANAGED_BY] === CONTROLLER_NAME;
}

/**
 * Parses a record name the way upstream Used() does (`netip.ParseAddr`, strict) into `out`.
 * Returns 4 or 6, or 0 when the name is not an address. IPv4-mapped text (`::ffff:1.2.3.4`) is
 * an IPv6 address here ([0, 0, 0xffff, v4]): netip keeps it in the IPv6 family, so an IPv4
 * prefix does not contain it.
 */
export function parseRecordName(name: string, out: Uint32Array): 0 | Family {
  let family: Family;
  try {
    family = parseAddrInto(name, out);
  } catch {
    return 0;
  }
  if (family === 4 && name.indexOf(':') >= 0) {
    out[2] = 0xffff;
    return 6;
  }
  return family;
}
