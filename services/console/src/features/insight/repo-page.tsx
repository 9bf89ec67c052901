/**
 * `/{org}/repos/{repo}` (the name keeps its slashes: `/acme/repos/acme/shop`): a repository's
 * builds per week, its deployments and lead time for changes per environment, and what runs now
 * in each environment, by commit.
 */
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { ColumnHeads } from '../../components/table-head';
import type { RepoDelivery } from '../../lib/contract';
import { consolePath, formatTime, isoTime, paths, plural, short } from '../../lib/format';
import { useRepoDelivery } from './api';
import { ChartFigure, WeekChart } from './chart';
import { CHART_WEEKS, chartsFrom, isoSecond, leadTime, runningText, utcDateText, weekLabel } from './figures';
import './insight.css';
import { TableBox } from '../../components/table-box';

type RepoEnvironment = RepoDelivery['environments'][number];

function Running({ org, e }: { org: string; e: RepoEnvironment }) {
  if (e.running_count === 0) {
    return <span className="muted">nothing from this repository</span>;
  }
  return (
    <>
      <p className="muted small running-count">{runningText(e.running.length, e.running_count)}</p>
      {e.running.length > 0 && <RunningList org={org} e={e} />}
    </>
  );
}

function RunningList({ org, e }: { org: string; e: RepoEnvironment }) {
  return (
    <ul className="running-now">
      {e.running.map((r) => {
        const to = consolePath(r.html_url) ?? paths.artifact(org, r.flow, r.fingerprint);
        return (
          <li key={`${r.fingerprint}-${r.trail}`}>
            <Link to={to}>{r.name}</Link>
            <div className="muted small">
              {r.git_commit ? <code title={r.git_commit}>{short(r.git_commit, 10)}</code> : 'no commit'}
              {r.commit_timestamp !== null && (
                <>
                  {', committed '}
                  <time dateTime={isoTime(r.commit_timestamp)}>{formatTime(r.commit_timestamp)}</time>
                </>
              )}
              {' · trail '}
              <Link to={paths.trail(org, r.flow, r.trail)}>{r.trail}</Link>
            </div>
          </li>
        );
      })}
    </ul>
  );
}

function PerEnvironment({ org, d }: { org: string; d: RepoDelivery }) {
  if (d.environments.length === 0) {
    return <p>Nothing built from this repository has run in an environment yet.</p>;
  }
  return (
    <TableBox>
      <table className="delivery-table">
        <caption className="visually-hidden">
          Deployments, lead time and what runs now, per environment
        </caption>
        <ColumnHeads
          columns={[
            'Environment',
            'Deployments',
            'Lead time for changes p50',
            'p90',
            'Running now, by commit',
          ]}
        />
        <tbody>
          {d.environments.map((e) => (
            <tr key={e.environment}>
              <th scope="row">
                <Link to={paths.environment(org, e.environment)}>{e.environment}</Link>
              </th>
              <td className="num">
                <Link
                  to={paths.deployments(org, {
                    environment: e.environment,
                    repo: d.repo,
                    from: isoSecond(d.from),
                    to: isoSecond(d.to),
                  })}
                >
                  {String(e.deployments)}
                </Link>
              </td>
              <td className="num">{leadTime(e.lead_time_for_changes.p50)}</td>
              <td className="num">{leadTime(e.lead_time_for_changes.p90)}</td>
              <td>
                <Running org={org} e={e} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function Builds({ d }: { d: RepoDelivery }) {
  const total = d.builds.reduce((sum, b) => sum + b.builds, 0);
  return (
    <>
      <p className="muted">{`${plural(total, 'build')} reported from ${utcDateText(d.from)} to now, by week from Monday (UTC).`}</p>
      <ChartFigure
        id="chart-builds"
        caption="Builds per week"
        chart={
          <WeekChart
            label={`Builds of ${d.repo} per week; the numbers are in the table beside`}
            rows={d.builds.map((b) => ({ from: b.from, values: [b.builds] }))}
            series={[{ label: 'builds', tone: 'series-1' }]}
            format={(v) => String(Math.round(v * 10) / 10)}
          />
        }
        table={
          <TableBox>
            <table className="compact">
              <caption className="visually-hidden">Builds per week</caption>
              <ColumnHeads columns={['Week from (UTC)', 'Builds']} />
              <tbody>
                {d.builds.map((b) => (
                  <tr key={b.from}>
                    <th scope="row">{weekLabel(b.from)}</th>
                    <td className="num">{b.builds}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        }
      />
    </>
  );
}

export default function RepoPage() {
  const params = useParams();
  const org = params.org ?? '';
  const repo = params['*'] ?? '';
  const [now] = useState(() => Date.now() / 1000);
  const query = useRepoDelivery(org, repo, chartsFrom(now));
  return (
    <>
      <title>{`${repo} · Repositories · Verity`}</title>
      <Breadcrumbs items={[{ label: 'Home', to: paths.home(org) }, { label: repo }]} />
      <h1>{`Repository ${repo}`}</h1>
      <QueryView query={query} what="the repository's delivery">
        {(d) => (
          <>
            <section aria-labelledby="repo-run">
              <h2 id="repo-run">Deployments and what runs, per environment</h2>
              <p className="muted">
                {`Over the last ${CHART_WEEKS} weeks. `}
                <Link to={paths.deployments(org, { repo: d.repo, from: isoSecond(d.from) })}>
                  Every deployment of this repository
                </Link>
              </p>
              <PerEnvironment org={org} d={d} />
            </section>
            <section aria-labelledby="repo-build">
              <h2 id="repo-build">Builds</h2>
              <Builds d={d} />
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}
