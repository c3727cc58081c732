// fsFailure says why fs failed, in words; it runs on an error path, so it must not throw itself.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fsFailure } from '../adapters/fs-failure.ts';

describe('fsFailure', () => {
  it('says a code it has no words for with the description of the message, whatever characters the code holds', () => {
    // the code was once put into a RegExp unescaped: `E(` threw a SyntaxError from the error
    // path, `E+` matched no message and came back as the bare code
    for (const code of ['E(', 'E(WEIRD)', 'E+']) {
      const e = Object.assign(new Error(`${code}: odd failure, open '/x'`), { code });
      expect(() => fsFailure(e), code).not.toThrow();
      expect(fsFailure(e), code).toBe(`odd failure (${code})`);
    }
  });

  it('says a code it has no words for with the description of the message (ECANCELED)', () => {
    const e = Object.assign(new Error('ECANCELED: operation canceled, read'), { code: 'ECANCELED' });
    expect(fsFailure(e)).toBe('operation canceled (ECANCELED)');
  });

  // Regression: Node's message was kept whole, and it quotes the path the sentence names already
  it("says a NUL in the path in words, without the path Node's message quotes, its code last", () => {
    let thrown: unknown;
    try {
      readFileSync('/tmp/a\0b');
    } catch (e) {
      thrown = e;
    }
    expect((thrown as { code?: unknown }).code).toBe('ERR_INVALID_ARG_VALUE');
    expect(fsFailure(thrown)).toBe('a file name cannot hold a NUL character (\\x00) (ERR_INVALID_ARG_VALUE)');
  });

  it('keeps the message of another failure that is no system error, without the value it quotes', () => {
    const e = Object.assign(new TypeError(`The "path" argument must be of type string. Received type number (1)`), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    expect(fsFailure(e)).toBe('The "path" argument must be of type string (ERR_INVALID_ARG_TYPE)');
  });

  it('is undefined for an error without a code', () => {
    expect(fsFailure(new Error('no code'))).toBeUndefined();
    expect(fsFailure('text')).toBeUndefined();
  });
});
