/** The deployments as a table: when, where, what replaced what, its commits, lead times, compliance. */
import { Link } from 'react-router';
import { Badge, ComplianceBadge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import type { Deployment } from '../../lib/contract';
import { consolePath, formatTime, isoTime, paths, plural, short } from '../../lib/format';
import { leadTime } from './figures';
import { TableBox } from '../../components/table-box';

function What({ org, d }: { org: string; d: Deployment }) {
  const to = consolePath(d.artifact.html_url);
  return (
    <>
      {to ? <Link to={to}>{d.artifact.name}</Link> : <span>{d.artifact.name}</span>}
      <div className="muted small">
        {d.artifact.flow ? (
          <>
            flow <Link to={paths.flow(org, d.artifact.flow)}>{d.artifact.flow}</Link>
          </>
        ) : (
          'no provenance'
        )}
        {d.artifact.git_commit && (
          <>
            {' · commit '}
            <code title={d.artifact.git_commit}>{short(d.artifact.git_commit, 10)}</code>
          </>
        )}
      </div>
    </>
  );
}

function Replaced({ d }: { d: Deployment }) {
  if (d.replaced.length === 0) {
    return <span className="muted">nothing (first deployment)</span>;
  }
  return (
    <ul className="running-now">
      {d.replaced.map((r) => (
        <li key={r.fingerprint}>
          {r.name}
          {r.git_commit && (
            <>
              {' '}
              <code className="small" title={r.git_commit}>
                {short(r.git_commit, 10)}
              </code>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

function Commits({ d }: { d: Deployment }) {
  if (d.commits.length === 0) {
    return <span className="muted">{d.rollback ? 'none (rollback)' : 'none known'}</span>;
  }
  return (
    <details>
      <summary>{plural(d.commits.length, 'commit')}</summary>
      <ul className="running-now">
        {d.commits.map((c) => (
          <li key={c.sha1}>
            <code title={c.sha1}>{short(c.sha1, 10)}</code> {c.message ?? ''}
            {c.author && <span className="muted small">{` by ${c.author}`}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

export function DeploymentsTable({ org, deployments }: { org: string; deployments: Deployment[] }) {
  return (
    <TableBox>
      <table className="delivery-table">
        <caption className="visually-hidden">Deployments, newest first</caption>
        <ColumnHeads
          columns={[
            'Started',
            'Environment',
            'Artifact',
            'Replaced',
            'Kind',
            'Commits',
            'Lead time for changes',
            'When it landed',
          ]}
        />
        <tbody>
          {deployments.map((d) => (
            <tr key={`${d.environment}-${d.snapshot_index}-${d.artifact.fingerprint}`}>
              <td>
                <Link to={paths.snapshot(org, d.environment, d.snapshot_index)}>
                  <time dateTime={isoTime(d.started_at)}>{formatTime(d.started_at)}</time>
                </Link>
              </td>
              <th scope="row">
                <Link to={paths.environment(org, d.environment)}>{d.environment}</Link>
              </th>
              <td>
                <What org={org} d={d} />
              </td>
              <td>
                <Replaced d={d} />
              </td>
              <td>
                {d.rollback ? (
                  <Badge tone="warn" symbol="↶">
                    Rollback
                  </Badge>
                ) : (
                  'Deployment'
                )}
              </td>
              <td>
                <Commits d={d} />
              </td>
              <td className="num" title={`from its own commit: ${leadTime(d.commit_lead_time)}`}>
                {leadTime(d.change_lead_time)}
              </td>
              <td>
                <ComplianceBadge compliant={d.compliant} unknown="no-policy" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
