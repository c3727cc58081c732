// What an answer's body is, in words for a message: the one place a message describes or quotes
// a body. Two kinds of body reach a message:
//
//   describeBody(body)                 a 2xx answer's JSON (answer-probe.ts) that is not what
//                                      was asked for (answers.ts): `{}`, a Status, `[]`, `42`,
//                                      `"hello"`, null, …
//   describeText(text)                 a 2xx answer's text that is not JSON (a login page's)
//   describeErrorBody(body, headers)   an error answer whose body is no Kubernetes Status
//                                      (errors.ts): a proxy's or load balancer's error page, a
//                                      text/plain line, an empty body
//
// Both read at most SCANNED_CHARS of a text body, quote at most a few dozen characters of it,
// and escape every character a reader could not see (quoteText: `\x1b`, `\n`, `\u202e`): a
// hostile body cannot start a line of its own, recolour a terminal or reorder what is shown.
// A Status's own message, which a message repeats whole, is cut at MESSAGE_CHARS (cutMessage).
import { cutText, formatCount, quoteText, showUnseen } from '../quote.ts';

/** How much of an error answer's body a message quotes, in characters. */
const EXCERPT_CHARS = 80;

/** How much of a decoded 200 answer's text, kind or JSON value a message quotes, in characters. */
const VALUE_CHARS = 40;

/**
 * How much of a body is searched for words to quote: a page's title or first line stands near
 * its start, and the patterns then cost at most linear time in these characters — a body of
 * megabytes (or one built to make a pattern backtrack) costs no more than this.
 */
const SCANNED_CHARS = 4096;

/** How much of a Status's message a message repeats, in characters (kube-apiserver's are short). */
const MESSAGE_CHARS = 1000;

/**
 * `text` cut to MESSAGE_CHARS, saying how much was left out; never between the two halves of a
 * character outside the BMP. Cut before it is escaped (showUnseen), so that no escape is cut.
 * @internal
 */
export function cutMessage(text: string): string {
  if (text.length <= MESSAGE_CHARS) return text;
  const cut = cutText(text, MESSAGE_CHARS);
  return `${cut}… (${formatCount(text.length - cut.length)} more characters)`;
}

/** `text` quoted and escaped (quoteText), cut to `chars` characters (code points) with "…" when longer. */
function excerpt(text: string, chars: number): string {
  const points = [...text.slice(0, 2 * chars + 2)]; // a code point is at most two UTF-16 units: chars + 1 of them, if there are
  return points.length > chars ? `${quoteText(points.slice(0, chars).join(''))}…` : quoteText(text);
}

/**
 * What an answer's JSON value is, in a few words: "a Status object (\"…\")", "an object of kind
 * \"Foo\"", "an empty object", "a JSON array", "the JSON number 42", "the JSON string
 * \"hello\"", "null", …
 * @internal
 */
export function describeBody(body: unknown): string {
  if (body === null) return 'null';
  if (body === undefined) return 'an empty body';
  if (typeof body === 'string') return `the JSON string ${excerpt(body.slice(0, SCANNED_CHARS), VALUE_CHARS)}`;
  if (Array.isArray(body)) return 'a JSON array';
  if (typeof body !== 'object') return `the JSON ${typeof body} ${showUnseen(String(body).slice(0, VALUE_CHARS))}`;
  const kind = (body as { kind?: unknown }).kind;
  if (typeof kind === 'string' && kind !== '') {
    const message = (body as { message?: unknown }).message;
    return kind === 'Status' && typeof message === 'string' && message !== ''
      ? `a Status object (${excerpt(message, EXCERPT_CHARS)})`
      : `an object of kind ${excerpt(kind, VALUE_CHARS)}`;
  }
  // every field undefined: `{}` (or client-node's typed object decoded from it)
  return Object.values(body).every((v) => v === undefined) ? 'an empty object' : 'an object without a kind';
}

/** A 2xx answer's text that is not JSON, in a few words: "text, not JSON (\"<html>…\")", or "an empty body". @internal */
export function describeText(body: string): string {
  const text = body.trimStart().slice(0, SCANNED_CHARS).trimEnd();
  return text === '' ? 'an empty body' : `text, not JSON (${excerpt(text, VALUE_CHARS)})`;
}

/**
 * An error answer's body that is no Status, in a few words: `with a body of 162 bytes
 * (text/html), not a Kubernetes Status (a proxy in front of the API server?): "502 Bad Gateway"`.
 * The words quoted are an HTML page's title, else the first line that is not blank (tags left
 * out for HTML), cut to EXCERPT_CHARS. `headers` are the answer's, for its content type.
 * @internal
 */
export function describeErrorBody(body: unknown, headers: unknown): string {
  const text = typeof body === 'string' ? body : safeJson(body);
  const type = contentType(headers);
  const size = text === '' ? 'an empty body' : `a body of ${formatCount(new TextEncoder().encode(text).length)} bytes`;
  const words = firstWords(text, type);
  return (
    `with ${size}${type === undefined ? '' : ` (${type})`}, not a Kubernetes Status (a proxy in front of the API server?)` +
    (words === '' ? '' : `: ${words}`)
  );
}

/** The media type of the answer's Content-Type (lower case, no parameters), when it is one. */
function contentType(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const entry = Object.entries(headers as Record<string, unknown>).find(([k]) => k.toLowerCase() === 'content-type');
  const value = typeof entry?.[1] === 'string' ? entry[1].split(';')[0]!.trim().toLowerCase() : '';
  // a token/token media type only; anything else is not repeated (it could carry text of any kind)
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(value) ? value : undefined;
}

/** The words of a body worth quoting, quoted and escaped; "" when there are none. */
function firstWords(body: string, type: string | undefined): string {
  let text = body.slice(0, SCANNED_CHARS);
  const html = type === 'text/html' || type === 'application/xhtml+xml' || /^\s*<(!doctype|html)/i.test(text);
  let words: string | undefined;
  if (html) {
    // [^<>]: a match attempt stops at the next '<', so neither pattern can backtrack far
    const title = /<title[^<>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    words = title?.trim() || undefined;
    text = text.replace(/<[^<>]*>/g, '\n');
  }
  words ??= text.split(/\r?\n|\r/).find((line) => line.trim() !== '');
  if (words === undefined) return '';
  return excerpt(words.trim().replace(/[ \t]+/g, ' '), EXCERPT_CHARS);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
