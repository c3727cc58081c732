// ipallocator/kubernetes: the Store over Kubernetes IPAddress objects.
// Requires the optional peer dependency @kubernetes/client-node (^1.4.0 || ^2.0.1).
import './load-first.ts'; // first: before any module that loads client-node
export { KubernetesStore, type KubernetesStoreOptions } from './store.ts';
export { KubernetesApiError, SyncBlockedError, SyncDeniedError, SyncTimeoutError, type ApiStatus } from './errors.ts';
export { KubeconfigCredentialError } from './user-checks.ts';
export type { InformerStats, WaitForSyncOptions } from './informer.ts';
export type { InformerState } from './informer-state.ts';
export type { BackoffOptions } from './backoff.ts';
export {
  toObject,
  toRecord,
  parseLabelSelector,
  type ApiVersion,
  type IPAddressObject,
  type LabelRequirement,
  type LabelSelector,
  type ObjectMetadata,
} from './objects.ts';
export {
  KubernetesServiceCIDRs,
  createServiceCIDR,
  deleteServiceCIDR,
  toServiceCIDR,
  readyCondition,
  SERVICE_CIDR_READY,
  type KubernetesServiceCIDRsOptions,
  type CreateServiceCIDROptions,
  type ServiceCIDRRecord,
  type ServiceCIDRObject,
} from './service-cidrs.ts';
