// A small dependency-free SVG writer for the results chart: ns/op (log scale) against fill, one
// panel per range, one colour per implementation; solid = uniform fill, dashed = organic fill,
// a ring = the "range is full" answer. Plain SVG 1.1 (no CSS, no scripts) so browsers,
// ImageMagick and rsvg all draw it the same.
import type { Row } from './report.ts';
import { OPS, fmtNs } from './report.ts';

export const COLORS: Record<string, string> = {
  reference: '#d62728',
  'go-seed': '#e377c2',
  'go-master': '#bcbd22',
  'legacy-bitmap': '#ff7f0e',
  allocator: '#1f77b4',
  store: '#7f7f7f',
  range: '#2ca02c',
  core: '#9467bd',
  contiguous: '#8c564b',
};

/** A --baseline column (`allocator@HEAD~3`) is drawn in its implementation's colour, faded. */
function colorOf(impl: string): { stroke: string; opacity: number | undefined } {
  const at = impl.indexOf('@');
  if (at < 0) return { stroke: COLORS[impl] ?? '#000', opacity: undefined };
  return { stroke: COLORS[impl.slice(0, at)] ?? '#000', opacity: 0.45 };
}

/** Escapes text for XML character data and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** One element: tag, attributes (undefined ones dropped), children (already-serialised strings) or text. */
export function el(tag: string, attrs: Record<string, string | number | undefined>, ...children: string[]): string {
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${esc(typeof v === 'number' ? fmtNum(v) : v!)}"`)
    .join('');
  return children.length ? `<${tag}${a}>${children.join('')}</${tag}>` : `<${tag}${a}/>`;
}

export function text(x: number, y: number, s: string, attrs: Record<string, string | number | undefined> = {}): string {
  return el('text', { x, y, 'font-family': 'Helvetica, Arial, sans-serif', 'font-size': 11, fill: '#222', ...attrs }, esc(s));
}

function fmtNum(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

const SUP = '⁰¹²³⁴⁵⁶⁷⁸⁹';
function sup(n: number): string {
  return String(n)
    .split('')
    .map((d) => SUP[Number(d)])
    .join('');
}

interface Panel {
  title: string;
  cats: string[];
  xLabel: string;
  /** category index of a row, or −1 when the row is not plotted in this panel */
  catOf(r: Row): number;
  rows: Row[];
}

function panels(rows: Row[]): Panel[] {
  const plotted = rows.filter(
    (r) => r.impl !== 'boundary' && r.status === 'ok' && r.nsPerOp && (r.op === OPS.nextRelease || r.op === OPS.full),
  );
  const keys: string[] = [];
  for (const r of rows) {
    if (r.impl === 'boundary' || r.op === OPS.warm) continue;
    const k = `${r.family} ${r.prefix}`;
    if (!keys.includes(k)) keys.push(k);
  }
  return keys.map((k) => {
    const mine = plotted.filter((r) => `${r.family} ${r.prefix}` === k);
    const all = rows.filter((r) => `${r.family} ${r.prefix}` === k && (r.op === OPS.nextRelease || r.op === OPS.full));
    const byCount = all.some((r) => r.fill === null);
    if (byCount) {
      const counts = [...new Set(all.filter((r) => r.op === OPS.nextRelease).map((r) => r.fillCount ?? 0))].sort((a, b) => a - b);
      return {
        title: `${k} · allocateNext+release`,
        cats: counts.map((c) => (c === 0 ? '0' : Number.isInteger(Math.log10(c)) ? `10${sup(Math.log10(c))}` : c.toLocaleString('en-US'))),
        xLabel: 'addresses allocated',
        catOf: (r) => (r.op === OPS.nextRelease ? counts.indexOf(r.fillCount ?? 0) : -1),
        rows: mine,
      };
    }
    const fills = [...new Set(all.filter((r) => r.op === OPS.nextRelease).map((r) => r.fill ?? 0))].sort((a, b) => a - b);
    const hasFull = all.some((r) => r.op === OPS.full);
    return {
      title: `${k} · allocateNext+release`,
      cats: [...fills.map((f) => `${+(f * 100).toFixed(1)}%`), ...(hasFull ? ['full'] : [])],
      xLabel: 'fill',
      catOf: (r) => (r.op === OPS.full ? fills.length : fills.indexOf(r.fill ?? 0)),
      rows: mine,
    };
  });
}

export function chartSvg(rows: Row[], impls: readonly string[], subtitle: string): string {
  const ps = panels(rows);
  const cols = Math.min(3, Math.max(1, ps.length));
  const pw = 400;
  const ph = 290;
  const m = { l: 64, r: 16, t: 34, b: 44 };
  const W = cols * pw;
  const perLegendRow = Math.max(1, Math.floor((W - 16) / 150));
  const legendH = 44 + 26 * Math.ceil(impls.length / perLegendRow);
  const H = 46 + Math.ceil(ps.length / cols) * ph + legendH;
  const values = ps.flatMap((p) => p.rows.map((r) => r.nsPerOp!)).filter((v) => v > 0);
  const lo = Math.floor(Math.log10(values.length ? Math.min(...values) : 1));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(values.length ? Math.max(...values) : 1000)));
  const out: string[] = [];
  out.push(el('rect', { x: 0, y: 0, width: W, height: H, fill: '#ffffff' }));
  out.push(
    text(12, 20, 'ns per operation against fill (log scale) — allocateNext+release with the fill held, and "range is full"', {
      'font-size': 14,
      'font-weight': 'bold',
    }),
  );
  out.push(text(12, 36, subtitle, { 'font-size': 10, fill: '#555' }));
  ps.forEach((p, i) => {
    const ox = (i % cols) * pw;
    const oy = 46 + Math.floor(i / cols) * ph;
    const x0 = ox + m.l;
    const x1 = ox + pw - m.r;
    const y0 = oy + ph - m.b;
    const y1 = oy + m.t;
    const xs = (c: number): number => (p.cats.length === 1 ? (x0 + x1) / 2 : x0 + 14 + ((x1 - x0 - 28) * c) / (p.cats.length - 1));
    const ys = (v: number): number => y0 - ((Math.log10(v) - lo) / (hi - lo)) * (y0 - y1);
    out.push(text(x0, oy + 20, p.title, { 'font-size': 12, 'font-weight': 'bold' }));
    out.push(el('rect', { x: x0, y: y1, width: x1 - x0, height: y0 - y1, fill: 'none', stroke: '#999', 'stroke-width': 1 }));
    for (let d = lo; d <= hi; d++) {
      const y = ys(10 ** d);
      out.push(el('line', { x1: x0, y1: y, x2: x1, y2: y, stroke: '#e3e3e3', 'stroke-width': 1 }));
      out.push(
        text(
          x0 - 6,
          y + 4,
          fmtNs(10 ** d)
            .replace('.00', '')
            .replace('.0 ', ' '),
          { 'text-anchor': 'end', 'font-size': 10 },
        ),
      );
    }
    p.cats.forEach((c, j) => {
      out.push(el('line', { x1: xs(j), y1: y0, x2: xs(j), y2: y0 + 4, stroke: '#999' }));
      out.push(text(xs(j), y0 + 16, c, { 'text-anchor': 'middle', 'font-size': 10 }));
    });
    out.push(text((x0 + x1) / 2, y0 + 34, p.xLabel, { 'text-anchor': 'middle', 'font-size': 10, fill: '#555' }));
    for (const impl of impls) {
      const { stroke: color, opacity } = colorOf(impl);
      for (const kind of ['uniform', 'organic'] as const) {
        const pts = p.rows
          .filter(
            (r) =>
              r.impl === impl &&
              r.op === OPS.nextRelease &&
              (r.fillKind === kind || r.fillKind === 'none' || (r.fill === null && kind === 'uniform')),
          )
          .map((r) => [p.catOf(r), r.nsPerOp!] as const)
          .filter(([c]) => c >= 0)
          .sort((a, b) => a[0] - b[0]);
        if (kind === 'organic' && !p.rows.some((r) => r.impl === impl && r.fillKind === 'organic')) continue;
        if (pts.length > 1) {
          out.push(
            el('polyline', {
              points: pts.map(([c, v]) => `${fmtNum(xs(c))},${fmtNum(ys(v))}`).join(' '),
              fill: 'none',
              stroke: color,
              'stroke-width': 2,
              'stroke-dasharray': kind === 'organic' ? '6 4' : undefined,
              'stroke-opacity': opacity,
            }),
          );
        }
        for (const [c, v] of pts) out.push(el('circle', { cx: xs(c), cy: ys(v), r: 2.6, fill: color, 'fill-opacity': opacity }));
      }
      for (const r of p.rows.filter((x) => x.impl === impl && x.op === OPS.full)) {
        out.push(
          el('circle', {
            cx: xs(p.catOf(r)),
            cy: ys(r.nsPerOp!),
            r: 5,
            fill: 'none',
            stroke: color,
            'stroke-width': 2,
            'stroke-opacity': opacity,
          }),
        );
      }
    }
  });
  // legend
  const ly = H - legendH + 18;
  impls.forEach((impl, i) => {
    const x = 16 + (i % perLegendRow) * 150;
    const y = ly + 26 * Math.floor(i / perLegendRow);
    const { stroke, opacity } = colorOf(impl);
    out.push(el('line', { x1: x, y1: y, x2: x + 26, y2: y, stroke, 'stroke-width': 3, 'stroke-opacity': opacity }));
    out.push(text(x + 32, y + 4, impl));
  });
  const ly2 = ly + 26 * Math.ceil(impls.length / perLegendRow);
  out.push(el('line', { x1: 16, y1: ly2, x2: 42, y2: ly2, stroke: '#444', 'stroke-width': 2 }));
  out.push(text(48, ly2 + 4, 'uniform fill'));
  out.push(el('line', { x1: 146, y1: ly2, x2: 172, y2: ly2, stroke: '#444', 'stroke-width': 2, 'stroke-dasharray': '6 4' }));
  out.push(text(178, ly2 + 4, 'organic fill (repeated allocateNext)'));
  out.push(el('circle', { cx: 406, cy: ly2, r: 5, fill: 'none', stroke: '#444', 'stroke-width': 2 }));
  out.push(text(416, ly2 + 4, '"range is full" on a full range'));
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    el('svg', { xmlns: 'http://www.w3.org/2000/svg', version: '1.1', width: W, height: H, viewBox: `0 0 ${W} ${H}` }, ...out) +
    '\n'
  );
}
