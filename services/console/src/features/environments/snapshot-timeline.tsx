/**
 * An environment's history in time: each snapshot a span from when it was taken until the next
 * one replaced it (or now), its width proportional to that duration, its colour, mark and words
 * its compliance. A date axis in the chosen zone, a line at now, and zoom (day, week, month, all).
 * Each span is a link to its snapshot, and the same snapshots follow as a table.
 */
import { Link } from 'react-router';
import { SvgLink } from '../../components/svg-link';
import { formatDate, formatDuration, formatHour, formatTime, isoTime, zoneName } from '../../lib/format';
import { zoneChoice } from '../../lib/preferences';
import type { SnapshotListItem } from '../../lib/contract';
import { ComplianceLegend } from '../../components/compliance-legend';
import { ColumnHeads } from '../../components/table-head';
import { TableBox } from '../../components/table-box';

const WIDTH = 1100;
const HEIGHT = 46;
const AXIS = 24;
/** About the width of one character of a span's 11px words. */
const CHAR = 7;
/** A span is drawn at least this wide, so a short one stays visible and clickable. */
const MIN_SPAN = 3;

const HOUR = 3_600;
const DAY = 86_400;

export const ZOOMS = {
  day: { label: 'Day', seconds: DAY },
  week: { label: 'Week', seconds: 7 * DAY },
  month: { label: 'Month', seconds: 30 * DAY },
  all: { label: 'All', seconds: null },
} as const;
export type Zoom = keyof typeof ZOOMS;

/** The colour of a span and the compliance in words. */
export function complianceOf(s: SnapshotListItem): { tone: 'ok' | 'bad' | 'unknown'; words: string } {
  return s.compliance_state === 'COMPLIANT'
    ? { tone: 'ok', words: 'compliant' }
    : s.compliance_state === 'NON-COMPLIANT'
      ? { tone: 'bad', words: 'non-compliant' }
      : { tone: 'unknown', words: 'no policy attached' };
}

/** When a snapshot stopped being current, or null while it still is. */
const endOf = (s: SnapshotListItem): number | null => (s.to === 0 ? null : s.to);

function describe(s: SnapshotListItem): string {
  const end = endOf(s);
  const until = end === null ? 'still current' : `until ${formatTime(end)}`;
  return `Snapshot ${s.index}, from ${formatTime(s.from)} ${until}: ${s.summary.started} started, ${s.summary.changed} changed, ${s.summary.exited} exited, ${complianceOf(s).words}`;
}

/** Axis ticks at whole hours or days of the chosen zone, about eight of them. */
function ticks(start: number, end: number): Array<{ t: number; label: string }> {
  const steps = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY];
  const step = steps.find((s) => (end - start) / s <= 8) ?? 365 * DAY;
  const offset = zoneChoice() === 'utc' ? 0 : -new Date(start * 1000).getTimezoneOffset() * 60;
  const out: Array<{ t: number; label: string }> = [];
  for (let t = Math.ceil((start + offset) / step) * step - offset; t <= end && out.length < 12; t += step) {
    out.push({ t, label: step < DAY ? `${formatHour(t)}` : formatDate(t) });
  }
  return out;
}

function Span({
  s,
  x,
  now,
  href,
  current,
}: {
  s: SnapshotListItem;
  x: (t: number) => number;
  now: number;
  href: string;
  current: boolean;
}) {
  const x0 = x(s.from);
  const w = Math.max(MIN_SPAN, x(endOf(s) ?? now) - x0);
  const { tone, words } = complianceOf(s);
  // the words end the link's name too, so what is seen is part of what is announced
  const text = `${tone === 'bad' ? '✗ ' : ''}${words}`;
  return (
    <SvgLink to={href} label={describe(s)} current={current}>
      <rect
        x={x0}
        y={4}
        width={w}
        height={HEIGHT - 8}
        className={`bar bar-${tone}`}
        data-from={s.from}
        data-to={endOf(s) ?? now}
      />
      {w >= text.length * CHAR + 8 ? (
        <text x={x0 + 5} y={HEIGHT / 2 + 4} className="bar-text" aria-hidden="true">
          {text}
        </text>
      ) : (
        tone === 'bad' &&
        w >= 9 && (
          <text x={x0 + w / 2} y={HEIGHT / 2 + 4} className="bar-text" textAnchor="middle" aria-hidden="true">
            ✗
          </text>
        )
      )}
      {current && <rect x={x0 - 1} y={1} width={w + 2} height={HEIGHT - 2} className="bar-current" />}
    </SvgLink>
  );
}

/** The same snapshots as a table, newest first. */
function SnapshotTable({
  shown,
  hrefOf,
  now,
}: {
  shown: SnapshotListItem[];
  hrefOf: (index: number) => string;
  now: number;
}) {
  return (
    <details>
      <summary>These {shown.length} snapshots as a table</summary>
      <TableBox>
        <table>
          <ColumnHeads
            columns={['Snapshot', 'Taken', 'Current for', 'Started', 'Changed', 'Exited', 'Compliance']}
          />
          <tbody>
            {shown.map((s) => (
              <tr key={s.index}>
                <th scope="row">
                  <Link to={hrefOf(s.index)}>#{s.index}</Link>
                </th>
                <td>
                  <time dateTime={isoTime(s.from)}>{formatTime(s.from)}</time>
                </td>
                <td>
                  {formatDuration((endOf(s) ?? now) - s.from)}
                  {endOf(s) === null && ' (still current)'}
                </td>
                <td className="num">{s.summary.started}</td>
                <td className="num">{s.summary.changed}</td>
                <td className="num">{s.summary.exited}</td>
                <td>{complianceOf(s).words}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </details>
  );
}

/**
 * `items` newest first; the window is the zoom's span ending now, or (all) from the oldest item to
 * the newest one's end. `complete` says whether the items reach back to the window's start.
 */
export function SnapshotTimeline({
  items,
  zoom,
  now,
  complete,
  hrefOf,
  current,
}: {
  items: SnapshotListItem[];
  zoom: Zoom;
  now: number;
  complete: boolean;
  hrefOf: (index: number) => string;
  current?: number | undefined;
}) {
  const seconds = ZOOMS[zoom].seconds;
  const oldest = items[items.length - 1];
  const newest = items[0];
  // a window of older snapshots ends when its newest was replaced; else now
  const end =
    zoom === 'all' && newest && endOf(newest) !== null ? endOf(newest)! : Math.max(now, newest?.from ?? now);
  const start = seconds === null ? Math.min(oldest?.from ?? end - DAY, end - HOUR) : end - seconds;
  const shown = items.filter((s) => (endOf(s) ?? end) > start);
  const x = (t: number) => ((Math.min(Math.max(t, start), end) - start) / (end - start)) * WIDTH;
  const first = shown[shown.length - 1];
  const last = shown[0];
  return (
    <figure className="timeline">
      <div className="timeline-scroll">
        <svg
          viewBox={`0 0 ${WIDTH + 2} ${HEIGHT + AXIS}`}
          width={WIDTH + 2}
          height={HEIGHT + AXIS}
          role="group"
          aria-label={
            first && last
              ? `Snapshots ${first.index} to ${last.index} in time, oldest first`
              : 'No snapshot in this window'
          }
        >
          <line x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} className="axis" />
          {[...shown].reverse().map((s) => (
            <Span key={s.index} s={s} x={x} now={end} href={hrefOf(s.index)} current={s.index === current} />
          ))}
          {ticks(start, end).map(({ t, label }) => (
            <g key={t} aria-hidden="true">
              <line x1={x(t)} x2={x(t)} y1={HEIGHT} y2={HEIGHT + 4} className="axis" />
              <text x={x(t)} y={HEIGHT + 16} className="tick" textAnchor="middle">
                {label}
              </text>
            </g>
          ))}
          {now <= end && (
            <line x1={x(now)} x2={x(now)} y1={0} y2={HEIGHT} className="now-line" aria-hidden="true" />
          )}
        </svg>
      </div>
      <figcaption>
        <span>
          {formatTime(start)} → {formatTime(end)}
          {now <= end ? ' (now, at the right edge)' : ''} · dates in {zoneName()}
          {!complete && ' · only the latest snapshots are drawn: open the table or a snapshot for older ones'}
        </span>
        <ComplianceLegend unknown="no policy attached" note="width: how long each snapshot was current" />
      </figcaption>
      {shown.length === 0 && <p>No snapshot was current in this window.</p>}
      <SnapshotTable shown={shown} hrefOf={hrefOf} now={end} />
    </figure>
  );
}
