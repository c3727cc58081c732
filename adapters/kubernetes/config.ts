// The constructor arguments KubernetesStore, KubernetesServiceCIDRs and the ServiceCIDR helpers
// share, checked in one place: a wrong one fails with InvalidArgumentError quoting it, before
// any request is made.
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidArgumentError, quoteInput } from '../errors.ts';
import type { ApiVersion } from './objects.ts';

/**
 * The KubeConfig to use: the one given, or — when undefined — $KUBECONFIG / ~/.kube/config
 * (client-node's loadFromDefault). Anything else (null, a path string, a plain object) is refused:
 * a KubeConfig from another copy of client-node is accepted by its shape (makeApiClient).
 */
export function kubeConfigOrDefault(kubeConfig: unknown, owner: string): KubeConfig {
  if (kubeConfig === undefined) {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    return kc;
  }
  if (typeof kubeConfig !== 'object' || kubeConfig === null || typeof (kubeConfig as KubeConfig).makeApiClient !== 'function') {
    throw new InvalidArgumentError(
      `${owner}: kubeConfig must be a KubeConfig from @kubernetes/client-node or undefined, got ${quoteInput(kubeConfig)}`,
    );
  }
  return kubeConfig as KubeConfig;
}

/** The options object: undefined → {}; anything but a plain object is refused. */
export function optionsObject<T extends object>(options: unknown, owner: string): Partial<T> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`${owner}: options must be an object, got ${quoteInput(options)}`);
  }
  return options as Partial<T>;
}

/** networking.k8s.io version: 'v1' (default) or 'v1beta1'. */
export function checkApiVersion(version: unknown): ApiVersion {
  if (version === undefined) return 'v1';
  if (version !== 'v1' && version !== 'v1beta1') {
    throw new InvalidArgumentError(`apiVersion must be "v1" or "v1beta1", got ${quoteInput(version)}`);
  }
  return version;
}

/** A label selector option: undefined or a string (trimmed; '' = none). */
export function selectorOption(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidArgumentError(`labelSelector must be a string, got ${quoteInput(value)}`);
  const text = value.trim();
  return text === '' ? undefined : text;
}
