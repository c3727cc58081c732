// Whether @kubernetes/client-node can load under this Node, told from package.json files alone.
//
// client-node 2.x depends on undici with a caret range that npm resolves to undici 8, which needs
// Node ≥ 22.19 (its `engines.node`) and throws while loading on Node 20. Node 20 then also
// reports the same error as an unhandled rejection from its module loader, which ends the process
// with exit code 1 whatever the importer does with the failed import. So the `ipallocator`
// command, and ipallocator/kubernetes (load-first.ts, evaluated before client-node), look before
// client-node loads: they resolve client-node as the cluster code would, then the undici
// client-node itself would load, and compare that undici's `engines.node` with the running Node.
// Anything they cannot read or do not understand (another layout, another engines range, a
// runtime without read access) says nothing, and the import goes ahead as before.
//
// Also the one place that loads what client-node itself sends requests with (requireFromClientNode).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { IPAllocatorError } from '../errors.ts';
import { installOf } from '../peer-install.ts';

interface PackageJson {
  version?: unknown;
  dependencies?: { undici?: unknown; [name: string]: unknown };
  engines?: { node?: unknown };
}

/**
 * A one-line explanation when the undici that @kubernetes/client-node (resolved from `from`, a
 * file path or URL) would load declares `engines.node: ">=X.Y.Z"` above `nodeVersion`; undefined
 * when it fits or when that cannot be told.
 * @internal
 */
export function clientNodeMismatch(from: string | URL, nodeVersion: string = process.versions.node): string | undefined {
  const clientNode = readPackage(from, '@kubernetes/client-node');
  if (clientNode === undefined || clientNode.json.dependencies?.undici === undefined) return undefined; // 1.x: node-fetch
  const undici = readPackage(clientNode.path, 'undici');
  const engines = undici?.json.engines?.node;
  const needed = typeof engines === 'string' ? /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(engines)?.[1] : undefined;
  const running = /^v?(\d+(?:\.\d+){0,2})/.exec(nodeVersion)?.[1];
  if (needed === undefined || running === undefined || compareVersions(running, needed) >= 0) return undefined;
  const said =
    `@kubernetes/client-node ${String(clientNode.json.version)} uses undici ${String(undici!.json.version)}, which needs Node ${needed} or later ` +
    `(this is Node ${nodeVersion}): use a newer Node, `;
  // npx installs what its -p options name into a cache of its own, where no package.json of yours
  // applies: naming client-node 1.4 there is the one fix
  if (installOf(String(from), false).kind === 'npx-cache') {
    return `${said}or name client-node 1.4 to npx: npx -p ipallocator -p @kubernetes/client-node@1.4 ipallocator …`;
  }
  // pinning undici 7 helps only where undici 7 loads (so it is not the undici refused here)
  const pinHelps = compareVersions(running, UNDICI_7_NODE) >= 0;
  return (
    said +
    (pinHelps ? 'or pin undici 7 with "overrides": {"undici": "7.30.2"} in your package.json and run npm install, ' : '') +
    'or install @kubernetes/client-node@1.4'
  );
}

/**
 * Throws an IPAllocatorError carrying clientNodeMismatch's line when client-node, resolved from
 * `from`, cannot load under this Node: the importer gets a catchable error, not a process ended.
 * @internal
 */
export function refuseUnloadableClientNode(from: string | URL, nodeVersion?: string): void {
  const mismatch = clientNodeMismatch(from, nodeVersion);
  if (mismatch !== undefined) throw new IPAllocatorError(`ipallocator/kubernetes cannot load: ${mismatch}`);
}

/**
 * `name` as @kubernetes/client-node loads it — node-fetch, which 1.x sends requests with, or
 * undici, which 2.x does — required from client-node's own folder (resolved from `from`, the
 * caller's `import.meta.url`), so that it is the very copy client-node uses. That takes client-node
 * on disk in node_modules: in a bundle that holds ipallocator and client-node and runs without
 * node_modules, in a CommonJS bundle, which leaves `import.meta` empty, or in a module loaded from
 * JSR (an https: URL) it is not there, and the IPAllocatorError says so, with what to do (`use`:
 * what it is needed for), rather than a bare "Cannot find module" or createRequire's TypeError.
 * @internal
 */
export function requireFromClientNode(name: string, use: string, from: unknown): unknown {
  let reason: unknown;
  if (typeof from === 'string' || from instanceof URL) {
    try {
      const clientNode = createRequire(from).resolve('@kubernetes/client-node/package.json');
      return createRequire(clientNode)(name);
    } catch (e) {
      reason = e;
    }
  }
  const inBundle =
    'In a bundle, leave ipallocator and @kubernetes/client-node out of it (esbuild --external:ipallocator --external:@kubernetes/client-node) and install them where the bundle runs';
  const where =
    reason === undefined
      ? `this module, which has no URL (a bundle in CommonJS). ${inBundle}`
      : /^https?:/i.test(String(from))
        ? `${String(from)}, a module not on disk (from JSR or another URL): import ipallocator from npm instead (npm:ipallocator/kubernetes)`
        : `${String(from)}: ${firstLine(reason)}. ${inBundle}`;
  const err = new IPAllocatorError(
    `ipallocator/kubernetes needs the ${name} of @kubernetes/client-node (${use}), loaded from client-node's folder in node_modules, and cannot load it from ${where}`,
  );
  if (reason !== undefined) err.cause = reason;
  throw err;
}

/** The first line of what was thrown (Node's "Cannot find module" goes on with a require stack). */
function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}

/** undici 7's `engines.node` (7.30.2: ">=20.18.1"). */
const UNDICI_7_NODE = '20.18.1';

/** The package.json of `name` as seen from `from`, or undefined. */
function readPackage(from: string | URL, name: string): { path: string; json: PackageJson } | undefined {
  try {
    const path = createRequire(from).resolve(`${name}/package.json`);
    const json: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof json === 'object' && json !== null ? { path, json: json as PackageJson } : undefined;
  } catch {
    return undefined;
  }
}

/** Compares dotted numeric versions ("22.19" = "22.19.0"). */
function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
