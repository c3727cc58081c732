// DualStackAllocator: the ClusterIPs of one Service, one per family, in one call — both or
// neither. Upstream's Service REST storage does the same with its per-family allocators
// (allocate every family, release what was taken when a later family fails).
//
//   allocate(['2001:db8::17', '10.0.0.5'], owner)   the caller's order (Service.spec.ipFamilies)
//     0. both checked as allocate would (ready, in range): one refused fails here, nothing written
//     1. ipv4.allocate(10.0.0.5, owner)             IPv4 taken first, whatever the caller's order
//     2. ipv6.allocate(2001:db8::17, owner) → ErrAllocated
//     3. ipv4.release(10.0.0.5)                     roll back, then rethrow ErrAllocated unchanged
//   on success: ips ['2001:db8::17', '10.0.0.5'], families ['IPv6', 'IPv4']: the caller's order
//
// One order for every call (ipv4First): two calls for the same addresses in opposite orders would
// each take one family and fail on the other's, and both would lose.
//
// The two allocators may be any IPAllocator: two MetaAllocators (ranges from ServiceCIDRs), two
// Allocators, or a mix; they may share a store or not. The pair owns them: destroy() destroys
// both. Addresses come back in canonical text (as the allocators write record names), whatever
// spelling the caller gave.
import { canonicalAddr } from './address.ts';
import { isDryRun } from './dry-run.ts';
import { allocateAddresses, BOTH, canonicalAnswer, checkFamilies, checkNotFamilies, releaseAddresses } from './dual-stack-arguments.ts';
import { ErrDestroyed, InvalidArgumentError, IPAllocatorError, isDestroyed, isNotFound, nameErrorClasses } from './errors.ts';
import { checkIPFamily, optionsObject, readMember, unboundCall } from './input.ts';
import { quoteInput } from './quote.ts';
import { isRangeView, Range } from './range.ts';
import { checkParentRef } from './records.ts';
import {
  CHECK_ALLOCATE,
  CHECK_ALLOCATE_NEXT,
  type IPAddressRecord,
  recordAnswer,
  STOP_SEARCHES,
  type Store,
  type ParentRef,
} from './store.ts';
import { type IPAllocator, type IPFamily, readOnlyFields } from './types.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';

/**
 * The addresses of one Service, as allocate and allocateNext answer them: frozen (its `ips` and
 * `families` too), as a store's records are, so that whoever it is handed on to reads what the
 * pair answered; copy it to change it (`{ ...answer }`, `[...answer.ips]`).
 */
export interface DualStackIPs {
  readonly IPv4?: string | undefined;
  readonly IPv6?: string | undefined;
  /** The addresses in family order (what Service.spec.clusterIPs holds). */
  readonly ips: readonly string[];
  /** The families in that order (Service.spec.ipFamilies). */
  readonly families: readonly IPFamily[];
}

export interface DualStackOptions {
  /**
   * Called when rolling back the first family fails (the address stays taken until released or
   * garbage-collected by a repair loop): when its release throws, or when the address is still
   * allocated after the release — with a StillAllocatedError, whose `cause` is the store's delete
   * error when the allocator told it (an allocator's release ignores the store's delete errors,
   * as upstream's Release does, and tells them to the `onDeleteError` the rollback gives it; the
   * rollback asks `has` afterwards; when that check fails after a failed delete, whose answer may
   * have been lost after it took effect, the address is reported as one that may still be
   * allocated, the check's error as its `checkError`) — or when an allocator of your own answered allocateNext with
   * something that is no address of its family: that answer is not released (it names no address
   * to release), and is reported with an IPAllocatorError as `ip` (the text it answered, or a
   * description such as `42 (number)` when it answered no text). The original error is rethrown
   * regardless, and an error thrown by this callback is ignored (the rollback goes on). Default:
   * ignore.
   *
   * An address another caller took once the release had given it back is not reported: the
   * rollback did give it back, it is that caller's now, and releasing it would free an address in
   * use. The rollback tells it by the record of the allocator's `store`, as the store answers
   * before the release and after it (not its cache, which may lag): another uid, or, for a store
   * without uids, another owner. When it cannot tell — an allocator of your own without a
   * `store`, a read that fails — the address is reported.
   */
  onRollbackError?: ((error: unknown, ip: string, family: IPFamily) => void) | undefined;
}

/**
 * What a DualStackAllocator gives onRollbackError when an address its rollback released is still
 * allocated afterwards (the allocator's has() says so) by the record the call made: its delete
 * failed — `cause` is then the store's error, which every allocator of this package tells the
 * rollback (release's onDeleteError) — or a finalizer holds its record. (An address another
 * caller took since is not reported; when the records cannot tell — no uids and the same owner,
 * or a record that could not be read — the message names that too.) The address stays taken
 * until released, or removed by a repair loop (`reconcile`).
 *
 * When the delete failed and the has() check failed too, nothing tells whether the address is
 * still allocated (a delete whose answer was lost, a timeout, may have taken effect): the message
 * says it `may still be allocated`, `cause` is the delete's error and `checkError` the check's.
 */
export class StillAllocatedError extends IPAllocatorError {
  static override readonly code = 'ERR_STILL_ALLOCATED' as const;
  declare readonly code: 'ERR_STILL_ALLOCATED';
  /** The address, as its allocator answered it. */
  readonly ip: string;
  readonly family: IPFamily;
  /**
   * The error of the has() check that followed a failed delete, when that check failed too: the
   * address may or may not still be allocated. Undefined when the check answered.
   */
  readonly checkError: unknown;
  /**
   * `deleteFailed`: the store's error, when the allocator told one. `record`, what the records
   * read before and after the release say: 'made' — still the one the call made (the same uid),
   * so no other caller took the address; 'same owner' — without uids, one of the same owner,
   * which may be another caller's; 'unread' (default) — they could not be compared.
   * `checkFailed`: the error of the has() check after a failed delete, when it failed (with
   * `deleteFailed` only): the address may still be allocated, and `record` is not read.
   */
  constructor(
    ip: string,
    family: IPFamily,
    deleteFailed?: { error: unknown },
    record: 'made' | 'same owner' | 'unread' = 'unread',
    checkFailed?: { error: unknown },
  ) {
    super(
      deleteFailed !== undefined && checkFailed !== undefined
        ? `${ip} may still be allocated after the rollback released it: its delete failed, and checking failed too (${errorText(checkFailed.error)}; the delete's error is this error's cause, the check's its checkError)`
        : deleteFailed !== undefined
          ? `${ip} is still allocated after the rollback released it: its delete failed (the store's error is this error's cause)`
          : record === 'made'
            ? `${ip} is still allocated after the rollback released it: its record is still the one the call made (a finalizer holds it, or the delete left it without an error)`
            : `${ip} is still allocated after the rollback released it (its delete failed, a finalizer holds its record, or another caller${record === 'same owner' ? ' with the same owner' : ''} took it since)`,
    );
    this.ip = ip;
    this.family = family;
    this.checkError = deleteFailed === undefined ? undefined : checkFailed?.error;
    // as Error's own `cause` option makes it: not enumerable (toJSON writes it all the same, last)
    if (deleteFailed !== undefined) Object.defineProperty(this, 'cause', { value: deleteFailed.error, writable: true, configurable: true });
  }
}
nameErrorClasses({ StillAllocatedError });

/** An error's message, or any other thrown value as a message quotes it. */
function errorText(e: unknown): string {
  try {
    if (e instanceof Error) return String(e.message);
  } catch {
    // a Proxy whose traps throw: described below, as a value
  }
  return quoteInput(e);
}

/**
 * The allocators a pair owns, from its construction until it destroys them (destroyPair): a
 * second pair over one of them is refused, since destroying either pair would destroy the
 * allocators under the other. Known by object identity, the one thing that tells two objects
 * apart: another object that forwards to an owned allocator — a Proxy of it, Object.create(it),
 * a wrapper of your own — is another allocator here. Nothing sound tells them apart: a Proxy's
 * target cannot be observed from JavaScript, and an allocator's own methods, called through the
 * Proxy, see the Proxy as `this`.
 */
const owned = new WeakSet<object>();

/**
 * The ClusterIPs of one Service, one per family, in one call — both or neither: what a later
 * family fails to get, the earlier ones give back (upstream's Service REST storage does the
 * same). Over any two IPAllocators of the two families (Allocator, MetaAllocator, …), which it
 * owns: `destroy()` destroys both.
 */
export class DualStackAllocator {
  readonly ipv4: IPAllocator;
  readonly ipv6: IPAllocator;
  private readonly onRollbackError: DualStackOptions['onRollbackError'];
  /**
   * Destroyed, and the calls in flight (allocate, allocateNext, release), counted from their start
   * to their end (callEnded): destroy() destroys the allocators only once no call needs them. A
   * destroy() meanwhile ends an allocation with ErrDestroyed after the addresses it took are given
   * back (giveBackAndFail), and lets a release finish. Counted in each method rather than by a
   * wrapper that runs the call: an async wrapper costs a promise and a turn per call.
   *
   * Held in an object of its own, not in fields of this one, so that an object made with
   * Object.create(pair) (a wrapper overriding one method) and the pair under it share them, as an
   * Allocator and its wrapper do: a destroy() through either ends the other's calls, and does not
   * destroy the allocators under a call the other has in flight.
   */
  private readonly state = { destroyed: false, inFlight: 0 };

  /**
   * The pair of `ipv4` and `ipv6` (any IPAllocator of that family: Allocator, MetaAllocator, …),
   * which it owns from now on: destroy() destroys both. Throws InvalidArgumentError when an
   * argument is no object (each is named for what it is, even when both are alike) or is a
   * Range or a Range's dry run (synchronous, with no store: not an IPAllocator), when one lacks
   * a method the pair calls (allocate, allocateNext, release, has, used, destroy: the error
   * names those missing), when an allocator is of the other family (or one object is given as
   * both), when one has been destroyed (its error says which family, and its `cause` is the
   * allocator's ErrDestroyed), when one is a dry run and the other is not, when another
   * DualStackAllocator owns one of them (until that pair is destroyed, which destroys them too),
   * or when an option has the wrong type; a refused pair owns neither allocator. Ownership is by
   * object identity: a Proxy of an owned allocator, or another object of your own that forwards
   * to it, is not recognised (a Proxy's target cannot
   * be observed), so a second pair over it is made, and destroying that pair destroys the
   * allocator under the first: give each pair allocators of its own.
   *
   * The dry runs of two allocators (`v4.dryRun()`, `v6.dryRun()`) make a pair that checks both
   * families as a call would and persists nothing, as upstream's Service REST storage dry-runs
   * each family's allocator; when a later family fails, there is nothing to give back and
   * nothing is reported to onRollbackError (the address the first family checked may be another
   * Service's: a dry run does not ask); destroying that pair destroys nothing (a dry run's
   * destroy() does nothing), and it owns the views, not the allocators under them. A dry run is
   * known by a mark (isDryRun) that the dry runs of another copy of this package, and a Proxy of
   * one, carry too: a pair of one of those and an allocator is refused as well.
   *
   * "Destroyed" is judged through the IPAllocator interface, by asking `used()`: every allocator
   * of this package (Allocator, MetaAllocator, ReferenceAllocator, their dry runs, which answer
   * for the allocator they view) throws ErrDestroyed from it once destroyed, and it only reads a
   * counter. An allocator of your own is judged the same way: one whose `used()` throws anything
   * but ErrDestroyed (of this copy of the package or another, known by its `code`), or answers
   * although it has been destroyed, cannot be judged and is taken; its own calls then say what
   * they say. Each is asked once, `ipv4` first: a `used()` of yours that destroys the other
   * allocator itself is not seen (one that destroys the pair owning it is: that allocator was
   * owned, and is refused as such).
   */
  constructor(ipv4: IPAllocator, ipv6: IPAllocator, options: DualStackOptions = {}) {
    // Each argument's kind first: nothing given, or text, twice is not "the same allocator".
    checkKind(ipv4, 'IPv4', 'first');
    checkKind(ipv6, 'IPv6', 'second');
    // Before the families: the same object twice is that mistake, not a family mismatch (and one
    // whose ipFamily changes between reads would pass both checks, then fail the other family's
    // every call after taking an address).
    if (ipv4 === ipv6) throw new InvalidArgumentError('DualStackAllocator: the same allocator was given for both families');
    checkFamily(ipv4, 'IPv4', 'first');
    checkFamily(ipv6, 'IPv6', 'second');
    // Ownership is asked before the caller's code runs (an option's getter, an allocator's used()),
    // and again after it: code of yours that destroys the pair owning one of them meanwhile, or
    // builds another pair over one, cannot make this pair take it.
    checkUnowned(ipv4, ipv6);
    const { onRollbackError } = optionsObject(options, 'DualStackAllocator', { onRollbackError: true });
    if (onRollbackError !== undefined && typeof onRollbackError !== 'function') {
      throw new InvalidArgumentError(`options.onRollbackError must be a function, got ${quoteInput(onRollbackError)}`);
    }
    checkLive(ipv4, 'IPv4');
    checkLive(ipv6, 'IPv6');
    this.dry = bothDryOrNeither(ipv4, ipv6);
    // checkFamily let only objects through; nothing of the caller's runs from here to owned.add
    checkUnowned(ipv4, ipv6);
    owned.add(ipv4);
    owned.add(ipv6);
    this.ipv4 = ipv4;
    this.ipv6 = ipv6;
    // an allocator assigned here would be used, and destroyed, unowned
    readOnlyFields(this, 'ipv4', 'ipv6');
    this.onRollbackError = onRollbackError;
  }

  /**
   * Both allocators are dry runs (isDryRun, asked once at construction): a rollback has nothing
   * to give back, and its has() would answer for the allocator a view looks at.
   */
  private readonly dry: boolean;

  /** The allocator of one family. ErrDestroyed after destroy(). */
  allocator(this: object, family: IPFamily): IPAllocator;
  allocator(this: DualStackAllocator, family: IPFamily): IPAllocator {
    checkThis(this, 'allocator');
    if (this.destroyed) throw new ErrDestroyed('DualStackAllocator');
    checkIPFamily(family);
    return family === 'IPv4' ? this.ipv4 : this.ipv6;
  }

  /**
   * One free address per family, answered in `families` order (default IPv4 then IPv6; one family
   * for a single-stack Service; a family or an array given as the owner is refused with
   * InvalidArgumentError saying so). The families are taken IPv4 first whatever that order, so two
   * calls in opposite orders for the last free addresses do not both fail: one gets them, the
   * other ErrFull. If a family fails, the addresses already taken are released and that family's
   * error is rethrown unchanged (ErrFull, ErrNotReady, a store error, …; when both would fail,
   * IPv4's, as the other is not tried; an ErrDestroyed once destroy() came meanwhile is the pair's,
   * since its destroy() ends the search). Before anything is created, each Allocator and
   * ReferenceAllocator is checked as its allocateNext checks itself first (destroyed, ready), and
   * each MetaAllocator for being destroyed, so one that cannot allocate fails the call with that
   * error and the store sees no create; a full range is not checked first (another caller may
   * free an address meanwhile), nor a MetaAllocator's ranges. The addresses come back in canonical text (a rollback releases an address, and asks has(), in the spelling
   * its allocator answered); an allocator of your own that answers anything but an address
   * of its family fails the call with IPAllocatorError, after the rollback of the families before
   * it; its answer is not released but reported to onRollbackError.
   */
  allocateNext(this: object, given?: ParentRef | null, families?: readonly IPFamily[]): Promise<DualStackIPs>;
  async allocateNext(this: DualStackAllocator, given?: ParentRef | null, families: readonly IPFamily[] = BOTH): Promise<DualStackIPs> {
    checkThis(this, 'allocateNext');
    if (this.destroyed) throw new ErrDestroyed('DualStackAllocator');
    checkNotFamilies(given);
    const order = checkFamilies(families); // read once: the families allocated are those reported
    const owner = checkParentRef(given) ?? undefined; // read once: both families get the same owner
    const taking = ipv4First(order, order);
    const allocators = taking.map((f) => this.allocator(f));
    // each allocator as its allocateNext would check itself before its first create: one that
    // cannot allocate (destroyed, not ready) fails the call before the other's record is created
    for (const allocator of allocators) checkAllocateNext(allocator);
    this.state.inFlight++;
    try {
      const ips: string[] = [];
      // What each allocator answered, as it spelled it: a rollback gives an address back in the
      // allocator's own words (one of your own may know it only so), the caller gets canonical text.
      const answered: string[] = [];
      for (let i = 0; i < allocators.length; i++) {
        let answer: unknown;
        try {
          this.live(); // destroyed meanwhile: the call ends, and what it took goes back
          answer = await allocators[i]!.allocateNext(owner);
        } catch (e) {
          await this.rollback(answered, taking, allocators);
          // its search stopped by destroy() (stopSearches): the pair's end, not the allocator's
          throw this.destroyed && isDestroyed(e) ? new ErrDestroyed('DualStackAllocator') : e;
        }
        const ip = canonicalAnswer(answer, taking[i]!);
        if (ip === null) {
          // An allocator of your own broke its contract: the pair gives back what it took before.
          // The answer itself is no address of the family, so there is nothing to release
          // (releasing text that is not an address would hand the allocator more garbage, or
          // another family's address): what the allocator took, if anything, is reported.
          await this.rollback(answered, taking, allocators);
          const what = `the ${taking[i]} allocator's allocateNext answered ${quoteInput(answer)}, not an ${taking[i]} address`;
          this.reportRollbackError(
            new IPAllocatorError(`${what}: not released, so whatever that allocator took stays taken`),
            typeof answer === 'string' ? answer : quoteInput(answer),
            taking[i]!,
          );
          throw new IPAllocatorError(`DualStackAllocator: ${what}`);
        }
        ips.push(ip);
        answered.push(answer as string); // canonicalAnswer took only text
      }
      if (this.destroyed) await this.giveBackAndFail(answered, taking, allocators);
      return result(ipv4First(order, ips), order); // back in the caller's order
    } finally {
      this.callEnded();
    }
  }

  /**
   * Reserves the given addresses (at most one per family) and returns them in the given order, in
   * canonical text (`::FFFF:10.0.0.2` → `10.0.0.2`, `2001:DB8:0:0:0:0:0:A` → `2001:db8::a`). The
   * IPv4 address is reserved first whatever the given order, so two calls for the same addresses
   * in opposite orders do not both fail: one gets both, the other ErrAllocated. Before anything
   * is reserved, each address is checked as its allocator's allocate checks it before writing
   * (every allocator of this package: ready, and in its range — any of a MetaAllocator's), so an
   * address either one refuses (ErrNotInRange, ErrMismatchedNetwork, ErrNotReady; malformed
   * text: InvalidAddressError) fails the call with that error, IPv4's first, and the store sees
   * no create. If a reservation fails (ErrAllocated, a store error, or any error of an allocator
   * of your own, which is not checked first), the ones already reserved are released and its
   * error is rethrown unchanged (when both would fail there, IPv4's, as the other is not tried;
   * a refused check, of either family, comes before any reservation). An
   * array with an enumerable field besides its addresses (`Object.assign([a], { IPv6: b })`,
   * unless the field is undefined) is refused with InvalidArgumentError naming it, as release
   * refuses it: `b` would otherwise be ignored in silence.
   */
  allocate(this: object, ips: readonly string[], given?: ParentRef | null): Promise<DualStackIPs>;
  async allocate(this: DualStackAllocator, ips: readonly string[], given?: ParentRef | null): Promise<DualStackIPs> {
    checkThis(this, 'allocate');
    if (this.destroyed) throw new ErrDestroyed('DualStackAllocator');
    const { canonical, families } = allocateAddresses(ips);
    const owner = checkParentRef(given) ?? undefined; // read once: both families get the same owner
    const taking = ipv4First(families, families);
    const addresses = ipv4First(families, canonical);
    const allocators = taking.map((f) => this.allocator(f));
    // each address as its allocator's allocate would check it before its store call: one that
    // either refuses fails the call before the other's record is created (and then deleted)
    for (let i = 0; i < addresses.length; i++) checkAllocate(allocators[i]!, addresses[i]!);
    this.state.inFlight++;
    try {
      const done: string[] = [];
      for (let i = 0; i < addresses.length; i++) {
        try {
          this.live(); // destroyed meanwhile: the call ends, and what it took goes back
          await allocators[i]!.allocate(addresses[i]!, owner);
        } catch (e) {
          await this.rollback(done, taking, allocators);
          throw e;
        }
        done.push(addresses[i]!);
      }
      if (this.destroyed) await this.giveBackAndFail(done, taking, allocators);
      return result(canonical, families);
    } finally {
      this.callEnded();
    }
  }

  /** A call ends: the last one destroys the pair when destroy() came meanwhile. */
  private callEnded(): void {
    // a store's unsubscribe that throws has no caller to tell here: the call ends as it did
    if (--this.state.inFlight === 0 && this.destroyed) this.destroyPair();
  }

  private get destroyed(): boolean {
    return this.state.destroyed;
  }

  private live(): void {
    if (this.destroyed) throw new ErrDestroyed('DualStackAllocator');
  }

  /** An allocation destroyed during its last step gives back what it took, and ends with ErrDestroyed. */
  private async giveBackAndFail(ips: readonly string[], families: readonly IPFamily[], allocators: readonly IPAllocator[]): Promise<never> {
    await this.rollback(ips, families, allocators);
    throw new ErrDestroyed('DualStackAllocator');
  }

  /**
   * Releases every address (an array, or what allocate/allocateNext returned), each through its
   * family's allocator, in canonical text: the pair keeps no other spelling, so an allocator of
   * your own must release an address given so (as every allocator of this package takes any
   * spelling), even one it answered as `FD00::1`. Every address is checked before any is
   * released: a malformed one rejects with InvalidAddressError and releases nothing. So is an
   * object given instead of an array: one with a field what allocate returns has not (`ipv4`), or
   * whose `IPv4`, `IPv6` or `families` say other than its `ips` (`{ ips: [a], IPv4: b }`), is
   * refused with InvalidArgumentError naming that field (a field that is undefined is left out),
   * and so is an array with an enumerable field besides its addresses (`Object.assign([a], { IPv4: b })`),
   * given as `ips` or as an answer's `ips`.
   * Then all are attempted; the first error is rethrown afterwards. A destroy() meanwhile does
   * not stop it: both addresses are released before the allocators are destroyed.
   */
  release(this: object, ips: readonly string[] | DualStackIPs): Promise<void>;
  async release(this: DualStackAllocator, ips: readonly string[] | DualStackIPs): Promise<void> {
    checkThis(this, 'release');
    if (this.destroyed) throw new ErrDestroyed('DualStackAllocator');
    const { canonical, families } = releaseAddresses(ips);
    const allocators = families.map((f) => this.allocator(f));
    this.state.inFlight++;
    try {
      let first: { error: unknown } | undefined;
      for (let i = 0; i < canonical.length; i++) {
        try {
          await allocators[i]!.release(canonical[i]!);
        } catch (e) {
          first ??= { error: e };
        }
      }
      if (first !== undefined) throw first.error;
    } finally {
      this.callEnded();
    }
  }

  private async rollback(ips: readonly string[], families: readonly IPFamily[], allocators: readonly IPAllocator[]): Promise<void> {
    for (let i = 0; i < ips.length; i++) {
      const allocator = allocators[i]!;
      // A dry run took nothing: there is nothing to give back, and its has() answers for the
      // allocator it views, where the address may well be another Service's (a dry run's
      // allocate does not ask): "still allocated" would be a false report.
      if (this.dry) continue;
      let deleteFailed: { error: unknown } | undefined;
      try {
        // the record the call made, as the store answers it (not its cache, which may still hold
        // an earlier record of that name), to tell it from one another caller makes once it is released
        const made = await storedRecord(allocator, ips[i]!);
        // a release ignores the store's delete errors (upstream): it tells them to this handler.
        // NotFound is no failed delete: there was no record to delete (another caller released it)
        await allocator.release(ips[i]!, (error) => {
          if (!isNotFound(error)) deleteFailed ??= { error };
        });
        let stillHeld: boolean;
        try {
          stillHeld = await allocator.has(ips[i]!);
        } catch (e) {
          // the check failed: after a failed delete, which may have taken effect (its answer lost),
          // the address may still be allocated; both errors go with the report
          if (deleteFailed === undefined) throw e;
          throw new StillAllocatedError(ips[i]!, families[i]!, deleteFailed, 'unread', { error: e });
        }
        if (!stillHeld) continue;
        const held = whoHolds(made, await storedRecord(allocator, ips[i]!));
        if (held === 'another') continue; // given back, and another caller's since: theirs, not held by this call
        throw new StillAllocatedError(ips[i]!, families[i]!, deleteFailed, held);
      } catch (e) {
        this.reportRollbackError(e, ips[i]!, families[i]!);
      }
    }
  }

  /** onRollbackError, whose own errors are ignored: they must not stop the rollback of the other family. */
  private reportRollbackError(error: unknown, ip: string, family: IPFamily): void {
    try {
      this.onRollbackError?.(error, ip, family);
    } catch {
      // ignored, as the option says
    }
  }

  /**
   * Destroys both allocators (the pair owns them; destroying one again is harmless). Every
   * method then throws ErrDestroyed; calling destroy() again does nothing. An allocation in
   * flight ends with ErrDestroyed after giving back what it took, a release in flight finishes,
   * and the allocators are destroyed then; a call whose store never answers keeps them.
   *
   * An allocateNext whose creates keep colliding (a store broken, or far ahead of its cache: on
   * an IPv6 range such a search never ends by itself) is ended too: the allocators of this
   * package (Allocator, ReferenceAllocator, MetaAllocator) stop their searches at their next
   * collision — every search on them, the pair's or not, since they are about to be destroyed.
   * Over a store without `sync` a search lets timers run every 4,096 collisions, so a destroy()
   * from a timer or I/O ends it; with `sync` a search is one synchronous step that no timer
   * interrupts, and only a destroy() from code of yours that runs inside it (the store's
   * createSync) ends it. An allocator of your own is not asked to stop: destroy it yourself to
   * end such a search, and the pair's call ends with it.
   */
  destroy(this: object): void;
  destroy(this: DualStackAllocator): void {
    checkThis(this, 'destroy');
    if (this.destroyed) return;
    this.state.destroyed = true;
    if (this.state.inFlight > 0) {
      stopSearches(this.ipv4);
      stopSearches(this.ipv6);
      return;
    }
    const failure = this.destroyPair();
    if (failure !== undefined) throw failure.error;
  }

  /**
   * Destroys both, whatever the first one's destroy() throws (a store's unsubscribe that throws:
   * each still frees its memory), and returns the first error. An Allocator refuses destroy()
   * from inside its own strategy or cool-down's clock (InvalidArgumentError), where code of yours
   * may destroy the pair: that allocator is destroyed by a microtask instead, once the call that
   * read the clock has unwound — the pair is destroyed already, and nothing else would free it.
   */
  private destroyPair(): { error: unknown } | undefined {
    let failure: { error: unknown } | undefined;
    for (const allocator of [this.ipv4, this.ipv6]) {
      owned.delete(allocator);
      try {
        allocator.destroy();
      } catch (error) {
        if (error instanceof InvalidArgumentError) queueMicrotask(() => destroyQuietly(allocator));
        else failure ??= { error };
      }
    }
    return failure;
  }

  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: DualStackAllocator): void {
    checkThis(this, '[Symbol.dispose]');
    this.destroy();
  }

  /** What console.log and util.inspect show, in Node and Deno: its two allocators, as they show themselves (inspection). */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](
    this: DualStackAllocator,
    depth: number,
    options?: InspectOptions,
    inspect?: (value: unknown, options?: object) => string,
  ): string {
    return inspection(
      this,
      DualStackAllocator,
      'DualStackAllocator',
      () => ({ ipv4: this.ipv4, ipv6: this.ipv6 }),
      () => ({}),
      depth,
      options,
      inspect,
    );
  }
}

/**
 * Refuses a call of a DualStackAllocator's method without its object (unboundCall), with the
 * allocators' answer; checked first: each call costs two allocators' calls already.
 */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof DualStackAllocator)) throw unboundCall(self, 'DualStackAllocator', method);
}

/**
 * Asks `allocator` to end its searches at their next collision (STOP_SEARCHES), when it can: every
 * allocator of this package, a Proxy of one or an object made from one (Object.create). One of
 * your own without it is left alone, and so is one whose reading or stop throws (a Proxy's trap):
 * destroy() goes on, and destroys it once the call ends.
 */
function stopSearches(allocator: IPAllocator): void {
  try {
    const stop: unknown = (allocator as { [STOP_SEARCHES]?: unknown })[STOP_SEARCHES];
    if (typeof stop === 'function') stop.call(allocator);
  } catch {
    // as destroyQuietly: nothing to tell, and the allocator is destroyed once its call ends
  }
}

/**
 * Throws what `allocator.allocate(ip)` would throw before its store call, when the allocator can
 * say (CHECK_ALLOCATE: every allocator of this package whose allocate is its own); an allocator
 * of your own is left to its allocate. For a MetaAllocator that is what every range it may use
 * answers alike (ready, holding the address): a range's refusal of a call made from inside its
 * own strategy is left to allocate, which may use another range.
 */
function checkAllocate(allocator: IPAllocator, ip: string): void {
  const check: unknown = (allocator as { [CHECK_ALLOCATE]?: unknown })[CHECK_ALLOCATE];
  if (typeof check === 'function') check.call(allocator, ip);
}

/**
 * Throws what `allocator.allocateNext()` would throw before its first store call, when the
 * allocator can say (CHECK_ALLOCATE_NEXT: Allocator and ReferenceAllocator, when their
 * allocateNext is their own); any other allocator is left to its allocateNext.
 */
function checkAllocateNext(allocator: IPAllocator): void {
  const check: unknown = (allocator as { [CHECK_ALLOCATE_NEXT]?: unknown })[CHECK_ALLOCATE_NEXT];
  if (typeof check === 'function') check.call(allocator);
}

/** destroy() from a microtask (destroyPair): an error there (a store's unsubscribe) has no caller to tell. */
function destroyQuietly(allocator: IPAllocator): void {
  try {
    allocator.destroy();
  } catch {
    // as callEnded: the allocator frees its memory whatever its unsubscribe throws
  }
}

/**
 * The record of `ip` as `allocator`'s store answers it (`get`): null when it holds none, undefined
 * when it cannot be read (an allocator of your own without a `store`, which every allocator of
 * this package has; a read that throws, or answers what is no record (recordAnswer): the
 * rollback's to ignore, as a release's delete errors are).
 */
async function storedRecord(allocator: IPAllocator, ip: string): Promise<IPAddressRecord | null | undefined> {
  try {
    const store = storeOf(allocator);
    if (typeof store?.get !== 'function') return undefined;
    const name = canonicalAddr(ip);
    return recordAnswer(await store.get(name), 'get', name);
  } catch {
    return undefined;
  }
}

/** The `store` of an allocator, when it has one (every allocator of this package does). */
function storeOf(allocator: IPAllocator): Partial<Store> | undefined {
  const store: unknown = (allocator as { store?: unknown }).store;
  return typeof store === 'object' && store !== null ? (store as Partial<Store>) : undefined;
}

/**
 * Whose record holds an address a rollback released and has() still finds: 'made' when it is
 * the record the call made (`made`, read before the release: the same uid), 'another' when it
 * is another caller's (made since — another uid — or, for a store without uids, another owner),
 * 'same owner' when, without uids, the owner is the same, 'unread' when one of them could not be
 * read.
 */
function whoHolds(
  made: IPAddressRecord | null | undefined,
  now: IPAddressRecord | null | undefined,
): 'made' | 'another' | 'same owner' | 'unread' {
  if (made == null || now === undefined) return 'unread';
  if (now === null) return 'another'; // gone by the time it was read: not held by this call
  try {
    const [was, is] = [made.uid, now.uid];
    if (typeof was === 'string' && was !== '' && typeof is === 'string' && is !== '') return was === is ? 'made' : 'another';
    return sameOwner(made.parentRef, now.parentRef) ? 'same owner' : 'another';
  } catch {
    return 'unread'; // a record of a store of your own whose fields throw
  }
}

/** Whether two parentRefs name the same object (a missing group or namespace is the empty one). */
function sameOwner(a: ParentRef | null, b: ParentRef | null): boolean {
  if (a == null || b == null) return (a == null) === (b == null);
  return (
    (a.group ?? '') === (b.group ?? '') && a.resource === b.resource && (a.namespace ?? '') === (b.namespace ?? '') && a.name === b.name
  );
}

/**
 * `values`, one per family of `families` (a call's, in the caller's order), in the order the pair
 * takes the families: IPv4 first, whatever order the caller gave. Two calls that want the same
 * addresses (or the last free one of each family) in opposite orders would otherwise each take
 * its first family, fail on the one the other took, and give its own back: both lose, and callers
 * that retry can go on losing together. In one order the first to take IPv4 wins, and the other
 * fails on IPv4 with the error it would have got on it (ErrAllocated, ErrFull) without taking
 * anything. Upstream's Service REST storage promises no order either (it takes the families from
 * a Go map); the answer is still in the caller's order. Two values swap or none do, so the same
 * call on values in the pair's order gives them back in the caller's.
 */
function ipv4First<T>(families: readonly IPFamily[], values: readonly T[]): T[] {
  return families.length === 2 && families[0] === 'IPv6' ? [values[1]!, values[0]!] : [...values];
}

/** The answer of an allocation (DualStackIPs), frozen: `ips` and `families` in the caller's order. */
function result(ips: string[], families: readonly IPFamily[]): DualStackIPs {
  const r: { -readonly [K in keyof DualStackIPs]: DualStackIPs[K] } = { ips: Object.freeze(ips), families: Object.freeze([...families]) };
  for (let i = 0; i < ips.length; i++) r[families[i]!] = ips[i]!;
  return Object.freeze(r);
}

/**
 * InvalidArgumentError, its cause the allocator's own error, when `a.used()` throws ErrDestroyed:
 * what every allocator of this package answers once destroyed (see the constructor). Any other
 * error of used() is the allocator's own business and judges nothing: its calls will tell.
 */
function checkLive(a: IPAllocator, family: IPFamily): void {
  try {
    a.used();
  } catch (e) {
    if (!isDestroyed(e)) return;
    const refusal = new InvalidArgumentError(
      `DualStackAllocator: the ${family} allocator has been destroyed (${family === 'IPv4' ? 'first' : 'second'} argument); a pair takes live allocators only`,
    );
    Object.defineProperty(refusal, 'cause', { value: e, writable: true, configurable: true });
    throw refusal;
  }
}

/** InvalidArgumentError when another pair owns either allocator (WeakSet.has calls nothing of the caller's). */
function checkUnowned(ipv4: IPAllocator, ipv6: IPAllocator): void {
  if (!owned.has(ipv4) && !owned.has(ipv6)) return;
  const which = owned.has(ipv4) ? 'first' : 'second';
  throw new InvalidArgumentError(
    `DualStackAllocator: the ${which} allocator is already owned by another DualStackAllocator, which destroys it when destroyed`,
  );
}

/**
 * InvalidArgumentError unless `a` (the `which` argument) is an object and no Range or Range dry
 * run: they have methods of the same names, but answer synchronously and keep no records, so a
 * pair over two would hand out addresses that no store, other replica or repair loop knows of.
 */
function checkKind(a: unknown, family: IPFamily, which: string): void {
  if (isRangeView(a)) {
    const what = a instanceof Range ? 'a Range' : "a Range's dry run";
    throw new InvalidArgumentError(
      `DualStackAllocator: the ${which} argument is ${what}, which answers synchronously and keeps no records: pass an ${family} IPAllocator, such as new Allocator(cidr, { store }) or a MetaAllocator (or its dryRun(), for a pair that persists nothing)`,
    );
  }
  if (typeof a !== 'object' || a === null) throw notAnAllocator(a, family, which);
}

/**
 * Whether both allocators are dry runs (isDryRun); InvalidArgumentError when one is and the
 * other is not: such a pair would
 * persist one family and answer every Service the other family's network address (a dry run's
 * allocateNext), which no Service may have and which every one would share.
 */
function bothDryOrNeither(ipv4: IPAllocator, ipv6: IPAllocator): boolean {
  const dry4 = isDryRun(ipv4, 'ipv4');
  if (dry4 === isDryRun(ipv6, 'ipv6')) return dry4;
  const [dry, live] = dry4 ? ['first', 'second'] : ['second', 'first'];
  throw new InvalidArgumentError(
    `DualStackAllocator: the ${dry} argument is a dry run and the ${live} is not: a pair persists both families or neither; pass the dryRun() of both allocators, or neither`,
  );
}

/** The methods the pair calls on its allocators: an object without one of them is no allocator. */
const CALLED = ['allocate', 'allocateNext', 'release', 'has', 'used', 'destroy'] as const;

/**
 * InvalidArgumentError, naming what is missing, unless `a` (the `which` argument, an object of
 * the family) has every method the pair calls: `{ ipFamily: 'IPv4' }` is refused here, not by a
 * TypeError from the first call that reaches it (or from a rollback, or from destroy()).
 */
function checkMethods(a: object, family: IPFamily, which: string): void {
  const parameter = family === 'IPv4' ? 'ipv4' : 'ipv6'; // its name, for readMember
  const missing = CALLED.filter((m) => typeof readMember(a, m, parameter) !== 'function');
  if (missing.length === 0) return;
  const names = missing.map((m) => `${m}()`);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  throw new InvalidArgumentError(
    `DualStackAllocator: the ${which} argument must be an ${family} allocator (an IPAllocator), got ${quoteInput(a)} with ipFamily ${quoteInput(family)} but no ${list}`,
  );
}

/** InvalidArgumentError unless `a` is an allocator (an object with an ipFamily) of `family`. */
function checkFamily(a: unknown, family: IPFamily, which: string): void {
  const parameter = family === 'IPv4' ? 'ipv4' : 'ipv6'; // its name, for readMember
  const got = typeof a === 'object' && a !== null ? readMember(a, 'ipFamily', parameter) : undefined;
  if (got === family) {
    checkMethods(a as object, family, which);
    return;
  }
  if (got === 'IPv4' || got === 'IPv6') {
    throw new InvalidArgumentError(`DualStackAllocator: the ${which} allocator must be ${family}, got an ${got} allocator`);
  }
  throw notAnAllocator(a, family, which);
}

/** The refusal of `a`, the `which` argument, which is no allocator; for text, what to pass instead. */
function notAnAllocator(a: unknown, family: IPFamily, which: string): InvalidArgumentError {
  const hint = typeof a === 'string' ? ' (for a CIDR, pass new Allocator(cidr, { store }))' : '';
  return new InvalidArgumentError(
    `DualStackAllocator: the ${which} argument must be an ${family} allocator (an IPAllocator), got ${quoteInput(a)}${hint}`,
  );
}
