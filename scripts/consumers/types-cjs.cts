// TypeScript CommonJS (.cts) requiring the ES module package: TypeScript 5.8+ under
// module nodenext types require() of ESM as Node 20.19+ runs it.
import ipallocator = require('ipallocator');

export function rangeSize(cidr: string): bigint {
  const range = new ipallocator.Range(cidr);
  const free = range.free();
  range.destroy();
  return free;
}
