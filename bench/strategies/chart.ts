// Line charts for the strategy results: one panel, one line per strategy, linear or log axes.
// Plain SVG 1.1 through bench/svg.ts's writer, like the speed chart.
import { STRATEGY_NAMES } from '../../adapters/builtin-strategies.ts';
import { el, text } from '../svg.ts';

/** A line's look: its colour and its dash pattern (an SVG stroke-dasharray; undefined: solid). */
export interface LineStyle {
  readonly color: string;
  readonly dash: string | undefined;
}

export interface Series extends LineStyle {
  name: string;
  points: [number, number][];
}

export interface ChartSpec {
  title: string;
  subtitle: string;
  xLabel: string;
  yLabel: string;
  xLog?: boolean;
  /** Log y: values ≤ 0 are drawn at the floor (yFloor). */
  yLog?: boolean;
  yFloor?: number;
  xTicks: number[];
  yTicks: number[];
  fmtX?: (v: number) => string;
  fmtY?: (v: number) => string;
  series: Series[];
}

/** Line colours of the built-ins, taken in STRATEGY_NAMES's order: a new built-in gets the next. */
const BUILTIN_COLORS = ['#1f77b4', '#ff7f0e', '#8c564b', '#d62728', '#2ca02c', '#e377c2', '#7f7f7f', '#bcbd22'];

/** The dash of a built-in run with a cool-down. */
const COOLED_DASH = '6 4';

/** The lines of the run's own strategies: each built-in solid, and two of them with a cool-down. */
export const STRATEGY_STYLES: Readonly<Record<string, LineStyle>> = {
  ...Object.fromEntries(STRATEGY_NAMES.map((name, i) => [name, { color: BUILTIN_COLORS[i % BUILTIN_COLORS.length]!, dash: undefined }])),
  'upstream + cool-down 60 s': { color: '#17becf', dash: COOLED_DASH },
  'random-free + cool-down 60 s': { color: '#9467bd', dash: COOLED_DASH },
};

/** Line colours of strategies of your own (--strategy), none of them a built-in's. */
const OWN_COLORS = ['#000000', '#393b79', '#ad494a', '#637939', '#843c39', '#7b4173', '#8c6d31', '#0b6e6e'];

/**
 * Dash patterns of strategies of your own: solid, dotted, dash-dot, long dashes; none of them the
 * cool-down's. Each is taken with every colour before the next.
 */
const OWN_DASHES = [undefined, '2 3', '10 3 2 3', '14 4'];

/**
 * How many strategies of your own the charts tell apart, each by a look of its own (32: with the
 * built-ins, about as many lines as one panel can show); beyond, the looks repeat.
 */
export const OWN_STYLES = OWN_COLORS.length * OWN_DASHES.length;

/** The line of the `i`-th strategy of your own (from 0, in --strategy order). */
export function ownStyle(i: number): LineStyle {
  const k = i % OWN_STYLES;
  return { color: OWN_COLORS[k % OWN_COLORS.length]!, dash: OWN_DASHES[Math.floor(k / OWN_COLORS.length)] };
}

export function lineChart(c: ChartSpec): string {
  const W = 760;
  const legendRows = Math.ceil(c.series.length / 3);
  const H = 420 + 20 * legendRows;
  const m = { l: 70, r: 20, t: 56, b: 60 + 20 * legendRows };
  const x0 = m.l;
  const x1 = W - m.r;
  const y0 = H - m.b;
  const y1 = m.t;
  const tx = (v: number): number => (c.xLog ? Math.log10(v) : v);
  const ty = (v: number): number => (c.yLog ? Math.log10(Math.max(v, c.yFloor ?? 1e-3)) : v);
  const xMin = tx(c.xTicks[0]!);
  const xMax = tx(c.xTicks[c.xTicks.length - 1]!);
  const yMin = ty(c.yTicks[0]!);
  const yMax = ty(c.yTicks[c.yTicks.length - 1]!);
  const xs = (v: number): number => x0 + ((tx(v) - xMin) / (xMax - xMin)) * (x1 - x0);
  const ys = (v: number): number => y0 - ((Math.min(Math.max(ty(v), yMin), yMax) - yMin) / (yMax - yMin)) * (y0 - y1);
  const fx = c.fmtX ?? String;
  const fy = c.fmtY ?? String;
  const out: string[] = [];
  out.push(el('rect', { x: 0, y: 0, width: W, height: H, fill: '#ffffff' }));
  out.push(text(12, 22, c.title, { 'font-size': 14, 'font-weight': 'bold' }));
  out.push(text(12, 40, c.subtitle, { 'font-size': 10, fill: '#555' }));
  out.push(el('rect', { x: x0, y: y1, width: x1 - x0, height: y0 - y1, fill: 'none', stroke: '#999' }));
  for (const v of c.yTicks) {
    const y = ys(v);
    out.push(el('line', { x1: x0, y1: y, x2: x1, y2: y, stroke: '#e3e3e3' }));
    out.push(text(x0 - 6, y + 4, fy(v), { 'text-anchor': 'end', 'font-size': 10 }));
  }
  for (const v of c.xTicks) {
    const x = xs(v);
    out.push(el('line', { x1: x, y1: y0, x2: x, y2: y0 + 4, stroke: '#999' }));
    out.push(text(x, y0 + 16, fx(v), { 'text-anchor': 'middle', 'font-size': 10 }));
  }
  out.push(text((x0 + x1) / 2, y0 + 34, c.xLabel, { 'text-anchor': 'middle', 'font-size': 11, fill: '#444' }));
  out.push(
    text(16, (y0 + y1) / 2, c.yLabel, {
      'text-anchor': 'middle',
      'font-size': 11,
      fill: '#444',
      transform: `rotate(-90 16 ${(y0 + y1) / 2})`,
    }),
  );
  for (const s of c.series) {
    const pts = s.points.filter(([x]) => Number.isFinite(tx(x)));
    if (pts.length > 1) {
      out.push(
        el('polyline', {
          points: pts.map(([x, y]) => `${xs(x).toFixed(1)},${ys(y).toFixed(1)}`).join(' '),
          fill: 'none',
          stroke: s.color,
          'stroke-width': 2,
          'stroke-dasharray': s.dash,
        }),
      );
    }
    for (const [x, y] of pts) out.push(el('circle', { cx: xs(x), cy: ys(y), r: 2.6, fill: s.color }));
  }
  c.series.forEach((s, i) => {
    const lx = 20 + (i % 3) * 245;
    const ly = H - 20 * legendRows - 8 + Math.floor(i / 3) * 20;
    out.push(
      el('line', {
        x1: lx,
        y1: ly,
        x2: lx + 24,
        y2: ly,
        stroke: s.color,
        'stroke-width': 2,
        'stroke-dasharray': s.dash,
      }),
    );
    out.push(text(lx + 30, ly + 4, s.name, { 'font-size': 11 }));
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${el('svg', { xmlns: 'http://www.w3.org/2000/svg', width: W, height: H, viewBox: `0 0 ${W} ${H}` }, ...out)}\n`;
}
