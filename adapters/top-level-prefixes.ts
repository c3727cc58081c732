// The size of a MetaAllocator: Σ size of its ranges that no other range contains (upstream sums
// the ranges for which isNotContained holds), kept up to date as ranges come and go.
//
// Recomputing it with notContained at every change costs O(n²) per change, O(n³) to add n ranges
// one by one. But two prefixes are either disjoint or one contains the other, so the top-level
// ones are disjoint intervals, and sorting by network address puts a prefix right before those it
// contains:
//
//   all   10.0.0.0/8 ─ 10.1.0.0/16 ─ 10.1.2.0/24 ─ 10.2.0.0/16 ─ 11.0.0.0/24   (network, then length)
//   tops  10.0.0.0/8 ──────────────────────────────────────────── 11.0.0.0/24   (network; disjoint)
//
// Adding a prefix is a binary search in `tops` (is it inside one? else the tops it swallows are
// the run of tops whose network falls inside it); deleting a top-level prefix promotes the
// outermost prefixes of the run of `all` inside it. O(log n + what moves) comparisons per change,
// plus the arrays' splices (a memmove).
import type { Prefix } from './geometry.ts';

/** @internal */
export class TopLevelPrefixes {
  /** Every prefix held, sorted by network address, then length (shorter first): a prefix precedes those it contains. */
  private readonly all: Prefix[] = [];
  /** The prefixes no other held prefix contains, sorted by network address: disjoint. */
  private readonly tops: Prefix[] = [];
  /** Σ size of `tops`. */
  private sum = 0n;

  /** Σ size of the prefixes no other prefix held contains. */
  get size(): bigint {
    return this.sum;
  }

  /** Holds `p` (a prefix not held yet, of the family of those held). */
  add(p: Prefix): void {
    this.all.splice(lowerBound(this.all, p.network, p.length), 0, p);
    // the top-level prefix that may contain p: the last whose network is at most p's
    const i = lowerBound(this.tops, p.network, 129); // first top with network > p's
    const before = this.tops[i - 1];
    if (before !== undefined && before.length <= p.length && before.contains(p.version, p.network)) return;
    // p is top-level; the tops inside it, the run whose network is in [network, broadcast], are not any more
    const from = lowerBound(this.tops, p.network, 0);
    const to = lowerBound(this.tops, p.broadcast, 129);
    for (let k = from; k < to; k++) this.sum -= this.tops[k]!.size;
    this.tops.splice(from, to - from, p);
    this.sum += p.size;
  }

  /** Lets go of `p` (held: the same canonical CIDR). */
  delete(p: Prefix): void {
    const at = lowerBound(this.all, p.network, p.length);
    if (this.all[at]?.cidr !== p.cidr) throw new Error(`TopLevelPrefixes: ${p.cidr} is not held`);
    this.all.splice(at, 1);
    const t = lowerBound(this.tops, p.network, 0);
    if (this.tops[t]?.cidr !== p.cidr) return; // inside another: the top-level ones stay
    // p's place goes to the outermost prefixes inside it: in `all` they are the run from `at`
    // whose network is at most p's broadcast, each outermost one before those it contains
    const promoted: Prefix[] = [];
    for (let k = at; k < this.all.length; k++) {
      const q = this.all[k]!;
      if (cmpWords(q.network, p.broadcast) > 0) break;
      const outer = promoted[promoted.length - 1];
      if (outer !== undefined && cmpWords(q.network, outer.broadcast) <= 0) continue; // inside `outer`
      promoted.push(q);
      this.sum += q.size;
    }
    this.tops.splice(t, 1, ...promoted);
    this.sum -= p.size;
  }
}

/**
 * The first index of `list` (sorted by network, then length) whose prefix sorts at or after
 * (network, length): length 0 finds the first prefix of that network, 129 the first after it.
 */
function lowerBound(list: readonly Prefix[], network: Uint32Array, length: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const q = list[mid]!;
    const c = cmpWords(q.network, network) || q.length - length;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** −1, 0, 1 comparing two addresses as u32 words (big-endian: word 0 is the most significant). */
function cmpWords(a: Uint32Array, b: Uint32Array): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}
