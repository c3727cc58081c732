// The informer's backoff after failures: an exponential delay with jitter (client-go's reflector
// backs off the same way between ListAndWatch attempts) — never shorter than a wait the server
// asked for —, and the wait itself, which stop() cuts short.

export interface BackoffOptions {
  /** First delay after a failure. Default 200 ms. */
  initialMs?: number | undefined;
  /** Cap. Default 30 000 ms. (A longer wait the server asks for is waited out all the same: wait(atLeastMs).) */
  maxMs?: number | undefined;
  /** Each delay is multiplied by a random factor in [1 − jitter, 1 + jitter]. Default 0.2. */
  jitter?: number | undefined;
}

/** @internal */
export class Backoff {
  /** Failures since the last watch that brought an event: the exponent of the next delay. */
  private failures = 0;
  private cancelled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: BackoffOptions = {}) {}

  /** True after a failure not yet followed by progress (reset()). */
  get failing(): boolean {
    return this.failures > 0;
  }

  /** Progress (a watch brought events): the next failure waits the initial delay again. */
  reset(): void {
    this.failures = 0;
  }

  /** Counts a failure without waiting for it (the next delay doubles all the same). */
  countFailure(): void {
    this.failures++;
  }

  /**
   * Counts a failure and waits its delay, or `atLeastMs` when that is longer (a wait the server
   * asked for: the larger of the two, as client-go's rest/with_retry.go Before takes the larger of
   * its backoff and the Retry-After); resolves at once after cancel().
   */
  wait(atLeastMs = 0): Promise<void> {
    return this.sleep(Math.max(this.nextDelay(), atLeastMs));
  }

  /** Ends the wait in progress, and every later one at once: the informer stopped. */
  cancel(): void {
    this.cancelled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.wake?.();
  }

  private nextDelay(): number {
    const initial = this.options.initialMs ?? 200;
    const max = this.options.maxMs ?? 30_000;
    const jitter = this.options.jitter ?? 0.2;
    const base = Math.min(max, initial * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.max(0, Math.round(base * (1 - jitter + 2 * jitter * Math.random())));
  }

  private sleep(ms: number): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wake?.();
      }, ms);
    });
  }
}
