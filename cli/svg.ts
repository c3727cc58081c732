// The map as SVG: a title, the grid, a legend with the numbers, and where the curve starts and
// ends. Each colour class is one <path> in a scaled group, and carries its class and cell count;
// its data is one rectangle a cell high per run of that class along a row ("Mx yhNv1h-Nz": the
// same pixels as N unit squares in less text: docs/map-example.svg's 16,384 cells take 180 kB, not
// 238), except where cells are outlined, which takes a square per cell ("Mx yh1v1h-1z") so that
// each is stroked on all four sides:
//
//   <path class="cell dynamic-5" data-cells="12" fill="#08306b" d="M0 0h3v1h-3zM5 0h1v1h-1z…"/>
//
// Classes: "reserved" (network, IPv4 broadcast), "static-N" and "dynamic-N" with N the fill level
// (map.ts FILL_LEVELS: 0 free … 5 full).
import { formatAddr } from '../adapters/address.ts';
import { gridSize, hilbertCell } from './hilbert.ts';
import { FILL_LEVELS, cellClass, type RangeMap } from './map.ts';
import { formatCount } from './text.ts';

/** Fill colours per level, free (0) to full (5): blues for the dynamic band, oranges for the static one. */
export const COLOURS: Record<string, string> = {
  reserved: '#4a4a4a',
  'dynamic-0': '#e6edf3',
  'dynamic-1': '#b3cde3',
  'dynamic-2': '#6baed6',
  'dynamic-3': '#3182bd',
  'dynamic-4': '#08519c',
  'dynamic-5': '#08306b',
  'static-0': '#fdf0d5',
  'static-1': '#fdd49e',
  'static-2': '#fdbb84',
  'static-3': '#fc8d59',
  'static-4': '#e34a33',
  'static-5': '#b30000',
};

const LEVEL_LABELS = ['free', 'up to 25 % used', 'up to 50 % used', 'up to 75 % used', 'under 100 % used', 'full'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Renders the map; `source` names where the data came from (a context or a snapshot file). */
export function renderSVG(map: RangeMap, source: string): string {
  const { width, height } = gridSize(map.cellBits);
  const cellPx = Math.max(1, Math.min(32, Math.floor(512 / width)));
  const gridW = width * cellPx;
  const gridH = height * cellPx;
  const margin = 16;
  const top = 64;
  const legendX = margin + gridW + 28;
  // Big cells get a 1 px white outline, so single addresses can be counted by eye.
  const outlined = cellPx >= 8;

  // The class of each cell, row by row.
  const cells = 2 ** map.cellBits;
  const classOf = new Array<string>(cells);
  for (let d = 0; d < cells; d++) {
    const { x, y } = hilbertCell(map.cellBits, d);
    classOf[y * width + x] = cellClass(map, d);
  }
  // Path data and cell count by class: a rectangle per run of one class along a row, a square per
  // cell when outlined.
  const paths = new Map<string, { d: string[]; cells: number }>();
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; ) {
      const cls = classOf[row + x]!;
      let run = 1;
      if (!outlined) while (x + run < width && classOf[row + x + run] === cls) run++;
      let path = paths.get(cls);
      if (path === undefined) paths.set(cls, (path = { d: [], cells: 0 }));
      path.d.push(`M${x} ${y}h${run}v1h-${run}z`);
      path.cells += run;
      x += run;
    }
  }

  const p = map.prefix;
  const t = map.totals;
  const pct = t.size === 0n ? 0 : (t.used / Number(t.size)) * 100;
  const perCell = map.blockBits === 0 ? 'one address' : `${formatCount(1n << BigInt(map.blockBits))} addresses`;
  const first = formatAddr(p.version, p.network);
  const last = formatAddr(p.version, p.broadcast);

  const legend: string[] = [];
  let ly = top;
  const line = (text: string, bold = false) => {
    legend.push(`<text x="${legendX}" y="${ly + 12}"${bold ? ' font-weight="bold"' : ''}>${esc(text)}</text>`);
    ly += 20;
  };
  const swatch = (cls: string, label: string) => {
    const n = paths.get(cls)?.cells ?? 0;
    legend.push(`<rect x="${legendX}" y="${ly}" width="14" height="14" fill="${COLOURS[cls]}" stroke="#999" stroke-width="0.5"/>`);
    legend.push(`<text x="${legendX + 22}" y="${ly + 12}">${esc(`${label} — ${formatCount(n)} cell${n === 1 ? '' : 's'}`)}</text>`);
    ly += 20;
  };
  line('Addresses', true);
  line(`allocated ${formatCount(t.used)} of ${formatCount(t.size)} (${pct.toFixed(pct > 0 && pct < 0.1 ? 3 : 1)} %)`);
  line(`dynamic band ${formatCount(t.dynamicUsed)} of ${formatCount(t.dynamicSize)}`);
  line(`static band ${formatCount(t.staticUsed)} of ${formatCount(t.staticSize)}`);
  line(`not allocatable ${formatCount(t.reserved)}`);
  ly += 8;
  line(`Cells (each ${perCell})`, true);
  if (map.blockBits === 0) {
    swatch('dynamic-0', 'free');
    swatch(`dynamic-${FILL_LEVELS - 1}`, 'allocated');
    swatch('static-0', 'static band, free');
    swatch(`static-${FILL_LEVELS - 1}`, 'static band, allocated');
    swatch('reserved', p.version === 4 ? 'network / broadcast' : 'network address');
  } else {
    line('dynamic band:');
    for (let level = 0; level < FILL_LEVELS; level++) swatch(`dynamic-${level}`, LEVEL_LABELS[level]!);
    line('static band:');
    for (let level = 0; level < FILL_LEVELS; level++) swatch(`static-${level}`, LEVEL_LABELS[level]!);
    swatch('reserved', 'not allocatable');
  }

  const svgW = legendX + 300;
  const svgH = Math.max(top + gridH, ly) + 44;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${svgW}" height="${svgH}" viewBox="0 0 ${svgW} ${svgH}" ` +
      `font-family="Helvetica, Arial, sans-serif" font-size="13" data-cidr="${esc(p.cidr)}" data-cell-bits="${map.cellBits}" data-block-bits="${map.blockBits}">`,
  );
  const summary = `${p.cidr}: ${formatCount(t.used)} of ${formatCount(t.size)} addresses allocated, drawn on a Hilbert curve`;
  out.push(`<title>${esc(summary)}</title>`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(
    `<text x="${margin}" y="26" font-size="18" font-weight="bold">${esc(`${p.cidr} — ${p.family}, ${formatCount(t.used)} of ${formatCount(t.size)} allocated`)}</text>`,
  );
  out.push(
    `<text x="${margin}" y="46" fill="#555">${esc(`${source}; ${formatCount(cells)} ${cells === 1 ? 'cell' : 'cells'} of ${perCell}`)}</text>`,
  );
  const outline = outlined ? ` stroke="#ffffff" stroke-width="${(1 / cellPx).toFixed(4)}"` : '';
  out.push(`<g transform="translate(${margin} ${top}) scale(${cellPx})" shape-rendering="crispEdges"${outline}>`);
  const order = ['reserved', ...[...Array(FILL_LEVELS).keys()].flatMap((l) => [`static-${l}`, `dynamic-${l}`])];
  for (const cls of order) {
    const path = paths.get(cls);
    if (path === undefined) continue;
    out.push(`<path class="cell ${cls}" data-cells="${path.cells}" fill="${COLOURS[cls]}" d="${path.d.join('')}"/>`);
  }
  out.push('</g>');
  out.push(...legend);
  const footY = Math.max(top + gridH, ly) + 24;
  out.push(
    `<text x="${margin}" y="${footY}" fill="#555">${esc(`Hilbert curve: ${first} at the top left, ${last} at the top right; neighbouring addresses are neighbouring cells.`)}</text>`,
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}
