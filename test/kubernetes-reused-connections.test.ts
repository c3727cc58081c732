// withReusedConnections (adapters/kubernetes/reused-connections.ts): which requests share a
// dispatcher. Two settings that differ in any TLS option must never share one, as client-go's
// transport cache (k8s.io/client-go/transport/cache.go, tlsTransportCache) keys its transports by
// the whole TLS configuration: a connection made with one client certificate would otherwise
// carry the requests of another.
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withReusedConnections } from '../adapters/kubernetes/reused-connections.ts';

type MakeDispatcher = (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;

/** A KubeConfig as far as withReusedConnections reads it: one whose every dispatcher is new. */
function makingNew(): { createDispatcher: MakeDispatcher } {
  return { createDispatcher: () => ({ destroy() {} }) };
}

const cluster = { name: 'c', server: 'https://10.0.0.1:6443', skipTLSVerify: false } as Cluster;

function dispatcherFor(kc: KubeConfig, agentOptions: Record<string, unknown>): unknown {
  return (kc as unknown as { createDispatcher: MakeDispatcher }).createDispatcher(cluster, agentOptions);
}

describe('withReusedConnections', () => {
  it('the same server and TLS options give the same dispatcher; another CA or client certificate another', () => {
    const kc = withReusedConnections(makingNew() as unknown as KubeConfig);
    const first = dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c'), key: Buffer.from('k') });
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c'), key: Buffer.from('k') })).toBe(first);
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-2'), cert: Buffer.from('c'), key: Buffer.from('k') })).not.toBe(first);
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c2'), key: Buffer.from('k') })).not.toBe(first);
  });

  it('two certificate/key pairs whose bytes hold the separators of the other never share a dispatcher', () => {
    // the same bytes laid end to end, cut in two places: cert "C", key "K\0key\0bZ" against cert
    // "C\0key\0bK", key "Z"
    const kc = withReusedConnections(makingNew() as unknown as KubeConfig);
    const one = dispatcherFor(kc, { cert: Buffer.from('C'), key: Buffer.from('K\0key\0bZ') });
    const other = dispatcherFor(kc, { cert: Buffer.from('C\0key\0bK'), key: Buffer.from('Z') });
    expect(other).not.toBe(one);
    // and as text (a passphrase, a server name)
    const a = dispatcherFor(kc, { passphrase: 'p', servername: 'x\0servername\0string:y' });
    const b = dispatcherFor(kc, { passphrase: 'p\0servername\0string:x', servername: 'y' });
    expect(b).not.toBe(a);
  });
});
