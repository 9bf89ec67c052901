/**
 * `/{org}`: the organization's home, the first page after sign-in. Per environment what runs now,
 * its compliance and its deployments this week (one request for up to HOME_ENVIRONMENTS of them,
 * saying how many there are and linking to the rest); the four keys and charts of deployment frequency
 * and lead time over the last weeks (`?environment=` narrows them); the repositories.
 */
import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Field } from '../../components/field';
import { QueryView } from '../../components/query-state';
import { paths } from '../../lib/format';
import type { Environment } from '../../lib/contract';
import { HOME_REPOS, useDora, useEnvironmentsNow, useHomeRepos } from './api';
import { CHART_WEEKS, chartsFrom, weekStart } from './figures';
import { DeliveryCharts, DeliveryLoading, EnvironmentsNow } from './home-parts';
import './insight.css';

function Delivery({ org, environments, now }: { org: string; environments: Environment[]; now: number }) {
  const [params, setParams] = useSearchParams();
  const environment = params.get('environment') ?? '';
  const dora = useDora(org, environment, chartsFrom(now));
  const names = environments.map((e) => e.name);
  return (
    <section aria-labelledby="home-delivery">
      <h2 id="home-delivery">{`Delivery over the last ${CHART_WEEKS} weeks`}</h2>
      <div className="filters">
        <Field id="home-environment" label="Environment">
          <select
            id="home-environment"
            value={environment}
            onChange={(e) =>
              setParams(e.target.value ? { environment: e.target.value } : {}, { replace: true })
            }
          >
            <option value="">All environments</option>
            {(names.includes(environment) || !environment ? names : [environment, ...names]).map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </Field>
      </div>
      {dora.data ? (
        <DeliveryCharts org={org} answer={dora.data} environment={environment} />
      ) : (
        <DeliveryLoading error={dora.error} retry={dora.refetch} />
      )}
    </section>
  );
}

function Repositories({ org }: { org: string }) {
  const repos = useHomeRepos(org);
  const pages = repos.data?.pages ?? [];
  const list = pages.flatMap((p) => p.repos);
  const total = pages[0]?.total_count ?? 0;
  return (
    <section aria-labelledby="home-repos">
      <h2 id="home-repos">Repositories</h2>
      <QueryView query={repos} what="the repositories">
        {() =>
          total === 0 ? (
            <p>
              No repository yet: CI reports one with an artifact&apos;s commit (
              <code>kosli attest artifact</code> with <code>--repo-url</code>).
            </p>
          ) : (
            <>
              <p className="muted" role="status">
                {total > list.length
                  ? `The first ${list.length} of ${total} repositories, by name.`
                  : `${total === 1 ? '1 repository' : `${total} repositories`}.`}{' '}
                Each shows its builds, deployments and lead time per environment, and what runs now.
              </p>
              <ul className="repo-list">
                {list.map((r) => (
                  <li key={r.id}>
                    <Link to={paths.repo(org, r.name)}>{r.name}</Link>
                  </li>
                ))}
              </ul>
              {repos.hasNextPage && (
                <button
                  type="button"
                  disabled={repos.isFetchingNextPage}
                  onClick={() => void repos.fetchNextPage()}
                >
                  {repos.isFetchingNextPage
                    ? 'Loading more repositories…'
                    : `Show ${Math.min(HOME_REPOS, total - list.length)} more`}
                </button>
              )}
            </>
          )
        }
      </QueryView>
    </section>
  );
}

export default function HomePage() {
  const { org = '' } = useParams();
  // "now" of the page: fixed per visit, so the weeks asked for do not move on every render
  const [now] = useState(() => Date.now() / 1000);
  const since = weekStart(now);
  const environments = useEnvironmentsNow(org, since);
  return (
    <>
      <title>{`${org} · Verity`}</title>
      <h1>{`Delivery in ${org}`}</h1>
      <QueryView query={environments} what="the environments">
        {(data) => (
          <>
            <EnvironmentsNow org={org} answer={data} since={since} />
            <Delivery org={org} environments={data.environments.map((e) => e.environment)} now={now} />
          </>
        )}
      </QueryView>
      <Repositories org={org} />
    </>
  );
}
