/** `/{org}/search?q=`: a fingerprint prefix or a commit, answered as `kosli search` answers it. */
import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { LinkList } from '../../components/link-list';
import { QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import { apiUrl, getJson, seg } from '../../lib/api-client';
import type { SearchResult } from '../../lib/contract';
import { consolePath, paths, short } from '../../lib/format';
import { formText } from '../../lib/form';
import { ColumnHeads } from '../../components/table-head';
import { Field } from '../../components/field';

const SHA = /^[0-9a-f]{5,64}$/;

function useSearch(org: string, q: string) {
  return useQuery({
    queryKey: ['search', org, q],
    queryFn: ({ signal }) => getJson<SearchResult>(apiUrl(`/search/${seg(org)}/sha/${seg(q)}`), signal),
    enabled: SHA.test(q),
  });
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
      )}
    </section>
  );
}

export default function SearchPage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const q = (params.get('q') ?? '').trim().toLowerCase();
  const query = useSearch(org, q);

  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const value = formText(new FormData(e.currentTarget), 'q');
    setParams(value ? { q: value } : {});
  };

  return (
    <>
      <title>{`Search ${q} · Verity`}</title>
      <h1>Search</h1>
      <form
        role="search"
        onSubmit={onSubmit}
        className="filters"
        aria-label="Search by fingerprint or commit"
      >
        <Field id="search-q" label="Fingerprint prefix or git commit (5 to 64 hexadecimal characters)">
          <input id="search-q" name="q" type="search" defaultValue={q} key={q} spellCheck={false} />
        </Field>
        <button type="submit">Search</button>
      </form>
      {!q ? (
        <p>Enter the start of an artifact&apos;s fingerprint or of a git commit.</p>
      ) : !SHA.test(q) ? (
        <p role="alert">“{q}” is not a fingerprint or commit: use 5 to 64 characters 0-9 and a-f.</p>
      ) : (
        <QueryView query={query} what="results">
          {(r) => <SearchResults org={org} q={q} r={r} />}
        </QueryView>
      )}
    </>
  );
}
