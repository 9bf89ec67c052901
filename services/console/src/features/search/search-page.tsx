/**
 * `/{org}/search?q=`: flows, trails, environments and artifacts by name, and (for hex text) the
 * artifacts of a fingerprint prefix or commit, as `kosli search` answers it.
 */
import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { LinkList } from '../../components/link-list';
import { QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import { ApiError, apiUrl, getJson, seg } from '../../lib/api-client';
import type { NameSearchResult, SearchResult } from '../../lib/contract';
import { consolePath, paths, plural, short } from '../../lib/format';
import { formText } from '../../lib/form';
import { ColumnHeads } from '../../components/table-head';
import { Field } from '../../components/field';
import { TableBox } from '../../components/table-box';

const SHA = /^[0-9a-f]{5,64}$/;

/** Artifacts by fingerprint prefix or commit; null when nothing matches (the API's 404). */
function useSearch(org: string, q: string) {
  return useQuery({
    queryKey: ['search', org, q],
    queryFn: async ({ signal }) => {
      try {
        return await getJson<SearchResult>(apiUrl(`/search/${seg(org)}/sha/${seg(q)}`), signal);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          return null;
        }
        throw err;
      }
    },
    enabled: SHA.test(q),
  });
}

function useNameSearch(org: string, q: string) {
  return useQuery({
    queryKey: ['search-names', org, q],
    queryFn: ({ signal }) => getJson<NameSearchResult>(apiUrl(`/search/${seg(org)}/names`, { q }), signal),
    enabled: q.length >= 2 && q.length <= 100,
  });
}

/** "3 flows" and, when the API had more than it answered, that it shows the first ones. */
function countOf(n: number, word: string, more: boolean, limit: number): string {
  return more ? `the first ${limit} ${word}s (more match: make the search longer)` : plural(n, word);
}

function NameResults({ org, r }: { org: string; r: NameSearchResult }) {
  const total = r.flows.length + r.trails.length + r.environments.length + r.artifacts.length;
  if (total === 0) {
    return <p>No flow, trail, environment or artifact has “{r.query}” in its name.</p>;
  }
  return (
    <>
      {r.flows.length > 0 && (
        <section aria-labelledby="names-flows">
          <h3 id="names-flows">Flows: {countOf(r.flows.length, 'flow', r.more.flows, r.limit)}</h3>
          <ul className="plain">
            {r.flows.map((f) => (
              <li key={f.name}>
                <Link to={paths.flow(org, f.name)}>{f.name}</Link>
                {f.description && <span className="muted small"> {f.description}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      {r.environments.length > 0 && (
        <section aria-labelledby="names-envs">
          <h3 id="names-envs">
            Environments: {countOf(r.environments.length, 'environment', r.more.environments, r.limit)}
          </h3>
          <ul className="plain">
            {r.environments.map((e) => (
              <li key={e.name}>
                <Link to={paths.environment(org, e.name)}>{e.name}</Link>{' '}
                <span className="muted small">{e.type}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {r.trails.length > 0 && (
        <section aria-labelledby="names-trails">
          <h3 id="names-trails">Trails: {countOf(r.trails.length, 'trail', r.more.trails, r.limit)}</h3>
          <ul className="plain">
            {r.trails.map((t) => (
              <li key={`${t.flow}/${t.name}`}>
                <Link to={paths.trail(org, t.flow, t.name)}>{t.name}</Link>{' '}
                <span className="muted small">in flow {t.flow}</span>{' '}
                <StateBadge state={t.compliance_state} />
              </li>
            ))}
          </ul>
        </section>
      )}
      {r.artifacts.length > 0 && (
        <section aria-labelledby="names-artifacts">
          <h3 id="names-artifacts">
            Artifacts: {countOf(r.artifacts.length, 'artifact', r.more.artifacts, r.limit)}
          </h3>
          <ul className="plain">
            {r.artifacts.map((a) => (
              <li key={a.html_url}>
                <Link to={consolePath(a.html_url) ?? paths.artifact(org, a.flow, a.fingerprint)}>
                  {a.name}
                </Link>{' '}
                <span className="muted small">
                  <code>{short(a.fingerprint, 12)}</code> in {a.flow} / {a.trail}
                </span>{' '}
                <StateBadge state={a.compliance_state} />
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

function SearchResults({ org, q, r }: { org: string; q: string; r: SearchResult }) {
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">
        {r.artifacts.length} artifact{r.artifacts.length === 1 ? '' : 's'} for {r.resolved_to.type}{' '}
        {short(r.resolved_to.full_match ?? q, 16)}
      </h2>
      {r.artifacts.length === 0 ? (
        <p>No artifact has this fingerprint or commit.</p>
      ) : (
        <TableBox>
          <table>
            <caption className="visually-hidden">Search results</caption>
            <ColumnHeads columns={['Artifact', 'Flow and trail', 'Compliance', 'Commit', 'Running in']} />
            <tbody>
              {r.artifacts.map((a) => (
                <tr key={`${a.flow}-${a.trail}-${a.fingerprint}`}>
                  <th scope="row">
                    <Link to={consolePath(a.html_url) ?? paths.artifact(org, a.flow, a.fingerprint)}>
                      {a.name}
                    </Link>
                    <div className="small">
                      <code>{short(a.fingerprint, 16)}</code>
                    </div>
                  </th>
                  <td>
                    <Link to={paths.flow(org, a.flow)}>{a.flow}</Link> /{' '}
                    <Link to={paths.trail(org, a.flow, a.trail)}>{a.trail}</Link>
                  </td>
                  <td>
                    <StateBadge state={a.compliance_state} />
                  </td>
                  <td>{a.git_commit ? <code>{short(a.git_commit, 10)}</code> : 'none'}</td>
                  <td>
                    {a.running_in.length === 0 ? (
                      'nowhere'
                    ) : (
                      <LinkList names={a.running_in} to={(env) => paths.environment(org, env)} />
                    )}
                    {a.exited_from.length > 0 && (
                      <div className="small muted">exited from {a.exited_from.join(', ')}</div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}

export default function SearchPage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const q = (params.get('q') ?? '').trim();
  const hex = q.toLowerCase();
  const shaQuery = useSearch(org, hex);
  const names = useNameSearch(org, q);

  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const value = formText(new FormData(e.currentTarget), 'q');
    setParams(value ? { q: value } : {});
  };

  return (
    <>
      <title>{`Search ${q} · Verity`}</title>
      <h1>Search</h1>
      <form role="search" onSubmit={onSubmit} className="filters" aria-label="Search the organization">
        <Field id="search-q" label="A name (2 to 100 characters), a fingerprint prefix or a git commit" wide>
          <input id="search-q" name="q" type="search" defaultValue={q} key={q} spellCheck={false} />
        </Field>
        <button type="submit">Search</button>
      </form>
      {!q ? (
        <p>
          Enter part of the name of a flow, trail, environment or artifact (such as an image name), or the
          start of an artifact&apos;s fingerprint or of a git commit.
        </p>
      ) : q.length < 2 || q.length > 100 ? (
        <p role="alert">“{q}”: give 2 to 100 characters of a name, or 5 to 64 hexadecimal characters.</p>
      ) : (
        <>
          {SHA.test(hex) && (
            <QueryView query={shaQuery} what="the artifacts of this fingerprint or commit">
              {(r) =>
                r === null ? (
                  <p>No artifact has a fingerprint or commit starting with {hex}.</p>
                ) : (
                  <SearchResults org={org} q={hex} r={r} />
                )
              }
            </QueryView>
          )}
          <section aria-labelledby="names-heading">
            <h2 id="names-heading">Names containing “{q}”</h2>
            <QueryView query={names} what="the names">
              {(r) => <NameResults org={org} r={r} />}
            </QueryView>
          </section>
        </>
      )}
    </>
  );
}
