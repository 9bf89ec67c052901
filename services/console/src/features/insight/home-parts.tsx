/** The parts of the organization's home page: environments now, delivery charts, repositories. */
import { Link } from 'react-router';
import { Fact } from '../../components/facts';
import { ErrorMessage, Loading } from '../../components/query-state';
import { ComplianceBadge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import type { DoraAnswer, EnvironmentNow, EnvironmentsNowPage } from '../../lib/contract';
import { consolePath, formatAge, formatTime, isoTime, paths, plural } from '../../lib/format';
import { ChartFigure, WeekChart, type ChartSeries } from './chart';
import { isoSecond, leadTime, percent, utcDateText, weekLabel } from './figures';
import { TableBox } from '../../components/table-box';

function RunningNow({ org, now }: { org: string; now: EnvironmentNow }) {
  const env = now.environment;
  if (env.latest_snapshot_index === null) {
    return <span className="muted">nothing reported yet</span>;
  }
  if (now.running_count === 0) {
    return <span className="muted">nothing runs</span>;
  }
  const more = now.running_count - now.running.length;
  return (
    <>
      <ul className="running-now">
        {now.running.map((a) => {
          const to = consolePath(a.html_url);
          return (
            <li key={a.fingerprint}>
              {to ? <Link to={to}>{a.name}</Link> : a.name}{' '}
              <ComplianceBadge compliant={a.compliant} unknown="no-policy" />
            </li>
          );
        })}
      </ul>
      {more > 0 && (
        <Link
          to={paths.snapshot(org, env.name, env.latest_snapshot_index)}
        >{`and ${plural(more, 'more artifact')}`}</Link>
      )}
    </>
  );
}

function EnvironmentRow({ org, now, since }: { org: string; now: EnvironmentNow; since: number }) {
  const env = now.environment;
  return (
    <tr>
      <th scope="row">
        <Link to={paths.environment(org, env.name)}>{env.name}</Link>
      </th>
      <td>
        <ComplianceBadge
          compliant={env.latest_snapshot_index === null ? undefined : env.state}
          unknown={env.latest_snapshot_index === null ? 'no-snapshot' : 'no-policy'}
        />
      </td>
      <td>
        <RunningNow org={org} now={now} />
      </td>
      <td className="num">
        <Link to={paths.deployments(org, { environment: env.name, from: isoSecond(since) })}>
          {String(now.deployments)}
        </Link>
      </td>
      <td>
        {env.last_changed_at === null ? (
          <span className="muted">never</span>
        ) : (
          <time dateTime={isoTime(env.last_changed_at)} title={formatTime(env.last_changed_at)}>
            {formatAge(env.last_changed_at)}
          </time>
        )}
      </td>
    </tr>
  );
}

export function EnvironmentsNow({
  org,
  answer,
  since,
}: {
  org: string;
  answer: EnvironmentsNowPage;
  since: number;
}) {
  const environments = answer.environments;
  const total = answer.total_count;
  return (
    <section aria-labelledby="home-environments">
      <h2 id="home-environments">Environments now</h2>
      {environments.length === 0 ? (
        <p>
          No environments yet: <Link to={paths.environments(org)}>the environments page</Link> shows how to
          report one.
        </p>
      ) : (
        <>
          <TableBox>
            <table className="delivery-table">
              <caption className="visually-hidden">
                What runs in each environment now, its compliance, and its deployments this week
              </caption>
              <ColumnHeads
                columns={[
                  'Environment',
                  'Compliance',
                  'Running now',
                  `Deployments this week (since ${weekLabel(since)}, UTC)`,
                  'Last change',
                ]}
              />
              <tbody>
                {environments.map((now) => (
                  <EnvironmentRow key={now.environment.name} org={org} now={now} since={since} />
                ))}
              </tbody>
            </table>
          </TableBox>

          <p className="muted" role="status">
            {total > environments.length
              ? `${environments.length} of ${total} environments shown, by name; all ${total} are on `
              : `${plural(total, 'environment')}. `}
            <Link to={paths.environments(org)}>
              {total > environments.length ? 'the environments page' : 'All environments'}
            </Link>
            {total > environments.length ? '.' : ''}
          </p>
        </>
      )}
    </section>
  );
}

const LEAD_SERIES: ChartSeries[] = [
  { label: 'p50', tone: 'series-1' },
  { label: 'p90', tone: 'series-2' },
];
const FREQUENCY_SERIES: ChartSeries[] = [{ label: 'deployments', tone: 'series-1' }];

/** The four keys over the charts' range, each linking to what it counts. */
function FourKeys({ org, answer, environment }: { org: string; answer: DoraAnswer; environment: string }) {
  const t = answer.total;
  const range = { environment, from: isoSecond(t.from), to: isoSecond(t.to) };
  return (
    <dl className="facts">
      <Fact term="Deployments">
        <Link to={paths.deployments(org, range)}>{String(t.deployment_frequency.deployments)}</Link>
        {` (${t.deployment_frequency.per_day} a day)`}
      </Fact>
      <Fact term="Lead time for changes">
        {`p50 ${leadTime(t.lead_time_for_changes.p50)}, p90 ${leadTime(t.lead_time_for_changes.p90)}`}
      </Fact>
      <Fact term="Change failure rate">
        {`${percent(t.change_failure_rate.rate)} (${t.change_failure_rate.failures} of ${t.change_failure_rate.deployments})`}
      </Fact>
      <Fact term="Time to restore">
        {t.time_to_restore.restores === 0
          ? 'no restores'
          : `p50 ${leadTime(t.time_to_restore.p50)}, p90 ${leadTime(t.time_to_restore.p90)} (${plural(t.time_to_restore.restores, 'restore')})`}
      </Fact>
    </dl>
  );
}

type Bucket = DoraAnswer['buckets'][number];

function FrequencyChart({
  where,
  buckets,
  weekLink,
}: {
  where: string;
  buckets: Bucket[];
  weekLink: (b: Bucket) => string;
}) {
  return (
    <ChartFigure
      id="chart-frequency"
      caption="Deployment frequency: deployments per week"
      chart={
        <WeekChart
          label={`Deployments per week ${where}; the numbers are in the table beside`}
          rows={buckets.map((b) => ({ from: b.from, values: [b.deployment_frequency.deployments] }))}
          series={FREQUENCY_SERIES}
          format={(v) => String(Math.round(v * 10) / 10)}
        />
      }
      table={
        <TableBox>
          <table className="compact">
            <caption className="visually-hidden">Deployments per week</caption>
            <ColumnHeads columns={['Week from (UTC)', 'Deployments', 'A day']} />
            <tbody>
              {buckets.map((b) => (
                <tr key={b.from}>
                  <th scope="row">{weekLabel(b.from)}</th>
                  <td className="num">
                    <Link to={weekLink(b)}>{String(b.deployment_frequency.deployments)}</Link>
                  </td>
                  <td className="num">{b.deployment_frequency.per_day}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      }
    />
  );
}

function LeadTimeChart({ where, buckets }: { where: string; buckets: Bucket[] }) {
  return (
    <ChartFigure
      id="chart-lead-time"
      caption="Lead time for changes per week (p50 and p90)"
      legend={LEAD_SERIES}
      chart={
        <WeekChart
          label={`Lead time for changes per week ${where}, p50 and p90; the numbers are in the table beside`}
          rows={buckets.map((b) => ({
            from: b.from,
            values: [b.lead_time_for_changes.p50, b.lead_time_for_changes.p90],
          }))}
          series={LEAD_SERIES}
          format={leadTime}
        />
      }
      table={
        <TableBox>
          <table className="compact">
            <caption className="visually-hidden">Lead time for changes per week</caption>
            <ColumnHeads columns={['Week from (UTC)', 'p50', 'p90', 'Deployments measured']} />
            <tbody>
              {buckets.map((b) => (
                <tr key={b.from}>
                  <th scope="row">{weekLabel(b.from)}</th>
                  <td className="num">{leadTime(b.lead_time_for_changes.p50)}</td>
                  <td className="num">{leadTime(b.lead_time_for_changes.p90)}</td>
                  <td className="num">{b.lead_time_for_changes.deployments}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      }
    />
  );
}

/** Deployments and lead time for changes per week, each chart with its numbers beside it. */
export function DeliveryCharts({
  org,
  answer,
  environment,
}: {
  org: string;
  answer: DoraAnswer;
  environment: string;
}) {
  const where = environment ? `in ${environment}` : 'in all environments';
  const weekLink = (b: Bucket) =>
    paths.deployments(org, { environment, from: isoSecond(b.from), to: isoSecond(b.to) });
  return (
    <>
      <p className="muted">
        {`From ${utcDateText(answer.total.from)} to now, ${where}, by week from Monday (UTC).`}
      </p>
      <FourKeys org={org} answer={answer} environment={environment} />
      <FrequencyChart where={where} buckets={answer.buckets} weekLink={weekLink} />
      <LeadTimeChart where={where} buckets={answer.buckets} />
    </>
  );
}

export function DeliveryLoading({ error, retry }: { error: unknown; retry: () => unknown }) {
  return error ? (
    <ErrorMessage error={error} what="the delivery figures" onRetry={retry} />
  ) : (
    <Loading what="the delivery figures" />
  );
}
