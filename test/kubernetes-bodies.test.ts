// What a message says about an answer's body, for each kind of body that reaches one: a 200
// answer's JSON that is not what was asked for (read through checkList, as the informer and the
// command line read it), a 200 answer's text that is not JSON (describeText) and an error answer
// that is no Status (describeAnswer). Both quote a few escaped words:
// a hostile body brings no control, zero-width or bidirectional character into a message.
import { describe, expect, it } from 'vitest';
import { checkList } from '../adapters/kubernetes/answers.ts';
import { describeText } from '../adapters/kubernetes/bodies.ts';
import { describeAnswer } from '../adapters/kubernetes/errors.ts';

const PROXY = 'not a Kubernetes Status (a proxy in front of the API server?)';

describe('a 200 answer that is no list is described, escaped and short', () => {
  it.each([
    ['a JSON string', 'hello', 'the JSON string "hello"'],
    ['a JSON string cut after 40 characters', `  ${'x'.repeat(41)}  `, `the JSON string "  ${'x'.repeat(38)}"…`],
    ['a JSON string cut by characters, not UTF-16 units', '😀'.repeat(41), `the JSON string "${'😀'.repeat(40)}"…`],
    ['an empty JSON string', '', 'the JSON string ""'],
    ['a JSON string holding a terminal escape', '\u001b[2Jgone', 'the JSON string "\\x1b[2Jgone"'],
    ['a JSON string holding a right-to-left override', 'ok\u202egnp.exe', 'the JSON string "ok\\u202egnp.exe"'],
    ['a JSON string holding a zero-width space', 'ok\u200b', 'the JSON string "ok\\u200b"'],
    ['a Status', { kind: 'Status', message: 'denied\u2028by policy' }, 'a Status object ("denied\\u2028by policy")'],
    ['a Status with a long message', { kind: 'Status', message: 'm'.repeat(100) }, `a Status object ("${'m'.repeat(80)}"…)`],
    ['another kind', { kind: 'Secret\u200b' }, 'an object of kind "Secret\\u200b"'],
    ['a number', 7, 'the JSON number 7'],
    ['null', null, 'null'],
    ['an array', [], 'a JSON array'],
  ])('%s', (_name, body, says) => {
    expect(checkList(body, 'IPAddressList')).toBe(`${says}, not an IPAddressList`);
  });

  it('reads no more than the start of a long JSON string', () => {
    const body = `start${'y'.repeat(5_000_000)}`;
    expect(checkList(body, 'IPAddressList')).toBe(`the JSON string "start${'y'.repeat(35)}"…, not an IPAddressList`);
  });
});

describe('a 200 answer that is not JSON is quoted the same way', () => {
  it.each([
    ['a login page', '<html><body>Sign in</body></html>', 'text, not JSON ("<html><body>Sign in</body></html>")'],
    ['text cut after 40 characters', `  ${'x'.repeat(41)}  `, `text, not JSON ("${'x'.repeat(40)}"…)`],
    ['text cut by characters, not UTF-16 units', '😀'.repeat(41), `text, not JSON ("${'😀'.repeat(40)}"…)`],
    ['blank text', ' \n\t ', 'an empty body'],
    ['a terminal escape', '\u001b[2Jgone', 'text, not JSON ("\\x1b[2Jgone")'],
    ['a right-to-left override', 'ok\u202egnp.exe', 'text, not JSON ("ok\\u202egnp.exe")'],
    ['a zero-width space', 'ok\u200b', 'text, not JSON ("ok\\u200b")'],
  ])('%s', (_name, body, says) => {
    expect(describeText(body)).toBe(says);
  });

  it('reads no more than the start of a long text', () => {
    const body = `${' '.repeat(10)}start${'y'.repeat(5_000_000)}`;
    expect(describeText(body)).toBe(`text, not JSON ("start${'y'.repeat(35)}"…)`);
  });
});

describe('an error answer that is no Status is described with the same escaping', () => {
  it.each([
    [
      'a right-to-left override',
      'ok\u202egnp.exe',
      `HTTP 502 Bad Gateway with a body of 12 bytes (text/plain), ${PROXY}: "ok\\u202egnp.exe"`,
    ],
    [
      'a line cut after 80 characters',
      'z'.repeat(81),
      `HTTP 502 Bad Gateway with a body of 81 bytes (text/plain), ${PROXY}: "${'z'.repeat(80)}"…`,
    ],
  ])('%s', (_name, body, says) => {
    expect(describeAnswer(502, undefined, body, { 'content-type': 'text/plain' })).toBe(says);
  });

  it('repeats a Status message up to 1,000 characters', () => {
    const status = { kind: 'Status', reason: 'InternalError', message: 'q'.repeat(1005) };
    expect(describeAnswer(500, status)).toBe(`HTTP 500 InternalError: ${'q'.repeat(1000)}… (5 more characters)`);
  });

  it('cuts a Status message before escaping it: never inside an escape, never between the halves of a character', () => {
    // 999 characters, then a zero-width space (escaped as 6 characters) at the 1,000th
    const zeroWidth = { kind: 'Status', reason: 'InternalError', message: `${'q'.repeat(999)}\u200bqqqq` };
    expect(describeAnswer(500, zeroWidth)).toBe(`HTTP 500 InternalError: ${'q'.repeat(999)}\\u200b… (4 more characters)`);
    // an emoji (two UTF-16 units) across the cut
    const pair = { kind: 'Status', reason: 'InternalError', message: `${'q'.repeat(999)}😀qqqq` };
    expect(describeAnswer(500, pair)).toBe(`HTTP 500 InternalError: ${'q'.repeat(999)}… (6 more characters)`);
  });
});
