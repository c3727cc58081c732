// `ipallocator map`: the Hilbert layout's laws, and the SVG parsed back — every cell's position
// and colour class compared with the addresses the test allocated, from a cluster (the double)
// and from Range snapshot files, one address per cell and aggregated into blocks.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { calculateRangeOffset } from '../adapters/geometry.ts';
import { seededRandom } from '../adapters/random.ts';
import { Range } from '../adapters/range.ts';
import { Prefix } from '../adapters/geometry.ts';
import { gridSize, hilbertCell } from '../cli/hilbert.ts';
import { cellClass, emptyMap, markAllocated } from '../cli/map.ts';
import { offsetIn, parseAddress } from '../cli/ranges.ts';
import { renderSVG } from '../cli/svg.ts';
import { addIPAddress, addServiceCIDR, cli, saidByCli, skipReasons, startCluster, type Cluster } from './cli-helpers.ts';

/** The rectangles of one path's data: one row high ("Mx yhNv1h-Nz"), `run` cells wide. */
function parseRuns(d: string): { x: number; y: number; run: number }[] {
  expect(d.replace(/M\d+ \d+h(\d+)v1h-\1z/g, '')).toBe(''); // nothing but such rectangles
  return [...d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)].map((p) => ({ x: Number(p[1]), y: Number(p[2]), run: Number(p[3]) }));
}

/** The cells of a map SVG: class → list of "x,y", read from the path data. */
function parseCells(svg: string): Map<string, string[]> {
  const cells = new Map<string, string[]>();
  for (const m of svg.matchAll(/<path class="cell ([a-z]+(?:-\d)?)" data-cells="(\d+)" fill="#[0-9a-f]{6}" d="([^"]*)"\/>/g)) {
    const positions = parseRuns(m[3]!).flatMap(({ x, y, run }) => Array.from({ length: run }, (_, i) => `${x + i},${y}`));
    expect(positions.length).toBe(Number(m[2]));
    expect(cells.has(m[1]!)).toBe(false);
    cells.set(m[1]!, positions);
  }
  return cells;
}

/** class of each position, checking every grid position appears exactly once. */
function classAt(svg: string, bits: number): Map<string, string> {
  const at = new Map<string, string>();
  for (const [cls, list] of parseCells(svg)) {
    for (const p of list) {
      expect(at.has(p)).toBe(false);
      at.set(p, cls);
    }
  }
  const { width, height } = gridSize(bits);
  expect(at.size).toBe(width * height);
  return at;
}

const pos = (bits: number, d: number) => {
  const { x, y } = hilbertCell(bits, d);
  return `${x},${y}`;
};

/** Writes a snapshot file as `map --snapshot` reads it. */
function writeSnapshot(path: string, range: Range): void {
  const s = range.snapshot();
  writeFileSync(path, JSON.stringify({ ...s, data: Buffer.from(s.data).toString('base64') }));
}

describe('the Hilbert layout', () => {
  for (const bits of [0, 1, 2, 3, 4, 7, 10, 14]) {
    it(`visits each of 2^${bits} cells once, moving to a neighbour each step, from the top left to the top right`, () => {
      const { width, height } = gridSize(bits);
      expect(width * height).toBe(2 ** bits);
      const seen = new Set<string>();
      let prev: { x: number; y: number } | undefined;
      for (let d = 0; d < 2 ** bits; d++) {
        const p = hilbertCell(bits, d);
        expect(p.x >= 0 && p.x < width && p.y >= 0 && p.y < height).toBe(true);
        seen.add(`${p.x},${p.y}`);
        if (prev) expect(Math.abs(p.x - prev.x) + Math.abs(p.y - prev.y)).toBe(1);
        prev = p;
      }
      expect(seen.size).toBe(2 ** bits);
      expect(hilbertCell(bits, 0)).toEqual({ x: 0, y: 0 });
      expect(hilbertCell(bits, 2 ** bits - 1)).toEqual({ x: width - 1, y: 0 });
    });
  }
});

describe('the SVG of a map', () => {
  // Each row's adjacent cells of one class are drawn as one rectangle: the picture is the one a
  // unit square per cell draws (the class of every cell as the curve puts it), with less path data.
  const rows: { name: string; cidr: string; allocated: number; outlined: boolean }[] = [
    { name: 'a /16, blocks of 4 addresses shaded by fill', cidr: '10.0.0.0/16', allocated: 30_000, outlined: false },
    { name: 'a /19, an odd grid (two squares side by side)', cidr: '10.0.0.0/19', allocated: 2_000, outlined: false },
    { name: 'an empty map: nothing allocated, runs reaching the end of their row', cidr: 'fd00::/114', allocated: 0, outlined: false },
    { name: 'a full map', cidr: '10.0.0.0/18', allocated: 16_382, outlined: false },
    { name: 'a /24 in big cells, each outlined, so each its own square', cidr: '10.0.0.0/24', allocated: 100, outlined: true },
    { name: 'one cell', cidr: '10.0.0.1/32', allocated: 0, outlined: true },
  ];
  for (const row of rows) {
    it(`covers each cell once, in its class, with maximal runs: ${row.name}`, () => {
      const map = emptyMap(Prefix.parse(row.cidr));
      if (row.allocated > 0) {
        const range = new Range(row.cidr, { random: seededRandom(7) });
        try {
          range.allocateMany(row.allocated);
          range.forEach((ip) => markAllocated(map, ...offsetIn(range.prefix, parseAddress(ip)!)!));
        } finally {
          range.destroy();
        }
      }
      const svg = renderSVG(map, 'test');
      const expected = new Map<string, string>();
      for (let d = 0; d < 2 ** map.cellBits; d++) expected.set(pos(map.cellBits, d), cellClass(map, d));
      expect(new Map([...classAt(svg, map.cellBits)].sort())).toEqual(new Map([...expected].sort()));
      for (const m of svg.matchAll(/<path class="cell ([a-z]+(?:-\d)?)" [^>]* d="([^"]*)"\/>/g)) {
        for (const { x, y, run } of parseRuns(m[2]!)) {
          if (row.outlined) expect(run).toBe(1);
          else {
            // no neighbour on the row of the same class was left out of the rectangle
            expect(expected.get(`${x - 1},${y}`)).not.toBe(m[1]);
            expect(expected.get(`${x + run},${y}`)).not.toBe(m[1]);
          }
        }
      }
    });
  }
});

describe('ipallocator map', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-map-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('from a cluster', () => {
    let c: Cluster;
    beforeEach(async () => {
      c = await startCluster();
    });
    afterEach(async () => {
      await c.close();
    });

    it('draws a /24 one address per cell: each allocated address where the curve puts it, the rest free, network and broadcast apart', async () => {
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24']);
      const rnd = seededRandom(24);
      const taken = new Set<number>(); // index in the /24 (0 = network)
      while (taken.size < 40) taken.add(1 + (rnd.nextU32() % 254));
      for (const i of taken) addIPAddress(c.double, `10.96.0.${i}`, { namespace: 'default', name: `s${i}` });
      addIPAddress(c.double, '10.97.0.1', { namespace: 'default', name: 'elsewhere' }); // not in the map
      const out = join(dir, 'v4.svg');
      const r = await cli(['map', '10.96.0.0/24', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`wrote ${JSON.stringify(out)}: 10.96.0.0/24, 256 cells of 1 address; 40 of 254 addresses allocated\n`);
      const svg = readFileSync(out, 'utf8');
      const at = classAt(svg, 8);
      const staticBand = calculateRangeOffset('10.96.0.0/24');
      for (let i = 0; i < 256; i++) {
        const band = i === 0 || i === 255 ? 'reserved' : i <= staticBand ? 'static' : 'dynamic';
        const want = band === 'reserved' ? 'reserved' : `${band}-${taken.has(i) ? 5 : 0}`;
        expect(at.get(pos(8, i))).toBe(want);
      }
      const staticTaken = [...taken].filter((i) => i <= staticBand).length;
      expect(svg).toContain(`allocated 40 of 254`);
      expect(svg).toContain(`static band ${staticTaken} of ${staticBand}`);
      expect(svg).toContain(`static band, allocated — ${staticTaken} cells`);
    });

    it('draws a /64 as 16,384 blocks of 2^50 addresses, shading the one that holds the allocations', async () => {
      addServiceCIDR(c.double, 'kubernetes', ['fd00:10:96::/64']);
      for (const h of ['1', '2', 'ff', '1:0:0']) addIPAddress(c.double, `fd00:10:96::${h}`, { namespace: 'default', name: `s${h}` });
      const r = await cli(['map', 'fd00:10:96::/64', '--kubeconfig', c.kubeconfig]); // stdout is not a terminal: SVG there
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^<svg [^>]*data-cell-bits="14" data-block-bits="50"/);
      const at = classAt(r.stdout, 14);
      // fd00:10:96::1:0:0 is offset 2^32 − 1 from the first address: still block 0 (2^50 wide).
      expect(at.get(pos(14, 0))).toBe('dynamic-1');
      const others = [...at.entries()].filter(([p]) => p !== pos(14, 0)).map(([, cls]) => cls);
      expect(new Set(others)).toEqual(new Set(['dynamic-0']));
      expect(r.stdout).toContain('allocated 4 of 18,446,744,073,709,551,615');
    });
    it('counts an IPAddress the server lists several times (a broken server or proxy) once, as status does', async () => {
      // Regression: every copy was counted, up to "5 of 2 addresses allocated" in a /30.
      const d = c.double;
      addServiceCIDR(d, 'kubernetes', ['10.96.0.0/30']);
      addIPAddress(d, '10.96.0.1', { namespace: 'default', name: 'web' });
      const [only] = d.objects();
      const list = { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: d.resourceVersion } };
      d.proxyAnswerNext('list', 'ipaddresses', { ...list, items: [only, only, only, only, only] });
      const out = join(dir, 'listed-five-times.svg');
      const r = await cli(['map', '10.96.0.0/30', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toBe(`wrote ${JSON.stringify(out)}: 10.96.0.0/30, 4 cells of 1 address; 1 of 2 addresses allocated\n`);
      expect(classAt(readFileSync(out, 'utf8'), 2).get(pos(2, 1))).toMatch(/-5$/);
    });

    // Regression: a CIDR no ServiceCIDR holds was drawn as an empty map without a word, as if
    // the range were unused; it is drawn (a range planned, or strays outside every ServiceCIDR)
    // with a note on stderr, exit 0, as status lists what lies outside every ServiceCIDR apart
    it('says when the CIDR is in no ServiceCIDR (a note, the ServiceCIDRs, exit 0), and draws it', async () => {
      const d = c.double;
      addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24', 'fd00:10:96::/112']);
      addIPAddress(d, '10.200.0.5', { namespace: 'default', name: 'stray' });
      const out = join(dir, 'in-no-servicecidr.svg');
      const r = await cli(['map', '10.200.0.0/24', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(r).toEqual({
        code: 0,
        stdout: `wrote ${JSON.stringify(out)}: 10.200.0.0/24, 256 cells of 1 address; 1 of 254 addresses allocated\n`,
        stderr:
          'ipallocator: note: 10.200.0.0/24 is in no ServiceCIDR of context "double" (kubernetes: 10.96.0.0/24, fd00:10:96::/112): ' +
          'no Service is given a ClusterIP from it\n',
      });
      // inside a ServiceCIDR, or holding one, or overlapping one: no note
      for (const cidr of ['10.96.0.0/24', '10.96.0.128/25', '10.96.0.0/16', 'fd00:10:96::/120']) {
        const inside = await cli(['map', cidr, '--out', out, '--kubeconfig', c.kubeconfig]);
        expect([cidr, inside.code, inside.stderr]).toEqual([cidr, 0, '']);
      }
    });

    it('says when the cluster has no ServiceCIDR, and, when servicecidrs may not be listed, that it could not tell', async () => {
      const out = join(dir, 'no-servicecidr.svg');
      const none = await cli(['map', '10.96.0.0/24', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect([none.code, none.stderr]).toEqual([
        0,
        'ipallocator: note: 10.96.0.0/24 is in no ServiceCIDR of context "double" (it has none): no Service is given a ClusterIP from it\n',
      ]);
      // the map needs only to list ipaddresses: a 403 on servicecidrs is said, and the map drawn
      c.double.denyAccess('list', 'servicecidrs');
      const denied = await cli(['map', '10.96.0.0/24', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(denied.code).toBe(0);
      expect(denied.stderr).toMatch(
        /^ipallocator: note: cannot tell whether 10\.96\.0\.0\/24 is in a ServiceCIDR: permission denied: context "double" may not list servicecidrs [^\n]*\n$/,
      );
      expect(denied.stdout).toBe(`wrote ${JSON.stringify(out)}: 10.96.0.0/24, 256 cells of 1 address; 0 of 254 addresses allocated\n`);
    });

    it('draws the map when the ServiceCIDR listing fails for another reason (a malformed listing), saying it could not tell and why', async () => {
      // Regression: only a 403 on servicecidrs was said as a note; any other failure of that
      // listing, which feeds nothing but the note, failed the whole command
      addIPAddress(c.double, '10.96.0.5', { namespace: 'default', name: 'web' });
      const r = c.double.insert(
        { metadata: { name: 'broken' }, spec: { cidrs: ['10.96.0.0/24'] }, status: 'not an object' },
        'servicecidrs',
      );
      expect('code' in r).toBe(false);
      const out = join(dir, 'malformed-servicecidrs.svg');
      const malformed = await cli(['map', '10.96.0.0/24', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(malformed.code).toBe(0);
      expect(malformed.stderr).toMatch(
        /^ipallocator: note: cannot tell whether 10\.96\.0\.0\/24 is in a ServiceCIDR: [^\n]* answered list servicecidrs[^\n]* with a malformed body: [^\n]+\n$/,
      );
      expect(malformed.stdout).toBe(`wrote ${JSON.stringify(out)}: 10.96.0.0/24, 256 cells of 1 address; 1 of 254 addresses allocated\n`);
    });

    it('says "1 of 1 address" for a range of one address', async () => {
      const d = c.double;
      addServiceCIDR(d, 'kubernetes', ['fd00::/127']);
      addIPAddress(d, 'fd00::1', { namespace: 'default', name: 'web' });
      const out = join(dir, 'one-address.svg');
      const r = await cli(['map', 'fd00::/127', '--out', out, '--kubeconfig', c.kubeconfig]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toBe(`wrote ${JSON.stringify(out)}: fd00::/127, 2 cells of 1 address; 1 of 1 address allocated\n`);
    });

    it("names the context in the SVG as status does: in quotes, as Go's %q, when it would not read as itself", async () => {
      // Regression: the name went into the SVG bare; a control character in it (the kubeconfig's
      // "\e") made the file no XML at all, which no viewer opens
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/30']);
      const text = readFileSync(c.kubeconfig, 'utf8');
      for (const [name, said] of [
        ['e\u001b[31m', '&quot;e\\x1b[31m&quot;'],
        ['sp ', '&quot;sp &quot;'],
        ['plain-name', 'plain-name'],
      ]) {
        writeFileSync(
          c.kubeconfig,
          text
            .replace('- name: double\n  context:', `- name: ${JSON.stringify(name)}\n  context:`)
            .replace('current-context: double', `current-context: ${JSON.stringify(name)}`),
        );
        const r = await cli(['map', '10.96.0.0/30', '--kubeconfig', c.kubeconfig]);
        expect(r).toMatchObject({ code: 0, stderr: '' });
        expect(r.stdout).toContain(`>IPAddress objects of context ${said}; 4 cells of one address</text>`);
        // no control character but a tab or a line break: XML 1.0 allows no other
        expect([...r.stdout].filter((ch) => ch < ' ' && !'\t\n\r'.includes(ch))).toEqual([]);
      }
    });

    it('refuses --out naming the kubeconfig it reads, which the SVG would replace (exit 2)', async () => {
      // Regression: `map CIDR --kubeconfig k --out k` listed the cluster, then wrote the SVG over
      // the kubeconfig: its credentials were gone
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/30']);
      const before = readFileSync(c.kubeconfig, 'utf8');
      const link = join(dir, 'kubeconfig-link');
      symlinkSync(c.kubeconfig, link);
      for (const out of [c.kubeconfig, link]) {
        const r = await cli(['map', '10.96.0.0/30', '--kubeconfig', c.kubeconfig, '--out', out]);
        expect(r).toEqual({
          code: 2,
          stdout: '',
          stderr: `ipallocator: --out ${JSON.stringify(out)} is the kubeconfig it reads (--kubeconfig ${JSON.stringify(c.kubeconfig)}): the SVG would replace it; write it elsewhere\nRun 'ipallocator map --help' for usage.\n`,
        });
        expect(readFileSync(c.kubeconfig, 'utf8')).toBe(before);
      }
      rmSync(link);
    });

    // Regression: `map CIDR --out /no/such/folder/x.svg` (or --out naming a folder) listed every
    // IPAddress of the cluster first, then failed to write, with Node's "ENOENT: …, open" or
    // "EISDIR: illegal operation on a directory".
    it('refuses, before any request, an --out that is a folder, or whose folder does not exist or is a file (exit 2)', async () => {
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/30']);
      const file = join(dir, 'plain-file');
      writeFileSync(file, 'x');
      for (const [out, said] of [
        [dir, `--out ${JSON.stringify(dir)} is a folder: name the file to write the SVG to`],
        [
          join(dir, 'no-such', 'x.svg'),
          `--out ${JSON.stringify(join(dir, 'no-such', 'x.svg'))}: the folder ${JSON.stringify(join(dir, 'no-such'))} does not exist`,
        ],
        // quoted as Go's %q: a line break in a path does not break the message in two
        [
          join(dir, 'no\nsuch', 'x.svg'),
          `--out ${JSON.stringify(join(dir, 'no\nsuch', 'x.svg'))}: the folder ${JSON.stringify(join(dir, 'no\nsuch'))} does not exist`,
        ],
        [join(file, 'x.svg'), `--out ${JSON.stringify(join(file, 'x.svg'))}: ${JSON.stringify(file)} is not a folder`],
      ] as const) {
        const r = await cli(['map', '10.96.0.0/30', '--kubeconfig', c.kubeconfig, '--out', out]);
        expect(r).toEqual({ code: 2, stdout: '', stderr: `ipallocator: ${said}\nRun 'ipallocator map --help' for usage.\n` });
      }
      expect(c.double.requests).toEqual([]);
      rmSync(file);
    });

    // Regression: only --kubeconfig was compared with --out: `KUBECONFIG=k map CIDR --out k` (or
    // --out ~/.kube/config with neither set) wrote the SVG over the kubeconfig it had just read.
    it('refuses --out naming a file of $KUBECONFIG, or ~/.kube/config, which the SVG would replace (exit 2)', async () => {
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/30']);
      const before = readFileSync(c.kubeconfig, 'utf8');
      const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
      const home = join(dir, 'home');
      mkdirSync(join(home, '.kube'), { recursive: true });
      const homeConfig = join(home, '.kube', 'config');
      writeFileSync(homeConfig, before);
      try {
        for (const [list, out, said] of [
          [c.kubeconfig, c.kubeconfig, `$KUBECONFIG names ${JSON.stringify(c.kubeconfig)}`],
          // the second file of the list
          [
            [join(dir, 'missing'), homeConfig, c.kubeconfig].join(delimiter),
            c.kubeconfig,
            `$KUBECONFIG names ${JSON.stringify(c.kubeconfig)}`,
          ],
          [undefined, homeConfig, '~/.kube/config'],
        ] as const) {
          if (list === undefined) delete process.env.KUBECONFIG;
          else process.env.KUBECONFIG = list;
          process.env.HOME = home;
          const r = await cli(['map', '10.96.0.0/30', '--out', out]);
          expect(r).toEqual({
            code: 2,
            stdout: '',
            stderr: `ipallocator: --out ${JSON.stringify(out)} is the kubeconfig it reads (${said}): the SVG would replace it; write it elsewhere\nRun 'ipallocator map --help' for usage.\n`,
          });
          expect(readFileSync(out, 'utf8')).toBe(before);
        }
        expect(c.double.requests).toEqual([]);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    });
  });

  describe('from a Range snapshot file', () => {
    it('aggregates a /16 into 16,384 blocks of 4 addresses, each shaded by its fill', async () => {
      const range = new Range('10.0.0.0/16', { random: seededRandom(16) });
      try {
        range.allocateMany(30_000);
        for (let i = 1; i <= 40; i++) range.allocate(`10.0.0.${i}`); // static band, partly
        const file = join(dir, 's16.json');
        writeSnapshot(file, range);
        const r = await cli(['map', '--snapshot', file, '--out', join(dir, 's16.svg')]);
        expect(r.code).toBe(0);
        const at = classAt(readFileSync(join(dir, 's16.svg'), 'utf8'), 14);
        // Blocks of 4 take the shades 0, 1 (1 of 4), 2 (2 of 4), 3 (3 of 4) and 5; all occur.
        for (const level of [0, 1, 2, 3, 5]) expect(new Set(at.values())).toContain(`dynamic-${level}`);
        expect(new Set(at.values())).toContain('static-5');
        {
          const staticBand = calculateRangeOffset('10.0.0.0/16');
          // Index i of the /16 (0 = network): allocatable 1..65534, static 1..staticBand.
          for (let block = 0; block < 16384; block++) {
            let usable = 0;
            let used = 0;
            let statics = 0;
            for (let i = block * 4; i < block * 4 + 4; i++) {
              if (i === 0 || i === 65535) continue;
              usable++;
              if (i <= staticBand) statics++;
              if (range.has(`10.0.${i >> 8}.${i & 255}`)) used++;
            }
            const band = usable === 0 ? 'reserved' : statics >= usable - statics ? 'static' : 'dynamic';
            // Shades: 0 free, 1..4 up to 25 / 50 / 75 / under 100 %, 5 full.
            const share = used / usable;
            const level = used === 0 ? 0 : used === usable ? 5 : share <= 0.25 ? 1 : share <= 0.5 ? 2 : share <= 0.75 ? 3 : 4;
            expect(at.get(pos(14, block))).toBe(band === 'reserved' ? 'reserved' : `${band}-${level}`);
          }
        }
      } finally {
        range.destroy();
      }
    });

    // Regression: `--out -` wrote the SVG to a file named "-" in the working directory, and said
    // "wrote -: …" on standard output
    it('writes to standard output for --out -, on a terminal too; a path ending in /- is a file', async () => {
      const range = new Range('10.0.0.0/28', { random: seededRandom(28) });
      const file = join(dir, 's28.json');
      try {
        range.allocateMany(5);
        writeSnapshot(file, range);
      } finally {
        range.destroy();
      }
      const stray = join(process.cwd(), '-');
      const strayBefore = existsSync(stray);
      try {
        const piped = await cli(['map', '--snapshot', file]);
        expect(piped.code).toBe(0);
        expect(piped.stdout).toMatch(/^<svg /);
        expect(await cli(['map', '--snapshot', file, '--out', '-'])).toEqual(piped);
        expect(existsSync(stray)).toBe(strayBefore);
        // asked for by name, standard output is written even on a terminal (only the default refuses it)
        let out = '';
        const { run } = await import('../cli/main.ts');
        const { Readable } = await import('node:stream');
        const code = await run(['map', '--snapshot', file, '--out', '-'], {
          stdout: { write: (s: string) => (out += s), isTTY: true },
          stderr: { write: (s: string) => (out += s) },
          stdin: Readable.from([]),
        });
        expect({ code, out }).toEqual({ code: 0, out: piped.stdout });
        const named = join(dir, '-');
        const r = await cli(['map', '--snapshot', file, '--out', named]);
        expect(r).toEqual({
          code: 0,
          stdout: `wrote ${JSON.stringify(named)}: 10.0.0.0/28, 16 cells of 1 address; 5 of 14 addresses allocated\n`,
          stderr: '',
        });
        expect(readFileSync(named, 'utf8')).toBe(piped.stdout);
      } finally {
        if (!strayBefore) rmSync(stray, { force: true });
      }
    });

    // Regression: `--snapshot -` read a file named "-" ("cannot read -: ENOENT") where `--out -` writes standard output
    it('reads the snapshot from standard input for --snapshot -; a path ending in /- is a file', async () => {
      const range = new Range('10.0.0.0/28', { random: seededRandom(28) });
      const file = join(dir, 'stdin28.json');
      try {
        range.allocateMany(5);
        writeSnapshot(file, range);
      } finally {
        range.destroy();
      }
      const text = readFileSync(file, 'utf8');
      const fromFile = await cli(['map', '--snapshot', file]);
      const piped = await cli(['map', '--snapshot', '-'], { stdin: text });
      expect([piped.code, piped.stderr]).toEqual([0, '']);
      // the same drawing; the SVG names its source
      expect(piped.stdout).toContain('Range snapshot from standard input');
      expect(piped.stdout.replace('Range snapshot from standard input', '')).toBe(fromFile.stdout.replace(`Range snapshot ${file}`, ''));
      const out = join(dir, 'stdin28.svg');
      expect(await cli(['map', '--snapshot', '-', '--out', out], { stdin: text })).toEqual({
        code: 0,
        stdout: `wrote ${JSON.stringify(out)}: 10.0.0.0/28, 16 cells of 1 address; 5 of 14 addresses allocated\n`,
        stderr: '',
      });
      expect(await cli(['map', '10.0.0.0/28', '--snapshot', '-', '--out', out], { stdin: text })).toMatchObject({ code: 0 });
      expect(await cli(['map', '10.9.0.0/28', '--snapshot', '-'], { stdin: text })).toEqual({
        code: 2,
        stdout: '',
        stderr: "ipallocator: the snapshot in standard input is of 10.0.0.0/28, not 10.9.0.0/28\nRun 'ipallocator map --help' for usage.\n",
      });
      expect(await cli(['map', '--snapshot', '-'], { stdin: 'hello' })).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/^ipallocator: standard input is not a snapshot file: not JSON \(/),
      });
      // a file named "-" is named by a path
      const named = join(dir, '-');
      writeFileSync(named, text);
      const r = await cli(['map', '--snapshot', named]);
      expect(r.code).toBe(0);
      expect(r.stdout.replace(`Range snapshot ${named}`, '')).toBe(fromFile.stdout.replace(`Range snapshot ${file}`, ''));
    });

    it('--snapshot - refuses a terminal as standard input, and reads no more than 128 MiB from a pipe', async () => {
      const atTerminal = await cli(['map', '--snapshot', '-'], { stdin: '{}', stdinTTY: true });
      expect(atTerminal).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'ipallocator: --snapshot - reads the snapshot from standard input, which is a terminal: pipe it in (< FILE), or name the file\n' +
          "Run 'ipallocator map --help' for usage.\n",
      });
      // a pipe without end (`cat /dev/zero |`): refused once past the bound, read no further
      const MiB = 1024 * 1024;
      const chunk = Buffer.alloc(MiB, 0x20);
      let given = 0;
      const endless = new Readable({
        read() {
          given += 1;
          this.push(chunk);
        },
      });
      const r = await cli(['map', '--snapshot', '-'], { stdin: endless });
      expect(r).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'ipallocator: standard input is not a snapshot file: it holds more than 128 MiB (a snapshot of 10^7 addresses in a /64 is about 102 MiB)\n',
      });
      expect(given).toBeLessThan(128 + 16);
    });

    // Regression: said as Node's "cannot read x: ENOENT: no such file or directory, open 'x'"
    it('a snapshot file that does not exist is said in words, naming the option, as a missing kubeconfig is (exit 2)', async () => {
      const r = await cli(['map', '--snapshot', join(dir, 'missing.json')]);
      expect(r).toEqual({
        code: 2,
        stdout: '',
        stderr: `ipallocator: the file --snapshot names does not exist: ${JSON.stringify(join(dir, 'missing.json'))}\n`,
      });
    });

    it("refuses a CIDR other than the snapshot's, a file that is not a snapshot, and a corrupted copy (exit 2)", async () => {
      const range = new Range('10.1.0.0/24');
      range.allocate('10.1.0.7');
      const file = join(dir, 's24.json');
      writeSnapshot(file, range);
      range.destroy();
      const other = await cli(['map', '10.2.0.0/24', '--snapshot', file]);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(`the snapshot in ${JSON.stringify(file)} is of 10.1.0.0/24, not 10.2.0.0/24`);
      writeFileSync(join(dir, 'junk.json'), 'not json');
      const junk = await cli(['map', '--snapshot', join(dir, 'junk.json')]);
      expect(junk.code).toBe(2);
      expect(junk.stderr).toContain('is not a snapshot file');
      const snap = JSON.parse(readFileSync(file, 'utf8')) as { data: string };
      const bytes = Buffer.from(snap.data, 'base64');
      bytes[bytes.length - 1] ^= 0x10;
      writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...snap, data: bytes.toString('base64') }));
      const bad = await cli(['map', '--snapshot', join(dir, 'bad.json')]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/bad\.json": .*checksum/i);
      expect(bad.stderr).not.toMatch(/\n\s+at /);
    });

    it('reads a snapshot file saved with a UTF-8 byte order mark as the same snapshot', async () => {
      // Found by an outside test: an editor that saves UTF-8 with a BOM made the file "not JSON".
      const range = new Range('10.1.0.0/28');
      range.allocate('10.1.0.7');
      const plain = join(dir, 'plain.json');
      writeSnapshot(plain, range);
      range.destroy();
      const marked = join(dir, 'bom.json');
      writeFileSync(marked, `\uFEFF${readFileSync(plain, 'utf8')}`);
      const expected = await cli(['map', '--snapshot', plain]);
      expect(expected.code).toBe(0);
      const read = await cli(['map', '--snapshot', marked]);
      expect({ ...read, stdout: read.stdout.replaceAll('bom.json', 'plain.json') }).toEqual(expected);
    });

    it('refuses --out naming the snapshot file it reads, which the SVG would replace (exit 2)', async () => {
      // Regression: `map --snapshot s.json --out s.json` wrote the SVG over the snapshot
      const range = new Range('10.1.0.0/24');
      const file = join(dir, 'keep.json');
      writeSnapshot(file, range);
      range.destroy();
      const before = readFileSync(file, 'utf8');
      const link = join(dir, 'link.json');
      symlinkSync(file, link);
      for (const out of [file, link, join(dir, '.', 'keep.json')]) {
        const r = await cli(['map', '--snapshot', file, '--out', out]);
        expect(r).toEqual({
          code: 2,
          stdout: '',
          stderr: `ipallocator: --out ${JSON.stringify(out)} is the snapshot file it reads (--snapshot ${JSON.stringify(file)}): the SVG would replace it; write it elsewhere\nRun 'ipallocator map --help' for usage.\n`,
        });
        expect(readFileSync(file, 'utf8')).toBe(before);
      }
      expect((await cli(['map', '--snapshot', file, '--out', join(dir, 'keep.svg')])).code).toBe(0);
      // Regression: a device given as both was said to be replaced by the SVG; it holds nothing to
      // lose, and is said to be no snapshot file
      const dev = await cli(['map', '--snapshot', '/dev/null', '--out', '/dev/null']);
      expect([dev.code, dev.stderr]).toEqual([
        2,
        'ipallocator: "/dev/null" is not a snapshot file: it is a character device, not a regular file\n',
      ]);
    });

    it.skipIf(!existsSync('/dev/full'))(
      'says an --out it cannot write as every file an option names: the option, the file in quotes, why (exit 2)',
      async () => {
        const range = new Range('10.1.0.0/30');
        const file = join(dir, 'to-full.json');
        writeSnapshot(file, range);
        range.destroy();
        // a device that takes no byte: the write fails with ENOSPC, after every check before it
        const r = await cli(['map', '--snapshot', file, '--out', '/dev/full']);
        expect(r).toEqual({
          code: 2,
          stdout: '',
          stderr: 'ipallocator: cannot write the file --out names ("/dev/full"): no space left on the device (ENOSPC)\n',
        });
      },
    );

    it('refuses a file over 128 MiB, and anything but a regular file, with one line and exit 2 instead of reading it', async () => {
      // A regular file larger than the bound (sparse: no disk used) is refused by its size.
      const big = join(dir, 'big.json');
      writeFileSync(big, '');
      truncateSync(big, 128 * 1024 * 1024 + 1);
      const tooBig = await cli(['map', '--snapshot', big, '--out', join(dir, 'big.svg')]);
      expect(tooBig.code).toBe(2);
      expect(tooBig.stderr).toBe(
        `ipallocator: ${JSON.stringify(big)} is not a snapshot file: it holds more than 128 MiB (a snapshot of 10^7 addresses in a /64 is about 102 MiB)\n`,
      );
      // Regression: a device without end was read up to the bound, and a named pipe nothing
      // writes to held the command for ever (opening it waited for a writer): it is waited for 5 s.
      const fifo = join(dir, 'snapshot.pipe');
      execFileSync('mkfifo', [fifo]);
      for (const [path, what] of [
        ['/dev/zero', 'a character device'],
        [fifo, 'a named pipe (FIFO) nothing wrote to within 5 s'],
        [dir, 'a directory'],
      ] as const) {
        const r = await cli(['map', '--snapshot', path, '--out', join(dir, 'not-drawn.svg')]);
        expect([r.code, r.stderr]).toEqual([
          2,
          `ipallocator: ${JSON.stringify(path)} is not a snapshot file: it is ${what}, not a regular file\n`,
        ]);
      }
      expect(existsSync(join(dir, 'not-drawn.svg'))).toBe(false);
    });

    it('reads data wrapped across lines as `base64` prints it, and names data that is not base64 (exit 2)', async () => {
      const writeJson = (name: string, value: unknown): string => {
        writeFileSync(join(dir, name), JSON.stringify(value));
        return join(dir, name);
      };
      const range = new Range('10.1.0.0/20');
      for (let i = 1; i < 4000; i += 3) range.allocate(`10.1.${i >> 8}.${i & 255}`);
      const snap = range.snapshot();
      range.destroy();
      const text = Buffer.from(snap.data).toString('base64');
      expect(text.length).toBeGreaterThan(76);
      const flat = await cli(['map', '--snapshot', writeJson('flat.json', { ...snap, data: text }), '--out', join(dir, 'flat.svg')]);
      expect(flat.code).toBe(0);
      const wrapped = `${text.replace(/.{76}/g, '$&\n')}\n`;
      const r = await cli(['map', '--snapshot', writeJson('wrapped.json', { ...snap, data: wrapped }), '--out', join(dir, 'wrapped.svg')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const drawing = (name: string) => readFileSync(join(dir, name), 'utf8').replaceAll(join(dir, name.replace('.svg', '.json')), 'FILE');
      expect(drawing('wrapped.svg')).toBe(drawing('flat.svg'));
      // not base64: a foreign character, a lone last character, padding that completes no group,
      // spaces (base64 -d refuses them too)
      for (const data of [`${text.slice(0, 8)}!${text.slice(9)}`, 'AAAAA', 'A=', 'AAAAA=', 'AA=', 'QU JD', '\u00a0AAAA']) {
        const r = await cli(['map', '--snapshot', writeJson('notb64.json', { ...snap, data, length: undefined, checksum: undefined })]);
        expect([data, r.code]).toEqual([data, 2]);
        expect(r.stderr).toContain('notb64.json": the snapshot\'s data is not base64');
      }
      const bad = await cli(['map', '--snapshot', writeJson('notb64.json', { ...snap, data: `${text.slice(0, 8)}!${text.slice(9)}` })]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('notb64.json": the snapshot\'s data is not base64');
    });
  });

  it("refuses, with the MetaAllocator's reason and exit 2, every range it skips: given as a CIDR or as a snapshot's range alike", async () => {
    // Regression: ::/64 (over the IPv4-mapped block) and 255.255.255.255/32 were drawn, and a
    // snapshot of a Range('2001:db8::/48') was drawn whole while `map 2001:db8::/48` was refused.
    const cidrs = ['::/64', '::fffe:0:0/95', '255.255.255.255/32', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', '2001:db8::/48'];
    const serviceCIDRs = cidrs.map((cidr, i) => [`r${i}`, [cidr]] as const);
    const reasons = skipReasons(serviceCIDRs);
    expect([...reasons.keys()].sort()).toEqual([...cidrs].sort());
    const c = await startCluster();
    try {
      for (const [name, list] of serviceCIDRs) addServiceCIDR(c.double, name, [...list], true);
      addIPAddress(c.double, '::5', { namespace: 'default', name: 'in-mapped' });
      for (const cidr of cidrs) {
        const out = join(dir, 'refused.svg');
        const r = await cli(['map', cidr, '--out', out, '--kubeconfig', c.kubeconfig]);
        expect(r).toEqual({ code: 2, stdout: '', stderr: `ipallocator: cannot draw "${cidr}": ${saidByCli(reasons.get(cidr)!)}\n` });
        expect(existsSync(out)).toBe(false);
        expect(c.double.requestsOf('list')).toEqual([]); // refused before asking the cluster anything
        await checkSnapshotOf(cidr, r, out);
      }
    } finally {
      await c.close();
    }

    /** A snapshot of a Range over `cidr`, when Range takes it, is refused with the same line. */
    async function checkSnapshotOf(cidr: string, refused: unknown, out: string): Promise<void> {
      // Range takes the /48 (its first 2^64 − 1 addresses) and the all-ones ranges (size 0); a
      // snapshot of one is refused with the same line.
      let range: Range;
      try {
        range = new Range(cidr);
      } catch {
        return; // Range refuses the IPv4-mapped overlap itself: no such snapshot exists
      }
      const file = join(dir, 'refused.json');
      try {
        if (range.size >= 3n) range.allocateMany(3);
        writeSnapshot(file, range);
      } finally {
        range.destroy();
      }
      const fromFile = await cli(['map', '--snapshot', file, '--out', out]);
      expect(fromFile).toEqual(refused);
      expect(existsSync(out)).toBe(false);
    }
    // Ranges the allocators take with size 0 are drawn as they are.
    for (const cidr of ['0.0.0.0/32', '10.0.0.1/32', 'fd00::/128']) {
      const range = new Range(cidr);
      const file = join(dir, 'empty.json');
      writeSnapshot(file, range);
      range.destroy();
      const r = await cli(['map', cidr, '--snapshot', file]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toMatch(/^<svg /);
    }
  });

  it('says in its help what a snapshot file holds, once', async () => {
    // Regression: "JSON Range.snapshot() as JSON with its data in base64"
    const { code, stdout } = await cli(['map', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /--snapshot FILE +read a Range snapshot file instead of the cluster: Range\.snapshot\(\)\n +as JSON, its data in base64/,
    );
    expect(stdout.match(/JSON/g)).toHaveLength(1);
  });

  it('needs --out on a terminal, and a CIDR or a snapshot', async () => {
    let out = '';
    const { run } = await import('../cli/main.ts');
    const { Readable } = await import('node:stream');
    const code = await run(['map', '10.0.0.0/24'], {
      stdout: { write: (s: string) => (out += s), isTTY: true },
      stderr: { write: (s: string) => (out += s) },
      stdin: Readable.from([]),
    });
    expect(code).toBe(2);
    expect(out).toContain('map writes SVG: pass --out FILE.svg');
    const none = await cli(['map']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('map needs a CIDR, or --snapshot FILE');
    const bad = await cli(['map', '10.0.0.0/33']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '"10.0.0.0/33" is not a CIDR such as 10.96.0.0/12 or fd00:10:96::/108: prefix length out of range (0..32 for IPv4)\n',
    );
    // Regression: fd00:10::/32 was drawn whole but counted only its first /64 (an allocated
    // fd00:10:96::10 showed as 0 allocated); kube-apiserver allocates from no such range.
    for (const cidr of ['fd00:10::/32', 'fd00:10:96::/63']) {
      const short = await cli(['map', cidr, '--out', '/dev/null']);
      expect(short).toEqual({
        code: 2,
        stdout: '',
        stderr: `ipallocator: cannot draw "${cidr}": shortest allowed prefix length for service CIDR is 64, got ${cidr.split('/')[1]}\n`,
      });
    }
    const mapped = await cli(['map', '::ffff:10.96.0.0/112']); // Go parses it; the reason says what is wrong
    expect(mapped.code).toBe(2);
    expect(mapped.stderr).toMatch(
      /^ipallocator: "::ffff:10\.96\.0\.0\/112" is not a CIDR such as .*: IPv4-mapped IPv6 prefix is ambiguous/,
    );
  });
});
