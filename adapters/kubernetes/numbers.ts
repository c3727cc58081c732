// Numbers the Kubernetes side shares: setTimeout's limit (request, watch and waitForSync
// deadlines) and integers as Go's strconv reads them (label selectors' > and <, Retry-After).

/** The longest delay setTimeout takes (2^31 − 1 ms): a longer one fires at once. @internal */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** `text` as Go's strconv.ParseInt(text, 10, 64) reads it (an optional sign, decimal digits, within int64), or undefined. @internal */
export function goInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}
