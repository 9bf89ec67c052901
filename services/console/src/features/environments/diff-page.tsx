/**
 * `/{org}/environments/{env}/diff?from=&to=`: what started, stopped and changed its instance count
 * between two snapshots, as the API's env-diff answers it, each artifact and snapshot a link.
 */
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Field } from '../../components/field';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { ColumnHeads } from '../../components/table-head';
import type { EnvironmentDiff } from '../../lib/contract';
import { formText } from '../../lib/form';
import { paths, plural, short } from '../../lib/format';
import { useEnvironment, useSnapshotDiff } from './api';
import { TableBox } from '../../components/table-box';

type DiffArtifact = EnvironmentDiff['changed']['artifacts'][number];

const positive = (text: string | null): number | null =>
  text !== null && /^\d{1,9}$/.test(text) && Number(text) > 0 ? Number(text) : null;

function DiffTable({
  org,
  caption,
  artifacts,
  counts,
}: {
  org: string;
  caption: string;
  artifacts: DiffArtifact[];
  counts: (a: DiffArtifact) => string;
}) {
  if (artifacts.length === 0) {
    return <p>None.</p>;
  }
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <ColumnHeads columns={['Artifact', 'Flow', 'Instances', 'Pods']} />
        <tbody>
          {artifacts.map((a) => (
            <tr key={a.fingerprint}>
              <th scope="row">
                {a.flow ? <Link to={paths.artifact(org, a.flow, a.fingerprint)}>{a.name}</Link> : a.name}
                <div className="small">
                  <code title={a.fingerprint}>{short(a.fingerprint, 16)}</code>
                </div>
              </th>
              <td>{a.flow ? <Link to={paths.flow(org, a.flow)}>{a.flow}</Link> : 'no provenance'}</td>
              <td className="num">{counts(a)}</td>
              <td className="small">{a.pods.length > 0 ? a.pods.join(', ') : 'none'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function DiffBody({
  org,
  env,
  from,
  to,
  d,
}: {
  org: string;
  env: string;
  from: number;
  to: number;
  d: EnvironmentDiff;
}) {
  const sections: Array<{
    id: string;
    title: string;
    artifacts: DiffArtifact[];
    counts: (a: DiffArtifact) => string;
  }> = [
    {
      id: 'started',
      title: `Started: in #${to}, not in #${from}`,
      artifacts: d.snappish2.artifacts,
      counts: (a) => String(a.s2_instance_count),
    },
    {
      id: 'stopped',
      title: `Stopped: in #${from}, not in #${to}`,
      artifacts: d.snappish1.artifacts,
      counts: (a) => String(a.s1_instance_count),
    },
    {
      id: 'changed',
      title: 'Changed: running in both, another number of instances',
      artifacts: d.changed.artifacts,
      counts: (a) => `${a.s1_instance_count} → ${a.s2_instance_count}`,
    },
  ];
  return (
    <>
      <p>
        From <Link to={paths.snapshot(org, env, from)}>snapshot #{from}</Link> to{' '}
        <Link to={paths.snapshot(org, env, to)}>snapshot #{to}</Link>: {d.snappish2.artifacts.length} started,{' '}
        {d.snappish1.artifacts.length} stopped, {d.changed.artifacts.length} changed,{' '}
        {plural(d['not-changed'].artifacts.length, 'artifact')} unchanged.
      </p>
      {sections.map((s) => (
        <section key={s.id} aria-labelledby={`diff-${s.id}`}>
          <h2 id={`diff-${s.id}`}>
            {s.title} ({s.artifacts.length})
          </h2>
          <DiffTable org={org} caption={s.title} artifacts={s.artifacts} counts={s.counts} />
        </section>
      ))}
      <section aria-labelledby="diff-unchanged">
        <h2 id="diff-unchanged">Unchanged ({d['not-changed'].artifacts.length})</h2>
        <details>
          <summary>Show the artifacts running unchanged in both</summary>
          <DiffTable
            org={org}
            caption="Unchanged"
            artifacts={d['not-changed'].artifacts}
            counts={(a) => String(a.s2_instance_count)}
          />
        </details>
      </section>
    </>
  );
}

export default function DiffPage() {
  const { org = '', env = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const envQuery = useEnvironment(org, env);
  const latest = envQuery.data?.latest_snapshot_index ?? null;
  const to = positive(params.get('to')) ?? latest;
  const from = positive(params.get('from')) ?? (to !== null ? Math.max(1, to - 1) : null);
  const bad =
    (params.has('from') && positive(params.get('from')) === null) ||
    (params.has('to') && positive(params.get('to')) === null);
  const query = useSnapshotDiff(org, env, from ?? 0, to ?? 0, !bad && from !== null && to !== null);

  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setParams({ from: formText(data, 'from'), to: formText(data, 'to') });
  };

  return (
    <>
      <title>{`${env} diff #${from ?? ''} → #${to ?? ''} · Verity`}</title>
      <Breadcrumbs
        items={[
          { label: 'Environments', to: paths.environments(org) },
          { label: env, to: paths.environment(org, env) },
          { label: 'Compare snapshots' },
        ]}
      />
      <h1>
        Compare snapshots of {env}
        {from !== null && to !== null && !bad ? `: #${from} → #${to}` : ''}
      </h1>
      <form className="filters" onSubmit={onSubmit} aria-label="Snapshots to compare" key={`${from}-${to}`}>
        <Field id="diff-from" label="From snapshot">
          <input
            id="diff-from"
            name="from"
            type="number"
            min={1}
            max={latest ?? undefined}
            defaultValue={from ?? ''}
            required
          />
        </Field>
        <Field id="diff-to" label="To snapshot">
          <input
            id="diff-to"
            name="to"
            type="number"
            min={1}
            max={latest ?? undefined}
            defaultValue={to ?? ''}
            required
          />
        </Field>
        <button type="submit">Compare</button>
        {latest !== null && <span className="muted small">Snapshots 1 to {latest}</span>}
      </form>
      {bad ? (
        <p role="alert">
          A snapshot to compare is a positive whole number: from={params.get('from')}, to={params.get('to')}.
        </p>
      ) : (
        <QueryView query={envQuery} what="the environment">
          {(e) =>
            e.latest_snapshot_index === null ? (
              <p>No snapshot yet: there is nothing to compare.</p>
            ) : (
              <QueryView query={query} what="the differences">
                {(d) => <DiffBody org={org} env={env} from={from!} to={to!} d={d} />}
              </QueryView>
            )
          }
        </QueryView>
      )}
    </>
  );
}
