// The words of a create or delete that may have taken effect (its answer lost, or a 5xx) and was
// settled by reading its object back: the store's IPAddresses (store.ts) and deleteServiceCIDR's
// ServiceCIDRs (service-cidrs.ts) alike. Each error keeps the failure's own message, fields and
// cause, and says after it what the read-back found, or that it failed. Here too the words of a
// create or delete answered with a 2xx that is not what was asked for (malformedWriteAnswer),
// which may have taken effect as well: the store's, createServiceCIDR's and deleteServiceCIDR's.
import { KubernetesApiError, malformedAnswer } from './errors.ts';

/** What a create or delete whose outcome is not known may have done: `the object may have been deleted`. */
function mayHaveDone(verb: 'create' | 'delete'): string {
  return `the object may have been ${verb === 'delete' ? 'deleted' : 'created'}`;
}

/**
 * The error of a create or delete of `resource` answered with a 2xx that is not what was asked for
 * (`what`, in words: a proxy's page, `{}`, another object): the request may have taken effect, and
 * the message says so — `delete servicecidrs.networking.k8s.io "extra": the API server answered
 * with the JSON number 42, neither a Status nor the ServiceCIDR "extra" (the object may have been
 * deleted)`; with `watched`, for a caller whose cache a watch keeps, followed by `; the watch will
 * show it`.
 * @internal
 */
export function malformedWriteAnswer(
  verb: 'create' | 'delete',
  resource: string,
  name: string,
  what: string,
  watched = false,
): KubernetesApiError {
  return malformedAnswer(verb, resource, name, what, `${mayHaveDone(verb)}${watched ? '; the watch will show it' : ''}`);
}

/** The message of `error` without the `verb resource "name": ` a KubernetesApiError starts with. @internal */
export function detailOf(error: Error, verb: string, resource: string, name: string | undefined): string {
  const prefix = `${verb} ${resource} "${name}": `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/**
 * `error` (a KubernetesApiError of a create or delete of `resource`, e.g.
 * `ipaddresses.networking.k8s.io`) with `more` after its own message; its fields and cause kept.
 * @internal
 */
export function withDetail(error: KubernetesApiError, resource: string, more: string): KubernetesApiError {
  const verb = error.verb as 'create' | 'delete';
  const name = error.resourceName;
  return new KubernetesApiError(
    verb,
    resource,
    name,
    error.code,
    error.status,
    `${detailOf(error, verb, resource, name)}; ${more}`,
    error.cause,
    error.timeoutMs,
    error.resends,
    error.cutOffStatus,
  );
}

/**
 * The error of a create or delete of `resource` that may have taken effect (`failure`: its answer
 * lost, or a 5xx) and whose object could not be read back (`readFailure`: the get's error, or what
 * was wrong with its answer in words): `failure`'s own message, then what may have happened, e.g.
 * `create ipaddresses.networking.k8s.io "10.96.0.10": no answer from https://10.0.0.1:6443 within
 * 30000 ms (requestTimeoutMs); the object may have been created, and reading it back failed: HTTP
 * 503 …`. A create whose answer began with a 2xx (`began`: 201) made the object: said so. Its
 * fields and cause are `failure`'s; any other error is returned as it is.
 * @internal
 */
export function outcomeUnknown(failure: Error, resource: string, readFailure: Error | string, began?: number): Error {
  const verb = failure instanceof KubernetesApiError ? failure.verb : undefined;
  if (!(failure instanceof KubernetesApiError) || (verb !== 'create' && verb !== 'delete')) return failure;
  const name = failure.resourceName;
  const what =
    verb === 'create' && began !== undefined && began >= 200 && began < 300
      ? `the object was created (the API server answered ${began}) but its body was lost`
      : mayHaveDone(verb);
  const why = typeof readFailure === 'string' ? readFailure : detailOf(readFailure, 'get', resource, name);
  return withDetail(failure, resource, `${what}, and reading it back failed: ${why}`);
}
