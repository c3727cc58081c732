// Where this copy of ipallocator is installed, and so what adds a peer dependency beside it
// (prom-client for metrics, @kubernetes/client-node for the Kubernetes store and the command).
// A peer is resolved from the package's own location, not from the working directory, so the
// advice depends on the install, and under Deno on who laid it out:
//
//   Node  node_modules/ipallocator                     npm install PEER in that project (-g for a global one)
//         …/_npx/<hash>/node_modules/ipallocator        npx's cache: npx -p ipallocator -p PEER … (the command only)
//   Deno  its npm cache (npm:ipallocator, deno x)       deno add npm:PEER in the directory it runs in: Deno gives a
//                                                       cached package the peers that directory's deno.json names
//         <folder>/node_modules/.deno/…                 deno add npm:PEER in <folder> (a Deno project, or the hidden
//                                                       folder `deno install -g` keeps beside its script)
//         <folder>/node_modules/ipallocator             npm install PEER in <folder> (npm's layout: deno add would
//                                                       lay the folder out again, Deno's way)

/** The folder of a version in Deno's npm cache: 0.1.0, 1.0.0-rc.1, and _1 after it for a second copy. */
const CACHED_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:_\d+)?$/;

/** How the package was installed where the module at `moduleUrl` is loaded from. @internal */
export type Install =
  | { kind: 'node-project' }
  | { kind: 'npx-cache' }
  | { kind: 'deno-cache' }
  | { kind: 'deno-folder'; folder: string; laidOutBy: 'deno' | 'npm' };

/**
 * The install holding `moduleUrl` (a module of this package: its import.meta.url), under Deno
 * when `deno`. `folder` is the text of the URL (or path) before its node_modules segment. A
 * checkout, or files of your own with no node_modules in their path, count as a project: Deno
 * runs them with the project's package.json and node_modules (a deno.json's nodeModulesDir).
 * @internal
 */
export function installOf(moduleUrl: string, deno: boolean): Install {
  const segments = moduleUrl.split(/[\\/]/);
  if (!deno) return segments.includes('_npx') ? { kind: 'npx-cache' } : { kind: 'node-project' };
  // Deno's npm cache keeps a package at npm/<registry host>[/<registry path>]/<name>/<version>
  // (a registry's path, as a Nexus or GitLab one has, is part of the folder), wherever DENO_DIR is
  // (a CI may keep it inside a node_modules folder); `deno x` keeps its own. What follows the name
  // tells it from a checkout or an install, where the package's own folders follow.
  const named = segments.lastIndexOf('ipallocator');
  const cached = named >= 2 && CACHED_VERSION.test(segments[named + 1] ?? '') && segments.lastIndexOf('npm', named - 2) >= 0;
  if (cached || segments.includes('deno_x_cache')) return { kind: 'deno-cache' };
  // the node_modules that holds the package (Deno's layout: the one its .deno folder is in), not
  // the first one in the path: a project may itself lie inside a folder named node_modules
  const laidOut = segments.lastIndexOf('.deno');
  const at =
    laidOut > 0 && segments[laidOut - 1] === 'node_modules'
      ? laidOut - 1
      : named > 0 && segments[named - 1] === 'node_modules'
        ? named - 1
        : segments.indexOf('node_modules');
  if (at < 0) return { kind: 'node-project' };
  // a node_modules laid out by npm (or another Node package manager) is that manager's to change
  return { kind: 'deno-folder', folder: segments.slice(0, at).join('/'), laidOutBy: segments[at + 1] === '.deno' ? 'deno' : 'npm' };
}

/** Whether this runs under Deno. @internal */
export function underDeno(): boolean {
  return 'Deno' in globalThis;
}
