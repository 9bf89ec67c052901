/**
 * A chart of figures per week, drawn from the data as inline SVG: a bar per series and week, an
 * axis in the figures' unit, and the numbers as a table beside it (the table is what assistive
 * technology reads; the picture says so). Colours come from the theme's variables, so the chart
 * reads in light and dark.
 */
import type { ReactNode } from 'react';
import { weekLabel } from './figures';

const WIDTH = 560;
const HEIGHT = 220;
const LEFT = 56;
const RIGHT = 8;
const TOP = 16;
const BOTTOM = 28;

export interface ChartSeries {
  label: string;
  /** `series-1` (solid) or `series-2` (the second bar of a pair). */
  tone: 'series-1' | 'series-2';
}

export interface ChartRow {
  /** Where the week starts (epoch seconds). */
  from: number;
  /** One value per series; null when there is nothing to measure that week. */
  values: Array<number | null>;
}

/** The top of the value axis: the largest value, rounded up to a whole number (at least 1). */
function axisTop(rows: ChartRow[]): number {
  let max = 0;
  for (const r of rows) {
    for (const v of r.values) {
      if (v !== null && v > max) {
        max = v;
      }
    }
  }
  return Math.max(1, Math.ceil(max));
}

function Bars({
  rows,
  series,
  format,
  top,
}: {
  rows: ChartRow[];
  series: ChartSeries[];
  format: (v: number) => string;
  top: number;
}) {
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const group = plotW / Math.max(1, rows.length);
  const bar = (group * 0.7) / series.length;
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  // every other label when the weeks are many, so dates never overlap
  const every = rows.length > 8 ? 2 : 1;
  return (
    <>
      {rows.map((r, i) => {
        const x0 = LEFT + i * group + group * 0.15;
        return (
          <g key={r.from}>
            {r.values.map((v, s) =>
              v === null ? null : (
                <rect
                  key={series[s]!.label}
                  x={x0 + s * bar}
                  y={y(v)}
                  width={Math.max(1, bar - 1)}
                  height={Math.max(v > 0 ? 1 : 0, TOP + plotH - y(v))}
                  className={`chart-bar ${series[s]!.tone}`}
                >
                  <title>{`Week of ${weekLabel(r.from)}, ${series[s]!.label}: ${format(v)}`}</title>
                </rect>
              ),
            )}
            {series.length === 1 && r.values[0] !== null && r.values[0] !== undefined && (
              <text x={x0 + bar / 2} y={y(r.values[0]) - 3} textAnchor="middle" className="chart-value">
                {format(r.values[0])}
              </text>
            )}
            {i % every === (rows.length - 1) % every && (
              <text
                x={LEFT + i * group + group / 2}
                y={HEIGHT - 10}
                textAnchor="middle"
                className="chart-tick"
              >
                {weekLabel(r.from)}
              </text>
            )}
          </g>
        );
      })}
    </>
  );
}

/** The bars' picture: value axis with three ticks, a bar per series and week. */
export function WeekChart({
  label,
  rows,
  series,
  format,
}: {
  /** What the picture shows, in words (its accessible name). */
  label: string;
  rows: ChartRow[];
  series: ChartSeries[];
  format: (v: number) => string;
}) {
  const top = axisTop(rows);
  const plotH = HEIGHT - TOP - BOTTOM;
  const ticks = [0, top / 2, top];
  return (
    <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} className="chart-svg" role="img" aria-label={label}>
      {ticks.map((t) => {
        const y = TOP + plotH - (t / top) * plotH;
        return (
          <g key={t}>
            <line
              x1={LEFT}
              x2={WIDTH - RIGHT}
              y1={y}
              y2={y}
              className={t === 0 ? 'chart-axis' : 'chart-grid'}
            />
            <text x={LEFT - 6} y={y + 4} textAnchor="end" className="chart-tick">
              {format(t)}
            </text>
          </g>
        );
      })}
      <Bars rows={rows} series={series} format={format} top={top} />
    </svg>
  );
}

/** A chart and its table side by side (stacked on narrow screens), under one caption. */
export function ChartFigure({
  id,
  caption,
  legend,
  chart,
  table,
}: {
  id: string;
  caption: string;
  legend?: ChartSeries[];
  chart: ReactNode;
  table: ReactNode;
}) {
  return (
    <figure className="chart" aria-labelledby={id}>
      <figcaption id={id}>
        <span>{caption}</span>
        {legend && legend.length > 1 && (
          <span className="chart-legend">
            {legend.map((s) => (
              <span key={s.label}>
                <span className={`chart-swatch ${s.tone}`} aria-hidden="true" /> {s.label}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      <div className="chart-body">
        <div className="chart-picture">{chart}</div>
        <div className="chart-table">{table}</div>
      </div>
    </figure>
  );
}
