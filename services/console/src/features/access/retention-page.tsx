/**
 * `/{org}/settings/retention`: how long each kind of record is kept (by default, per flow, per
 * environment), the server's minimum, the legal holds and what each covers, and what the
 * retention job removed lately (`removed-lately.tsx`). Read-only: classes and holds are set
 * through the API.
 */
import { useParams } from 'react-router';
import { QueryView } from '../../components/query-state';
import { formatTime } from '../../lib/format';
import type { RetentionSettings } from '../../lib/contract';
import { SettingsNav } from './settings-nav';
import { TableBox } from '../../components/table-box';
import { useLegalHolds, useRetention } from './api';
import { RemovedLately } from './removed-lately';

type Periods = RetentionSettings['default'];

const KINDS: Array<[keyof Periods, string]> = [
  ['trails_days', 'Trails and attestations'],
  ['evidence_files_days', 'Evidence files'],
  ['snapshots_days', 'Snapshots'],
  ['audit_log_days', 'Audit log'],
];

const days = (n: number | undefined, fallback: string) => (n === undefined ? fallback : `${n} days`);

function ClassesTable({ settings }: { settings: RetentionSettings }) {
  const rows: Array<[string, Periods, boolean]> = [
    ['Default', settings.default, false],
    ...Object.entries(settings.flows).map(([n, p]): [string, Periods, boolean] => [
      `Flow ${n}`,
      p,
      settings.unknown_flows.includes(n),
    ]),
    ...Object.entries(settings.environments).map(([n, p]): [string, Periods, boolean] => [
      `Environment ${n}`,
      p,
      settings.unknown_environments.includes(n),
    ]),
  ];
  return (
    <TableBox>
      <table className="retention-classes">
        <caption>Retention classes</caption>
        <thead>
          <tr>
            <th scope="col">Applies to</th>
            {KINDS.map(([k, label]) => (
              <th scope="col" key={k}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, periods, unknown]) => (
            <tr key={name}>
              <th scope="row">
                {name}
                {unknown && <span className="muted"> (no such name yet)</span>}
              </th>
              {KINDS.map(([k]) => (
                <td key={k}>{days(periods[k], name === 'Default' ? 'forever' : 'as the default')}</td>
              ))}
            </tr>
          ))}
          <tr>
            <th scope="row">Server minimum</th>
            {KINDS.map(([k]) => (
              <td key={k}>
                {settings.operator_minimum[k] === 0 ? 'none' : `${settings.operator_minimum[k]} days`}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </TableBox>
  );
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/** The API's words for what a hold keeps, its ISO times shown as every time is: in the page's zone, named. */
const inPageZone = (text: string): string =>
  text.replace(ISO_TIME, (iso) => formatTime(Date.parse(iso) / 1000));

export default function RetentionPage() {
  const org = useParams().org ?? '';
  const retention = useRetention(org);
  const holds = useLegalHolds(org);
  return (
    <>
      <title>{`Retention · ${org} · Verity`}</title>
      <h1>Retention</h1>
      <SettingsNav org={org} />
      <p>
        Records older than their class are removed by the retention job, never while a legal hold covers them.
        Set classes with <code>PUT /api/v2/retention/{org}</code> and holds with{' '}
        <code>POST /api/v2/legal-holds/{org}</code>.
      </p>
      <QueryView query={retention} what="the retention classes">
        {(settings) => <ClassesTable settings={settings} />}
      </QueryView>
      <h2>Legal holds</h2>
      <QueryView query={holds} what="the legal holds">
        {(list) =>
          list.length === 0 ? (
            <p>No legal hold: records follow their retention class.</p>
          ) : (
            <ul>
              {list.map((h) => (
                <li key={h.name}>
                  <strong>{h.name}</strong>: {h.reason}. Keeps {inPageZone(h.covers)}. Placed by{' '}
                  {h.created_by} on {formatTime(h.created_at)}.
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
      <h2>Removed lately</h2>
      <RemovedLately org={org} />
    </>
  );
}
