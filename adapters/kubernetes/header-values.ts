// What a kubeconfig user's values may hold when they go into request headers (the token, `as`,
// `as-uid`, `as-groups`, `as-user-extra`), as kubectl sends them, how basic credentials are
// written into one, and how client-node's two majors send a header value. The checks before any request (user-checks.ts, impersonation.ts)
// ask these questions; neither module is below the other.
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * Whether `text` holds a control character no HTTP header value may hold: any below U+0020 but
 * the tab, and DEL. Go's HTTP client refuses such a header before anything is sent
 * (httpguts.ValidHeaderFieldValue: `net/http: invalid header field value`), so kubectl refuses
 * the value; fetch and node-fetch refuse it too, with a message quoting it.
 * @internal
 */
export function hasHeaderControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/**
 * Why `what` ("the token of user …") cannot be sent, as the end of a sentence starting with it:
 * it holds a control character (hasHeaderControlCharacter). The value is never shown.
 * @internal
 */
export function controlCharacterInside(what: string): string {
  return `${what} has a control character (a line break, a NUL, a DEL) inside it, ${NO_HEADER_HOLDS_IT}: remove it`;
}

/** Why a header value with a control character is refused, as kubectl refuses it; the value is not shown. @internal */
export const NO_HEADER_HOLDS_IT =
  'which no HTTP header may hold (kubectl refuses it too: "net/http: invalid header field value"; it is not shown)';

/**
 * Whether `kc` is client-node 1.x's, which sends through node-fetch: told by the method only it
 * has, applyToFetchOptions. node-fetch sends a header value as it is given, and joins the lines
 * of one header name into one; the fetch of 2.x (undici, Deno's) leaves spaces and line breaks
 * around a value out, and its dispatcher takes a header's values as lines of their own.
 * @internal
 */
export function sendsThroughNodeFetch(kc: KubeConfig): boolean {
  return typeof (kc as { applyToFetchOptions?: unknown }).applyToFetchOptions === 'function';
}

/** `Basic …` of `user:password` (a user's, a proxy URL's), as client-node and Go encode it: UTF-8, then base64. @internal */
export function basicAuthorization(credentials: string): string {
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}
