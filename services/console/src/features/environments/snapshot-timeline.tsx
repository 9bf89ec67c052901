/**
 * An environment's history as a picture: one bar per snapshot (oldest left), its height the
 * number of changes, its colour and mark the compliance. Each bar is a link with its full
 * description, and the same data is available as a table.
 */
import { Link } from 'react-router';
import { SvgLink } from '../../components/svg-link';
import { formatTime } from '../../lib/format';
import type { SnapshotListItem } from '../../lib/contract';
import { ComplianceLegend } from '../../components/compliance-legend';
import { ColumnHeads } from '../../components/table-head';

/** Bars share about this width, each between MIN_BAR and MAX_BAR wide. */
const TARGET_WIDTH = 1100;
const MIN_BAR = 5;
const MAX_BAR = 28;
const GAP = 2;
const HEIGHT = 120;
const AXIS = 22;

/** The colour of a bar and the compliance in words. */
function complianceOf(s: SnapshotListItem): { tone: 'ok' | 'bad' | 'unknown'; words: string } {
  return s.compliance_state === 'COMPLIANT'
    ? { tone: 'ok', words: 'compliant' }
    : s.compliance_state === 'NON-COMPLIANT'
      ? { tone: 'bad', words: 'non-compliant' }
      : { tone: 'unknown', words: 'compliance unknown' };
}

function describe(s: SnapshotListItem): string {
  const state = complianceOf(s).words;
  return `Snapshot ${s.index}, ${formatTime(s.from)}: ${s.summary.started} started, ${s.summary.changed} changed, ${s.summary.exited} exited, ${state}`;
}

/** One snapshot's bar: its height the changes, its colour and mark the compliance. */
function Bar({
  s,
  x,
  bar,
  max,
  href,
  current,
}: {
  s: SnapshotListItem;
  x: number;
  bar: number;
  max: number;
  href: string;
  current: boolean;
}) {
  const changes = s.summary.started + s.summary.changed + s.summary.exited;
  const h = 6 + Math.round(((HEIGHT - 16) * Math.sqrt(changes)) / Math.sqrt(max));
  const { tone } = complianceOf(s);
  return (
    <SvgLink to={href} label={describe(s)} current={current}>
      <rect x={x} y={HEIGHT - h} width={bar} height={h} className={`bar bar-${tone}`} />
      {tone === 'bad' && (
        <text x={x + bar / 2} y={HEIGHT + 12} className="bar-mark" textAnchor="middle" aria-hidden="true">
          ✗
        </text>
      )}
      {current && <rect x={x - 1} y={1} width={bar + 2} height={HEIGHT - 1} className="bar-current" />}
    </SvgLink>
  );
}

/** The same snapshots as a table, newest first. */
function SnapshotTable({
  ordered,
  hrefOf,
}: {
  ordered: SnapshotListItem[];
  hrefOf: (index: number) => string;
}) {
  return (
    <details>
      <summary>These snapshots as a table</summary>
      <table>
        <ColumnHeads columns={['Snapshot', 'Time', 'Started', 'Changed', 'Exited', 'Compliance']} />
        <tbody>
          {[...ordered].reverse().map((s) => (
            <tr key={s.index}>
              <th scope="row">
                <Link to={hrefOf(s.index)}>#{s.index}</Link>
              </th>
              <td>{formatTime(s.from)}</td>
              <td className="num">{s.summary.started}</td>
              <td className="num">{s.summary.changed}</td>
              <td className="num">{s.summary.exited}</td>
              <td>{s.compliance_state.toLowerCase()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

export function SnapshotTimeline({
  items,
  hrefOf,
  current,
}: {
  items: SnapshotListItem[];
  hrefOf: (index: number) => string;
  current?: number | undefined;
}) {
  const ordered = [...items].sort((a, b) => a.index - b.index);
  const max = Math.max(1, ...ordered.map((s) => s.summary.started + s.summary.changed + s.summary.exited));
  const bar = Math.min(
    MAX_BAR,
    Math.max(MIN_BAR, Math.floor(TARGET_WIDTH / Math.max(1, ordered.length)) - GAP),
  );
  const width = Math.max(ordered.length * (bar + GAP), 200);
  const first = ordered[0];
  const last = ordered[ordered.length - 1];
  return (
    <figure className="timeline">
      <div className="timeline-scroll">
        <svg
          viewBox={`0 0 ${width} ${HEIGHT + AXIS}`}
          width={width}
          height={HEIGHT + AXIS}
          role="group"
          aria-label={`Snapshots ${first?.index ?? ''} to ${last?.index ?? ''}, oldest first`}
        >
          <line x1={0} x2={width} y1={HEIGHT} y2={HEIGHT} className="axis" />
          {ordered.map((s, i) => (
            <Bar
              key={s.index}
              s={s}
              x={i * (bar + GAP)}
              bar={bar}
              max={max}
              href={hrefOf(s.index)}
              current={s.index === current}
            />
          ))}
        </svg>
      </div>
      <figcaption>
        <span>
          {first && `#${first.index} · ${formatTime(first.from)}`} →{' '}
          {last && `#${last.index} · ${formatTime(last.from)}`}
        </span>
        <ComplianceLegend note="bar height: changes" />
      </figcaption>
      <SnapshotTable ordered={ordered} hrefOf={hrefOf} />
    </figure>
  );
}
