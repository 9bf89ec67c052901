/**
 * Where one artifact ran, as a picture: a row per environment, a bar per interval on a time axis
 * every artifact of the page shares. Each bar is coloured by the environment's compliance over
 * the interval, says it in words, and links to the snapshot that started it; the same data
 * follows as a table.
 */
import { Link } from 'react-router';
import { SvgLink } from '../../components/svg-link';
import type { ExposureArtifact, ExposureInterval } from '../../lib/contract';

type ExposureEnvironment = ExposureArtifact['environments'][number];
import { formatDate, formatTime, isoTime, paths } from '../../lib/format';
import { ComplianceLegend } from '../../components/compliance-legend';
import { ColumnHeads } from '../../components/table-head';
import { TableBox } from '../../components/table-box';

const WIDTH = 1080;
const LABEL = 100;
/** Room right of the axis, so the latest bar of a row can carry its words after it. */
const RIGHT = 180;
const ROW = 30;
const BAR = 18;
const AXIS = 24;
/** A bar is never narrower than this, so a short interval stays visible and clickable. */
const MIN_BAR = 6;
/** About the width of one character of a bar's 11px words. */
const CHAR = 7;

export interface TimeAxis {
  start: number;
  end: number;
}

/** The compliance of an interval in words. */
export function complianceWords(i: ExposureInterval): string {
  return i.compliant === true ? 'compliant' : i.compliant === false ? 'non-compliant' : 'unknown';
}

const tone = (i: ExposureInterval) =>
  i.compliant === true ? 'ok' : i.compliant === false ? 'bad' : 'unknown';

/** The bar's name; it ends with the words the bar shows, so the visible text is part of the name. */
function describe(env: string, i: ExposureInterval): string {
  const until = i.to === null ? '' : ` until ${formatTime(i.to)}`;
  return `${env}: from ${formatTime(i.from)}${until}, snapshot ${i.from_snapshot}, ${complianceWords(i)}${i.to === null ? ', still running' : ''}`;
}

/** The axis every artifact of an answer shares: from the earliest start to the latest end (or now). */
export function timeAxis(
  artifacts: ExposureArtifact[],
  now: number,
  from: number | null,
  to: number | null,
): TimeAxis {
  let start = from ?? Infinity;
  let end = to ?? -Infinity;
  for (const a of artifacts) {
    for (const e of a.environments) {
      for (const i of e.intervals) {
        if (from === null) {
          start = Math.min(start, i.from);
        }
        if (to === null) {
          end = Math.max(end, i.to ?? now);
        }
      }
    }
  }
  if (!Number.isFinite(start)) {
    start = now - 86_400;
  }
  if (!Number.isFinite(end)) {
    end = now;
  }
  if (end <= start) {
    end = start + 3_600;
  }
  return { start, end };
}

function ticks(axis: TimeAxis): number[] {
  const n = 5;
  return Array.from({ length: n }, (_, k) => axis.start + ((axis.end - axis.start) * k) / (n - 1));
}

/** Where a time falls on the picture, clamped to the axis. */
type Scale = (t: number) => number;

function IntervalBar({
  org,
  env,
  interval: i,
  next,
  y,
  x,
  now,
}: {
  org: string;
  env: string;
  interval: ExposureInterval;
  next: ExposureInterval | undefined;
  y: number;
  x: Scale;
  now: number;
}) {
  const x0 = x(i.from);
  const w = Math.max(MIN_BAR, x(i.to ?? now) - x0);
  const bad = i.compliant === false;
  const words = `${bad ? '✗ ' : ''}${complianceWords(i)}${i.to === null ? ', still running' : ''}`;
  const need = words.length * CHAR + 8;
  const room = (next ? x(next.from) : WIDTH) - (x0 + w);
  // the words go inside the bar, else after it, else (crowded) in its name and the table
  const place = w >= need ? 'inside' : room >= need ? 'after' : bad ? 'mark' : 'none';
  return (
    <SvgLink to={paths.snapshot(org, env, i.from_snapshot)} label={describe(env, i)}>
      <rect x={x0} y={y + (ROW - BAR) / 2} width={w} height={BAR} className={`bar bar-${tone(i)}`} />
      {place === 'inside' && (
        <text x={x0 + 6} y={y + ROW / 2 + 4} className="bar-text" aria-hidden="true">
          {words}
        </text>
      )}
      {place === 'after' && (
        <text x={x0 + w + 4} y={y + ROW / 2 + 4} className="bar-words" aria-hidden="true">
          {words}
        </text>
      )}
      {place === 'mark' && (
        <text x={x0 + w / 2} y={y + ROW / 2 + 4} className="bar-text" textAnchor="middle" aria-hidden="true">
          ✗
        </text>
      )}
    </SvgLink>
  );
}

function EnvironmentRow({
  org,
  e,
  row,
  x,
  now,
}: {
  org: string;
  e: ExposureEnvironment;
  row: number;
  x: Scale;
  now: number;
}) {
  const y = row * ROW;
  const span = WIDTH - LABEL - RIGHT;
  return (
    <g>
      <text x={LABEL - 8} y={y + ROW / 2 + 4} textAnchor="end" className="row-label">
        {e.environment_name.length > 16 ? `${e.environment_name.slice(0, 15)}…` : e.environment_name}
      </text>
      <line x1={LABEL} x2={LABEL + span} y1={y + ROW - 1} y2={y + ROW - 1} className="row-line" />
      {e.intervals.map((i, k) => (
        <IntervalBar
          key={`${i.from}-${i.from_snapshot}`}
          org={org}
          env={e.environment_name}
          interval={i}
          next={e.intervals[k + 1]}
          y={y}
          x={x}
          now={now}
        />
      ))}
    </g>
  );
}

/** The same intervals as a table. */
function IntervalsTable({ org, artifact }: { org: string; artifact: ExposureArtifact }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Where {artifact.name} ran</caption>
        <ColumnHeads columns={['Environment', 'From', 'To', 'Snapshots', 'Compliance']} />
        <tbody>
          {artifact.environments.flatMap((e) =>
            e.intervals.map((i) => (
              <tr key={`${e.environment_name}-${i.from}-${i.from_snapshot}`}>
                <th scope="row">
                  <Link to={paths.environment(org, e.environment_name)}>{e.environment_name}</Link>
                </th>
                <td>
                  <time dateTime={isoTime(i.from)}>{formatTime(i.from)}</time>
                </td>
                <td>
                  {i.to === null ? 'still running' : <time dateTime={isoTime(i.to)}>{formatTime(i.to)}</time>}
                </td>
                <td>
                  <Link to={paths.snapshot(org, e.environment_name, i.from_snapshot)}>
                    #{i.from_snapshot}
                  </Link>
                  {i.to_snapshot !== null && (
                    <>
                      {' to '}
                      <Link to={paths.snapshot(org, e.environment_name, i.to_snapshot)}>
                        #{i.to_snapshot}
                      </Link>
                    </>
                  )}
                </td>
                <td>{complianceWords(i)}</td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </TableBox>
  );
}

export function ExposureTimeline({
  org,
  artifact,
  axis,
  now,
}: {
  org: string;
  artifact: ExposureArtifact;
  axis: TimeAxis;
  now: number;
}) {
  const envs = artifact.environments;
  const height = envs.length * ROW + AXIS;
  const span = WIDTH - LABEL - RIGHT;
  const x: Scale = (t) =>
    LABEL + ((Math.min(Math.max(t, axis.start), axis.end) - axis.start) / (axis.end - axis.start)) * span;
  return (
    <figure className="timeline exposure">
      <div className="timeline-scroll">
        <svg
          viewBox={`0 0 ${WIDTH} ${height}`}
          width={WIDTH}
          height={height}
          role="group"
          aria-label={`Where ${artifact.name} ran, by environment`}
        >
          {envs.map((e, row) => (
            <EnvironmentRow key={e.environment_name} org={org} e={e} row={row} x={x} now={now} />
          ))}
          <line x1={LABEL} x2={LABEL + span} y1={envs.length * ROW} y2={envs.length * ROW} className="axis" />
          {ticks(axis).map((t, k) => (
            <text
              key={t}
              x={x(t)}
              y={envs.length * ROW + 16}
              className="tick"
              textAnchor={k === 0 ? 'start' : k === 4 ? 'end' : 'middle'}
            >
              {formatDate(t)}
            </text>
          ))}
        </svg>
      </div>
      <figcaption>
        <span>
          {formatTime(axis.start)} → {formatTime(axis.end)}
        </span>
        <ComplianceLegend />
      </figcaption>
      <IntervalsTable org={org} artifact={artifact} />
    </figure>
  );
}
