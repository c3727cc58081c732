// The typed errors themselves: codes, names, and which of them carry a stack trace.
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  AlreadyExistsError,
  ErrAllocated,
  ErrDestroyed,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotInRange,
  ErrNotReady,
  InvalidAddressError,
  InvalidArgumentError,
  InvalidCIDRError,
  InvalidRangeError,
  InvalidRecordError,
  IPAllocatorError,
  type IPAllocatorErrorCode,
  NotFoundError,
  OutOfMemoryError,
} from '../adapters/errors.ts';
import { quoteInput } from '../adapters/quote.ts';
import { Allocator } from '../adapters/allocator.ts';
import { canonicalAddr } from '../adapters/address.ts';
import { Range } from '../adapters/range.ts';
import { validateServiceCIDRSpec } from '../adapters/service-cidrs.ts';
import { checkParentRef } from '../adapters/records.ts';
import { KubernetesApiError, SyncBlockedError, SyncDeniedError, SyncTimeoutError } from '../adapters/kubernetes/errors.ts';
import { KubeconfigCredentialError } from '../adapters/kubernetes/user-checks.ts';
import { StillAllocatedError } from '../adapters/dual-stack.ts';

const limit = Error.stackTraceLimit;
afterEach(() => {
  Error.stackTraceLimit = limit;
});

describe('quoted input', () => {
  it("shows every character a reader could not see as an escape, as Go's %q does", async () => {
    const { Range } = await import('../adapters/range.ts');
    const r = new Range('10.0.0.0/24');
    const cases: [string, string][] = [
      ['10.0.0.1\u200b', '"10.0.0.1\\u200b"'], // zero-width space
      ['10.0.0.1\u00a0', '"10.0.0.1\\u00a0"'], // no-break space
      ['\ufeff10.0.0.1', '"\\ufeff10.0.0.1"'], // byte order mark
      ['10.0.0.1\u2028', '"10.0.0.1\\u2028"'], // line separator
      ['10.0.0.1\u00ad', '"10.0.0.1\\u00ad"'], // soft hyphen
      ['10.0.0.1\u007f', '"10.0.0.1\\x7f"'], // delete
      ['10.0.0.1\u3000', '"10.0.0.1\\u3000"'], // ideographic space
      ['10.0.0.1\u{e0001}', '"10.0.0.1\\U000e0001"'], // language tag
      ['10.0.0.1\t', '"10.0.0.1\\t"'],
      // the ASCII controls as Go writes them: a letter where it has one, else \x
      ['10.0.0.1\u0000', '"10.0.0.1\\x00"'],
      ['10.0.0.1\u0007', '"10.0.0.1\\a"'],
      ['10.0.0.1\v', '"10.0.0.1\\v"'],
      ['10.0.0.1\u001b[2J', '"10.0.0.1\\x1b[2J"'],
      ['10.0.0.1\u0085', '"10.0.0.1\\u0085"'], // a C1 control: \u, as Go
      ['10.0.0."1\\', '"10.0.0.\\"1\\\\"'], // the quote and the backslash
      ['10.0.0.1 ', '"10.0.0.1 "'], // the plain space stays
      ['10.0.0.\u0661', '"10.0.0.\u0661"'], // a digit of another script is visible: as written
    ];
    for (const [input, quoted] of cases) {
      const e = (() => {
        try {
          r.has(input);
        } catch (error) {
          return error as InvalidAddressError;
        }
      })();
      expect(e).toBeInstanceOf(InvalidAddressError);
      expect(e!.message.startsWith(`ParseAddr(${quoted}): `)).toBe(true);
      expect(e!.input).toBe(input); // the input itself is kept as given
    }
    r.destroy();
  });

  it('a Promise where an address belongs is named as such, with the likely cause', async () => {
    const a = new Allocator('10.0.0.0/24');
    const pending = a.allocateNext(); // not awaited
    for (const call of [() => a.release(pending as never), () => a.has(pending as never), () => a.allocate(pending as never)]) {
      const e = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(InvalidAddressError);
      expect((e as Error).message).toBe('ParseAddr(a Promise (a missing await?)): expected a string, got object');
    }
    await pending;
    a.destroy();
  });
});

describe('names from a kubeconfig in a message are quoted as every input is', () => {
  // Regression: the user and context names of the kubeconfig checks were quoted with
  // JSON.stringify, which escapes a control character otherwise (\u001b) and leaves what a reader
  // cannot see as it is: a right-to-left override reordered the rest of the message
  it('a user and a context named with an escape sequence and an invisible character', async () => {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { missingUser } = await import('../adapters/kubernetes/user-checks.ts');
    const { TokenFileError } = await import('../adapters/kubernetes/token-files.ts');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://10.0.0.1:6443', skipTLSVerify: true }],
      users: [],
      contexts: [{ name: 'prod\u202e', cluster: 'c', user: 'ops\u001b[2J' }],
      currentContext: 'prod\u202e',
    });
    expect(missingUser(kc)).toBe('user "ops\\x1b[2J" was not found for context "prod\\u202e"');
    expect(new TokenFileError('/run/token', 'ops\u200b', 'is empty').message).toBe(
      'the token-file "/run/token" of user "ops\\u200b" is empty',
    );
  });
});

describe('a long input is cut before it is quoted', () => {
  it('says how long it was, a count past a thousand with its separator', () => {
    expect(quoteInput('x'.repeat(1234))).toBe(`"${'x'.repeat(64)}"… (1,234 characters)`);
    expect(quoteInput('x'.repeat(999))).toBe(`"${'x'.repeat(64)}"… (999 characters)`);
  });

  it('never between the two halves of a character outside the BMP, whose half would read as an escape', () => {
    const emojiAtCut = `${'a'.repeat(63)}\u{1f600}${'b'.repeat(10)}`; // the emoji's halves at 63 and 64
    expect(quoteInput(emojiAtCut)).toBe(`"${'a'.repeat(63)}"… (75 characters)`);
    const before = `${'a'.repeat(62)}\u{1f600}${'b'.repeat(10)}`; // whole inside the first 64
    expect(quoteInput(before)).toBe(`"${'a'.repeat(62)}\u{1f600}"… (74 characters)`);
    // a function's name and an object's class are cut the same way
    const named = { [emojiAtCut]() {} }[emojiAtCut]!; // a method: its source names it
    expect(quoteInput(named)).toBe(`the function "${'a'.repeat(63)}"`);
  });
});

describe('typed errors', () => {
  it('an expected outcome has no trace: its stack is the first line a trace would have, not enumerable', () => {
    for (const e of [new ErrFull(), new ErrAllocated(), new ErrNotInRange('10.1.0.1', '10.0.0.0/24')]) {
      expect(e).toBeInstanceOf(IPAllocatorError);
      expect(e).toBeInstanceOf(Error);
      expect(e.stack).toBe(`${e.name}: ${e.message}`);
      expect(Object.keys(e)).not.toContain('stack');
      expect(JSON.parse(JSON.stringify(e))).toMatchObject({ code: e.code, name: e.name });
      expect(JSON.parse(JSON.stringify(e))).not.toHaveProperty('stack');
    }
    expect(new ErrFull().stack).toBe('ErrFull: range is full');
    expect(new ErrFull().code).toBe('ERR_RANGE_FULL');
  });

  it("each class's static code has its literal type, so a switch over codes is checked", () => {
    expectTypeOf(ErrFull.code).toEqualTypeOf<'ERR_RANGE_FULL'>();
    expectTypeOf(InvalidAddressError.code).toEqualTypeOf<'ERR_INVALID_ADDRESS'>();
    expect(ErrFull.code).toBe('ERR_RANGE_FULL');
    // and so has each instance's: a misspelt code does not compile (type-checked by tsc)
    const e = new ErrFull();
    expectTypeOf(e.code).toEqualTypeOf<'ERR_RANGE_FULL'>();
    expectTypeOf(new InvalidAddressError('x', 'unable to parse IP').code).toEqualTypeOf<'ERR_INVALID_ADDRESS'>();
    expectTypeOf<SyncTimeoutError['code']>().toEqualTypeOf<'ERR_SYNC_TIMEOUT'>();
    expectTypeOf<SyncBlockedError['code']>().toEqualTypeOf<'ERR_SYNC_BLOCKED'>();
    expect(e.code).toBe(ErrFull.code);
  });

  it("IPAllocatorError's code is the union of every class's code, so a switch over a caught error's code is checked", () => {
    // the codes as each exported class declares its own: the union names them all, and no other
    type Declared =
      | (typeof ErrFull)['code']
      | (typeof ErrAllocated)['code']
      | (typeof ErrNotInRange)['code']
      | (typeof ErrNotReady)['code']
      | (typeof ErrMismatchedNetwork)['code']
      | (typeof ErrDestroyed)['code']
      | (typeof InvalidAddressError)['code']
      | (typeof InvalidCIDRError)['code']
      | (typeof InvalidRangeError)['code']
      | (typeof InvalidArgumentError)['code']
      | (typeof OutOfMemoryError)['code']
      | (typeof InvalidRecordError)['code']
      | (typeof AlreadyExistsError)['code']
      | (typeof NotFoundError)['code']
      | (typeof StillAllocatedError)['code']
      | (typeof SyncTimeoutError)['code']
      | (typeof SyncDeniedError)['code']
      | (typeof SyncBlockedError)['code']
      | (typeof KubeconfigCredentialError)['code']
      | 'ERR_IPALLOCATOR'; // IPAllocatorError's own
    expectTypeOf<IPAllocatorErrorCode>().toEqualTypeOf<Declared>();
    expectTypeOf<IPAllocatorError['code']>().toEqualTypeOf<IPAllocatorErrorCode>();
    const caught: unknown = new ErrFull();
    if (!(caught instanceof IPAllocatorError)) throw new Error('not ours');
    expectTypeOf(caught.code).toEqualTypeOf<IPAllocatorErrorCode>();
    // a misspelt code does not compile (type-checked by tsc)
    // @ts-expect-error 'ERR_RANG_FULL' is no code
    expect(caught.code === 'ERR_RANG_FULL').toBe(false);
    const handled = (e: IPAllocatorError): string => {
      switch (e.code) {
        case 'ERR_RANGE_FULL':
          return 'full';
        // @ts-expect-error 'ERR_ALLOCATD' is no code
        case 'ERR_ALLOCATD':
          return 'taken';
        default:
          return e.code;
      }
    };
    expect([handled(new ErrFull()), handled(new ErrAllocated())]).toEqual(['full', 'ERR_ALLOCATED']);
    // a subclass of your own keeps its class's code, and instanceof still narrows to it
    class RangeExhausted extends ErrFull {}
    class Ours extends IPAllocatorError {}
    const mine: unknown = new RangeExhausted();
    if (mine instanceof RangeExhausted) expectTypeOf(mine.code).toEqualTypeOf<'ERR_RANGE_FULL'>();
    expect([new RangeExhausted().code, new Ours('x').code]).toEqual(['ERR_RANGE_FULL', 'ERR_IPALLOCATOR']);
    // one that declares a code of its own (plain JavaScript takes any) carries it, outside the
    // union at run time: the default branch gets it (docs/api.md)
    class Mine extends IPAllocatorError {
      static override readonly code = 'ERR_MINE' as never;
    }
    expect(handled(new Mine('mine'))).toBe('ERR_MINE');
  });

  it('an input error carries the trace of where it was made', () => {
    const e = new InvalidAddressError('10.0.0.256', 'IPv4 field has value >255');
    expect(e.stack!.split('\n')[0]).toBe(`InvalidAddressError: ${e.message}`);
    expect(e.stack!.split('\n').length).toBeGreaterThan(1);
    expect(e.stack).toContain('errors.test.ts');
  });

  it("leaves the caller's Error.stackTraceLimit as it was, whatever it is", async () => {
    for (const value of [5, 0, Number.POSITIVE_INFINITY]) {
      Error.stackTraceLimit = value;
      new ErrFull();
      new InvalidAddressError('x', 'unable to parse IP');
      expect(Error.stackTraceLimit).toBe(value);
    }
    Error.stackTraceLimit = 7;
    const a = new Allocator('10.0.0.0/30');
    await a.allocateNext();
    await a.allocateNext();
    await expect(a.allocateNext()).rejects.toBeInstanceOf(ErrFull);
    expect(Error.stackTraceLimit).toBe(7);
    a.destroy();
  });

  it('where Error.stackTraceLimit cannot be changed (frozen intrinsics), errors are still made, with a trace', async () => {
    const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!;
    Object.defineProperty(Error, 'stackTraceLimit', { ...own, value: 10, writable: false });
    try {
      const full = new ErrFull();
      expect(full.message).toBe('range is full');
      expect(full.stack!.split('\n')[0]).toBe('ErrFull: range is full');
      expect(full.stack!.split('\n').length).toBeGreaterThan(1);
      expect(new InvalidAddressError('x', 'unable to parse IP').code).toBe('ERR_INVALID_ADDRESS');
      const a = new Allocator('10.0.0.0/31');
      await expect(a.allocateNext()).rejects.toBeInstanceOf(ErrFull);
      a.destroy();
      expect(Error.stackTraceLimit).toBe(10);
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', own);
    }
  });

  it('the stack of an expected outcome can be replaced, as on any Error', () => {
    const e = new ErrFull();
    e.stack = 'ErrFull: range is full\n    at somewhere';
    expect(e.stack).toBe('ErrFull: range is full\n    at somewhere');
    expect(Object.keys(e)).not.toContain('stack');
  });
});

describe('Kubernetes transport errors', () => {
  it("name the runtime's refusal that lies under fetch's 'fetch failed' (Deno without --allow-net)", async () => {
    const { translate, KubernetesApiError } = await import('../adapters/kubernetes/errors.ts');
    const notCapable = Object.assign(new Error('Requires net access to "10.0.0.1:6443", run again with the --allow-net flag'), {
      name: 'NotCapable',
    });
    const fetchFailed = new TypeError('fetch failed', { cause: new Error('request failed', { cause: notCapable }) });
    const e = translate(fetchFailed, 'list', 'ipaddresses.networking.k8s.io', undefined, 'https://10.0.0.1:6443');
    expect(e).toBeInstanceOf(KubernetesApiError);
    expect(e.message).toBe(
      'list ipaddresses.networking.k8s.io: fetch failed: request failed: Requires net access to "10.0.0.1:6443", run again with the --allow-net flag (the API server at https://10.0.0.1:6443)',
    );
    expect(translate(new TypeError('fetch failed'), 'list', 'ipaddresses.networking.k8s.io').message).toBe(
      'list ipaddresses.networking.k8s.io: fetch failed',
    );
  });

  it('leave out the fields of a Status that are of the wrong type (a message that is a number, a reason that is an object)', async () => {
    const { translate, KubernetesApiError } = await import('../adapters/kubernetes/errors.ts');
    const answer = {
      code: 403,
      body: { kind: 'Status', status: 'Failure', message: 42, reason: { a: 1 }, code: '403', details: 'x' },
      headers: {},
    };
    const e = translate(answer, 'list', 'servicecidrs.networking.k8s.io');
    expect(e).toBeInstanceOf(KubernetesApiError);
    const { reason, status, message } = e as InstanceType<typeof KubernetesApiError>;
    expect([reason, status, message]).toEqual([
      undefined,
      { kind: 'Status', status: 'Failure' },
      'list servicecidrs.networking.k8s.io: HTTP 403 Forbidden',
    ]);
  });

  it("never quote node-fetch's refusal of a header value (client-node 1.x), which holds the token", async () => {
    // Found by an outside test with client-node 1.4: a token with a line break failed "without an
    // answer from the API server …: Bearer <token>", node-fetch's message cut at its line break.
    const { translate } = await import('../adapters/kubernetes/errors.ts');
    const refusal = new TypeError('Bearer sekret-token-abc123\n is not a legal HTTP header value');
    const e = translate(refusal, 'list', 'ipaddresses.networking.k8s.io', undefined, 'https://10.0.0.1:6443');
    expect(e.message).not.toContain('sekret');
    expect(e.message).toMatch(/^list ipaddresses\.networking\.k8s\.io: the request was not sent: a header would hold a control character/);
    expect(e.cause).toBeUndefined();
  });

  it('never quote what JSON.parse was given (an exec credential plugin printing a bare token)', async () => {
    const { translate } = await import('../adapters/kubernetes/errors.ts');
    let thrown: unknown;
    try {
      JSON.parse('sekret-token-abc123\n');
    } catch (e) {
      thrown = e;
    }
    const e = translate(thrown, 'get', 'ipaddresses.networking.k8s.io', '10.0.0.1', 'https://10.0.0.1:6443');
    expect(e.message).not.toContain('sekret');
    expect(e.message).toBe(
      'get ipaddresses.networking.k8s.io "10.0.0.1": a text that is not JSON (not quoted: it may hold a credential) (the API server at https://10.0.0.1:6443)',
    );
    // nor keep it as the cause, which Node prints with an uncaught error (regression: it was kept)
    expect(e.cause).toBeUndefined();
  });

  it("say why of a server on a port fetch never connects to (a \"bad port\": undici's words, or Deno's fetch's)", async () => {
    const { translate } = await import('../adapters/kubernetes/errors.ts');
    const why =
      'fetch never connects to port 6000, one of the Fetch standard\'s "bad ports", so no request to this server can be sent; ' +
      'kubectl, which has no such list, reaches it: serve the API server on another port, or point the kubeconfig at one that ' +
      'forwards to it (`kubectl proxy` serves http://127.0.0.1:8001)';
    const rows: [Error, string][] = [
      [new TypeError('fetch failed', { cause: new Error('bad port') }), 'fetch failed: bad port'],
      [new TypeError('Fetch failed: Requests to port 6000 are blocked'), 'Fetch failed: Requests to port 6000 are blocked'],
    ];
    for (const [thrown, said] of rows) {
      const e = translate(thrown, 'create', 'ipaddresses.networking.k8s.io', '10.0.0.1', 'https://api.example:6000');
      expect(e.message).toBe(
        `create ipaddresses.networking.k8s.io "10.0.0.1": ${said} (the API server at https://api.example:6000): ${why}`,
      );
    }
  });

  it('name the server and the reason that lies in the causes of fetch\'s "fetch failed", as the command line does', async () => {
    const { translate } = await import('../adapters/kubernetes/errors.ts');
    const rows: [string, Error, string][] = [
      ['a port fetch will not use', new TypeError('fetch failed', { cause: new Error('bad port') }), 'fetch failed: bad port'],
      [
        'a refused connection',
        new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) }),
        'fetch failed: connect ECONNREFUSED 127.0.0.1:6443',
      ],
      [
        'a host not found',
        new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.example'), { code: 'ENOTFOUND' }) }),
        'fetch failed: getaddrinfo ENOTFOUND api.example',
      ],
    ];
    for (const [row, thrown, reason] of rows) {
      // port 6443 is no bad port: a "bad port" there is another URL's (a redirect's), said as fetch
      // says it when the redirect's Location was not seen (kubernetes-redirects.test.ts: when it was)
      const e = translate(thrown, 'get', 'ipaddresses.networking.k8s.io', '10.0.0.1', 'https://api.example:6443');
      expect(e.message, row).toBe(`get ipaddresses.networking.k8s.io "10.0.0.1": ${reason} (the API server at https://api.example:6443)`);
      expect((e as { cause?: unknown }).cause, row).toBe(thrown);
    }
  });
  it("says node-fetch's failures (client-node 1.x) in fetch's words, without the request's path or query", async () => {
    const { translate } = await import('../adapters/kubernetes/errors.ts');
    // node-fetch's FetchError: its name on the prototype, the system error's code copied, no cause
    class FetchError extends Error {
      constructor(
        message: string,
        readonly type: string,
        readonly code?: string,
      ) {
        super(message);
      }
    }
    Object.defineProperty(FetchError.prototype, 'name', { value: 'FetchError' });
    const url = 'https://api.example:6443/apis/networking.k8s.io/v1/ipaddresses?labelSelector=team%3Da&limit=500&continue=abc';
    const rows: [Error, string][] = [
      [
        new FetchError(`request to ${url} failed, reason: connect ECONNREFUSED 10.0.0.1:6443`, 'system', 'ECONNREFUSED'),
        'fetch failed: connect ECONNREFUSED 10.0.0.1:6443',
      ],
      [
        new FetchError(`network timeout at: ${url}`, 'request-timeout'),
        'network timeout at: https://api.example:6443/apis/networking.k8s.io/v1/ipaddresses',
      ],
      // the colon after the URL is node-fetch's, not the query's
      [
        new FetchError(`Invalid response body while trying to fetch ${url}: read ECONNRESET`, 'system', 'ECONNRESET'),
        'Invalid response body while trying to fetch https://api.example:6443/apis/networking.k8s.io/v1/ipaddresses: read ECONNRESET',
      ],
    ];
    for (const [thrown, reason] of rows) {
      const e = translate(thrown, 'list', 'ipaddresses.networking.k8s.io', undefined, 'https://api.example:6443');
      expect(e.message).toBe(`list ipaddresses.networking.k8s.io: ${reason} (the API server at https://api.example:6443)`);
    }
  });
});

describe('how an error quotes a value it was given', () => {
  it('a function by its name, a class as a missing new, never their source', () => {
    class Store {
      create(): void {}
    }
    function make(): void {}
    expect(quoteInput(Store)).toBe('the class "Store" (a missing `new`?)');
    expect(quoteInput(make)).toBe('the function "make"');
    expect(quoteInput(() => 1)).toBe('a function');
    expect(quoteInput(new Proxy(make, {}))).toBe('the function "make"');
  });

  it('a function or class JavaScript named after the key it was given under is said as one without a name', () => {
    // `{ strategy: () => 0 }`: JavaScript names the arrow "strategy", which its source never says;
    // 'got the function "strategy"' read as if the option named a function of that name
    const given = {
      strategy: () => 0,
      random: () => 1,
      store: class {},
      *walk() {},
      now: Math.random,
    };
    expect(given.strategy.name).toBe('strategy'); // what the message showed
    expect(quoteInput(given.strategy)).toBe('a function');
    expect(quoteInput(given.random)).toBe('a function');
    expect(quoteInput(given.store)).toBe('a class (a missing `new`?)');
    // a name its source says (a method, a declaration, a built-in) is still shown
    expect(quoteInput(given.walk)).toBe('the function "walk"');
    expect(quoteInput(given.now)).toBe('the function "random"');
    expect(() => new Allocator('10.0.0.0/24', { strategy: (() => 0) as never })).toThrow(
      /^options\.strategy must be one of upstream, .* or a strategy object \{ name, forRange\(view\) \}, got a function$/,
    );
  });

  it("a symbol with its description's unseen characters escaped, as a string's", () => {
    // Regression: a right-to-left override in a symbol's description reached the message raw
    expect(quoteInput(Symbol('svc\u202e\n'))).toBe('Symbol(svc\\u202e\\u000a) (symbol)');
    expect(() => checkParentRef(Symbol('svc\u202e'))).toThrow('owner: Invalid value: Symbol(svc\\u202e) (symbol)');
  });

  it('a value whose reading throws (a Proxy with throwing traps, a revoked one) is refused with the typed error', async () => {
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwingThen = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('then getter');
      },
    });
    const revokedFunction = Proxy.revocable(() => 1, {});
    revokedFunction.revoke();
    const range = new Range('10.0.0.0/24');
    const allocator = new Allocator('10.0.0.0/24');
    for (const input of [throwing, revoked.proxy, throwingThen, revokedFunction.proxy]) {
      expect(() => canonicalAddr(input as never)).toThrow(InvalidAddressError);
      expect(() => range.has(input as never)).toThrow(InvalidAddressError);
      await expect(allocator.allocate(input as never)).rejects.toThrow(InvalidAddressError);
      expect(() => new Range(input as never)).toThrow(InvalidCIDRError);
      expect(() => validateServiceCIDRSpec([input] as never)).toThrow(InvalidCIDRError);
    }
    expect(quoteInput(revoked.proxy)).toBe('a value of type object');
    expect(quoteInput(revokedFunction.proxy)).toBe('a function');
    expect(range.used()).toBe(0);
    expect(allocator.used()).toBe(0);
    allocator.destroy();
    range.destroy();
  });

  it('a ServiceCIDR spec whose cidrs are not an array names what they are', () => {
    expect(() => validateServiceCIDRSpec(null as never)).toThrow('spec.cidrs must hold 1 or 2 CIDRs, got null');
  });

  it('a ServiceCIDR spec with two CIDRs of one family names both', () => {
    expect(() => validateServiceCIDRSpec(['10.0.0.0/24', '10.1.0.0/24'])).toThrow(
      new InvalidArgumentError(
        'spec.cidrs may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64, got two IPv4 CIDRs: "10.0.0.0/24" and "10.1.0.0/24"',
      ),
    );
  });
});

describe("a store's not found and already exists name the record as upstream's %q does", () => {
  it('a name with controls is escaped, not printed raw; a plain one reads as upstream', async () => {
    const { MemoryStore } = await import('../adapters/memory-store.ts');
    const store = new MemoryStore();
    const forged = '10.0.0.9\n\u001b[31mFORGED LINE';
    const e = await store.delete(forged).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((e as Error).message).toBe('ipaddresses.networking.k8s.io "10.0.0.9\\n\\x1b[31mFORGED LINE" not found');
    expect((e as { resourceName: string }).resourceName).toBe(forged); // the name itself, unescaped
    await expect(store.delete('10.0.0.8')).rejects.toThrow(/^ipaddresses\.networking\.k8s\.io "10\.0\.0\.8" not found$/);
    const record = { name: '10.0.0.7', labels: {}, parentRef: null };
    store.createSync(record);
    expect(() => store.createSync(record)).toThrow('ipaddresses.networking.k8s.io "10.0.0.7" already exists');
    store.close();
  });
});

describe('the error classes a store of your own builds, from plain JavaScript', () => {
  // Found by an outside tester: built without their arguments they threw a TypeError from inside
  // (reading 'replace' of undefined), so a store's collision became an unknown store error and
  // allocateNext failed instead of trying the next address.
  it('AlreadyExistsError and NotFoundError without a name, InvalidRecordError with one cause as text', async () => {
    const { AlreadyExistsError, NotFoundError, InvalidRecordError, isAlreadyExists } = await import('../adapters/errors.ts');
    const exists = new (AlreadyExistsError as unknown as new () => Error)();
    expect(exists.message).toBe('ipaddresses.networking.k8s.io already exists');
    expect(isAlreadyExists(exists)).toBe(true);
    expect(new (NotFoundError as unknown as new () => Error)().message).toBe('ipaddresses.networking.k8s.io not found');
    expect(new (AlreadyExistsError as new (n: unknown) => Error)(7).message).toBe(
      'ipaddresses.networking.k8s.io 7 (number) already exists',
    );
    const invalid = new (InvalidRecordError as new (n: unknown, c?: unknown) => InstanceType<typeof InvalidRecordError>)('x', 'bad name');
    expect([invalid.message, invalid.causes]).toEqual(['IPAddress "x" is invalid: bad name', ['bad name']]);
    expect(new (InvalidRecordError as unknown as new (n: unknown) => Error)('x').message).toBe('IPAddress "x" is invalid');
  });

  it("a class's static code cannot be assigned: errors made later keep theirs", () => {
    expect(() => {
      (ErrFull as { code: string }).code = 'changed';
    }).toThrow(TypeError);
    expect([ErrFull.code, new ErrFull().code]).toEqual(['ERR_RANGE_FULL', 'ERR_RANGE_FULL']);
    expect(() => {
      (IPAllocatorError as { code: string }).code = 'changed';
    }).toThrow(TypeError);
    // a class of yours assigns its own code (as TypeScript before class fields compiles
    // `static code = …`), extending the base or a concrete class, and keeps it
    class Mine extends IPAllocatorError {}
    (Mine as { code: string }).code = 'MINE';
    class MyFull extends ErrFull {}
    (MyFull as { code: string }).code = 'MY_FULL';
    expect([new Mine('m').code, new MyFull().code, new ErrFull().code]).toEqual(['MINE', 'MY_FULL', 'ERR_RANGE_FULL']);
    class Declared extends ErrFull {
      static override readonly code = 'DECLARED' as never;
    }
    expect(new Declared().code).toBe('DECLARED');
  });

  it('a class of ours without a code of its own keeps the one it inherits, read-only', async () => {
    // Regression: making the codes read-only gave UnusableProxyError (an InvalidArgumentError
    // declaring no code) a code of undefined, on the class and on every error made from it
    const { UnusableProxyError } = await import('../adapters/kubernetes/proxy-environment.ts');
    expect([UnusableProxyError.code, new UnusableProxyError('proxy-url').code]).toEqual(['ERR_INVALID_ARGUMENT', 'ERR_INVALID_ARGUMENT']);
    expect(new UnusableProxyError('proxy-url')).toBeInstanceOf(InvalidArgumentError);
    expect(() => {
      (UnusableProxyError as { code: string }).code = 'changed';
    }).toThrow(TypeError);
  });
});

// Regression: error.name (and the stack's one line) was the class's own name, which a minifier
// renames: in an esbuild --minify bundle ErrFull read "M: range is full".
describe('error names survive a minifier renaming the classes', () => {
  it.each([
    ['ErrFull', () => new ErrFull(), 'ErrFull: range is full'],
    ['StillAllocatedError', () => new StillAllocatedError('10.0.0.1', 'IPv4'), undefined],
    ['SyncTimeoutError', () => new SyncTimeoutError('KubernetesStore', 'ipaddresses', 1000, undefined), undefined],
    [
      'SyncBlockedError',
      () =>
        new SyncBlockedError('KubernetesStore', 'ipaddresses', 'http://10.0.0.1:6000', '6000', new Error('list: fetch failed: bad port')),
      undefined,
    ],
  ] as const)('%s keeps its name when its class is renamed', (name, make, stack) => {
    const made = make();
    const type = made.constructor as { name: string };
    const was = Object.getOwnPropertyDescriptor(type, 'name')!;
    Object.defineProperty(type, 'name', { value: 'M' }); // what --minify does to the class
    try {
      const e = make();
      expect([e.name, String(e).startsWith(`${name}: `)]).toEqual([name, true]);
      if (stack !== undefined) expect(e.stack).toBe(stack);
    } finally {
      Object.defineProperty(type, 'name', was);
    }
  });

  it('a subclass of your own is named by its class', () => {
    class RangeExhausted extends ErrFull {}
    expect([new RangeExhausted().name, new RangeExhausted().code]).toEqual(['RangeExhausted', 'ERR_RANGE_FULL']);
  });
});

describe("docs/api.md's table of error codes", () => {
  it('names every error class the package exports, with its code', async () => {
    const { readFileSync } = await import('node:fs');
    const page = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    const exported = { ...(await import('../adapters/index.ts')), ...(await import('../adapters/kubernetes/index.ts')) };
    const classes = Object.entries(exported).filter(
      ([, v]) => typeof v === 'function' && v.prototype instanceof Error && typeof (v as unknown as { code?: unknown }).code === 'string',
    );
    expect(classes.length).toBeGreaterThan(15);
    // the rows of the table (`| class | code |`), each class with its code in the same row: the
    // page names most classes elsewhere too, so a row taken out or a code misstated would
    // otherwise still be found on the page
    const header = page.indexOf('| class ');
    expect(header).toBeGreaterThan(-1);
    const rows = page
      .slice(header)
      .split('\n')
      .slice(2)
      .filter((_, i, lines) => lines.slice(0, i + 1).every((l) => l.startsWith('|')));
    const missing: string[] = [];
    for (const [name, type] of classes) {
      const code = (type as unknown as { code: string }).code; // KubernetesApiError's is per error (the HTTP status): not among these
      const row = rows.find((r) => r.split('|')[1]!.includes(`\`${name}\``));
      if (row === undefined || !row.split('|')[2]!.includes(`'${code}'`)) missing.push(`${name} (${code})`);
    }
    expect(missing).toEqual([]);
  });
});

// Found by a user logging errors as JSON: JSON.stringify(error) gave its name and code, never its
// message (an Error's own message is not enumerable), and threw for an address given as a bigint.
describe('JSON.stringify of an error', () => {
  const apiError = new KubernetesApiError('list', 'ipaddresses', undefined, 503, { reason: 'ServiceUnavailable' }, 'unavailable');
  /** [class, an error of it, what JSON.stringify writes for it] */
  const ROWS: [string, () => IPAllocatorError, object][] = [
    ['IPAllocatorError', () => new IPAllocatorError('no prom-client'), {}],
    ['ErrFull', () => new ErrFull(), {}],
    ['ErrAllocated', () => new ErrAllocated(), {}],
    ['ErrMismatchedNetwork', () => new ErrMismatchedNetwork('10.1.0.1'), {}],
    ['ErrNotReady', () => new ErrNotReady('setReady(false) holds it'), {}],
    ['ErrNotInRange', () => new ErrNotInRange('10.1.0.1', '10.0.0.0/24'), { ip: '10.1.0.1', validRange: '10.0.0.0/24' }],
    ['InvalidAddressError', () => new InvalidAddressError('10.0.0.x', 'bad octet'), { input: '10.0.0.x', reason: 'bad octet' }],
    ['InvalidCIDRError', () => new InvalidCIDRError('10.0.0.0/33', 'bad bits'), { input: '10.0.0.0/33', reason: 'bad bits' }],
    ['InvalidRangeError', () => new InvalidRangeError('too large', 'invalid address []'), { reason: 'too large' }],
    ['InvalidArgumentError', () => new InvalidArgumentError('count must be a number'), {}],
    [
      'OutOfMemoryError',
      () => new OutOfMemoryError('a new index', { requested: 65536, reason: 'limit', limit: 131072, free: 4096, inUse: 8192 }),
      { requested: 65536, reason: 'limit', limit: 131072, free: 4096, inUse: 8192 },
    ],
    ['AlreadyExistsError', () => new AlreadyExistsError('10.0.0.5'), { resourceName: '10.0.0.5' }],
    ['NotFoundError', () => new NotFoundError('10.0.0.5'), { resourceName: '10.0.0.5' }],
    ['ErrDestroyed', () => new ErrDestroyed('Allocator 10.0.0.0/24'), { target: 'Allocator 10.0.0.0/24' }],
    [
      'InvalidRecordError',
      () => new InvalidRecordError('10.0.0.09', ['metadata.name: Invalid value']),
      { resourceName: '10.0.0.09', causes: ['metadata.name: Invalid value'] },
    ],
    [
      'StillAllocatedError',
      // the delete failed, and the check after it too: both errors are written
      () =>
        new StillAllocatedError('10.0.0.5', 'IPv4', { error: new NotFoundError('10.0.0.5') }, 'unread', { error: new Error('timeout') }),
      {
        ip: '10.0.0.5',
        family: 'IPv4',
        checkError: { name: 'Error', message: 'timeout' },
        cause: { name: 'NotFoundError', message: new NotFoundError('10.0.0.5').message, code: 'ERR_NOT_FOUND' },
      },
    ],
    [
      'SyncTimeoutError',
      () => new SyncTimeoutError('KubernetesStore', 'ipaddresses', 1000, apiError),
      {
        target: 'KubernetesStore',
        timeoutMs: 1000,
        lastError: { name: 'KubernetesApiError', message: apiError.message, code: 503 },
        cause: { name: 'KubernetesApiError', message: apiError.message, code: 503 },
      },
    ],
    [
      'SyncDeniedError',
      () =>
        new SyncDeniedError(
          'KubernetesStore',
          'ipaddresses',
          'Requires net access, run again with the --allow-net flag',
          new Error('list: denied'),
        ),
      {
        target: 'KubernetesStore',
        flag: '--allow-net',
        lastError: { name: 'Error', message: 'list: denied' },
        cause: { name: 'Error', message: 'list: denied' },
      },
    ],
    [
      'SyncBlockedError',
      () => new SyncBlockedError('KubernetesStore', 'ipaddresses', 'http://10.0.0.1:6000', '6000', new Error('bad port')),
      {
        target: 'KubernetesStore',
        server: 'http://10.0.0.1:6000',
        port: '6000',
        lastError: { name: 'Error', message: 'bad port' },
        cause: { name: 'Error', message: 'bad port' },
      },
    ],
    [
      'KubeconfigCredentialError',
      () => new KubeconfigCredentialError('admin', 'returned no token', 'context "prod" of the kubeconfig "/k"'),
      { user: 'admin', reason: 'returned no token', kubeconfig: 'context "prod" of the kubeconfig "/k"' },
    ],
  ];

  it.each(ROWS)('%s: its name, message and code, then its own fields, never its stack', (name, make, fields) => {
    const e = make();
    expect(e.name).toBe(name);
    const written = JSON.stringify(e);
    expect(JSON.parse(written)).toEqual({ name, message: e.message, code: e.code, ...fields });
    expect(Object.keys(JSON.parse(written)).slice(0, 3)).toEqual(['name', 'message', 'code']);
    expect(written).not.toContain('stack');
    expect(JSON.parse(JSON.stringify({ err: e })).err.message).toBe(e.message); // as a logger nests it
  });

  it('a StillAllocatedError has the same fields whatever it was told, as the other classes: checkError undefined when the check answered', () => {
    const told = new StillAllocatedError('10.0.0.5', 'IPv4', { error: new Error('delete failed') }, 'unread', {
      error: new Error('timeout'),
    });
    for (const e of [
      new StillAllocatedError('10.0.0.5', 'IPv4'),
      new StillAllocatedError('10.0.0.5', 'IPv4', undefined, 'made'),
      new StillAllocatedError('10.0.0.5', 'IPv4', { error: new Error('delete failed') }),
    ]) {
      expect(Object.keys(e)).toEqual(Object.keys(told));
      expect(Object.hasOwn(e, 'checkError') && e.checkError === undefined).toBe(true);
    }
  });

  it('the rows cover every error class the package exports', async () => {
    const exported = { ...(await import('../adapters/index.ts')), ...(await import('../adapters/kubernetes/index.ts')) };
    const classes = Object.entries(exported)
      .filter(([, v]) => typeof v === 'function' && v.prototype instanceof Error)
      .map(([name]) => name);
    // KubernetesApiError is a store's error passing through, not one of these: its fields are client-node's
    expect(classes.filter((c) => c !== 'KubernetesApiError').sort()).toEqual(ROWS.map(([name]) => name).sort());
  });

  it('a value JSON cannot hold is written as the message quotes it, and nothing makes it throw', () => {
    class Owner {}
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const loop: { name: string; self?: unknown } = { name: 'a' };
    loop.self = loop;
    const cases: [unknown, unknown][] = [
      [5n, '5n'],
      [Symbol('zone'), 'Symbol(zone) (symbol)'],
      [Number.NaN, 'NaN (number)'],
      [new Owner(), quoteInput(new Owner())],
      [revoked.proxy, quoteInput(revoked.proxy)],
      [
        ['10.0.0.1', 2n],
        ['10.0.0.1', '2n'],
      ],
      [loop, { name: 'a', self: { name: 'a', self: { name: 'a', self: { name: 'a', self: quoteInput(loop) } } } }],
    ];
    for (const [input, written] of cases) {
      const e = new InvalidAddressError(input, 'not a string');
      expect(JSON.parse(JSON.stringify(e)).input, String(written)).toEqual(written);
    }
    const own = new ErrFull();
    Object.defineProperty(own, 'requestId', { enumerable: true, get: () => 'r-1' });
    Object.defineProperty(own, 'broken', {
      enumerable: true,
      get: () => {
        throw new Error('no');
      },
    });
    expect(JSON.parse(JSON.stringify(own))).toEqual({
      name: 'ErrFull',
      message: 'range is full',
      code: 'ERR_RANGE_FULL',
      requestId: 'r-1',
      broken: 'a value that throws when read',
    });
  });
});
