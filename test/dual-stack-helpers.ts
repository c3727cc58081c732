// Helpers shared by the DualStackAllocator test files.
import { Allocator } from '../adapters/allocator.ts';
import { DualStackAllocator, type DualStackIPs } from '../adapters/dual-stack.ts';

/** The four addresses pairWithTwo allocates. */
const FOUR = ['10.0.0.1', 'fd00::1', '10.0.0.2', 'fd00::2'];

/**
 * A pair over two Allocators of their own (10.0.0.0/24, fd00::/120) holding two Services: `a`
 * allocated IPv4 first (10.0.0.1, fd00::1), `b` IPv6 first (fd00::2, 10.0.0.2), so that an answer
 * in either order can be released. `held()`: all four addresses are still allocated; `freed()`:
 * none is.
 */
export async function pairWithTwo(): Promise<{
  ds: DualStackAllocator;
  a: DualStackIPs;
  b: DualStackIPs;
  held: () => Promise<boolean>;
  freed: () => Promise<boolean>;
}> {
  const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
  const a = await ds.allocate(['10.0.0.1', 'fd00::1']);
  const b = await ds.allocate(['fd00::2', '10.0.0.2']);
  const holding = () => Promise.all(FOUR.map((ip) => ds.allocator(ip.includes(':') ? 'IPv6' : 'IPv4').has(ip)));
  const held = async () => (await holding()).every(Boolean);
  const freed = async () => !(await holding()).some(Boolean);
  return { ds, a, b, held, freed };
}
