/** `/{org}/audit-log`: every write and sign-in, newest first, filtered by who or what. */
import type { FormEvent } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { Field } from '../../components/field';
import { QueryView } from '../../components/query-state';
import { formText } from '../../lib/form';
import { rangeOf } from '../../lib/counts';
import { formatTime } from '../../lib/format';
import type { AuditLog } from '../../lib/contract';
import { SettingsNav } from './settings-nav';
import { TableBox } from '../../components/table-box';
import { AUDIT_PER_PAGE, MAX_AUDIT_PER_PAGE, useAuditLog, type AuditFilters } from './api';

/** Entries per page from the address (`?per_page=`), within what the API answers. */
function perPageOf(value: string | null): number {
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, MAX_AUDIT_PER_PAGE) : AUDIT_PER_PAGE;
}

function AuditTable({
  data,
  filters,
}: {
  data: AuditLog & { page: number; perPage: number };
  filters: AuditFilters;
}) {
  return data.entries.length === 0 ? (
    <p>No entries{filters.actor || filters.action ? ' match these filters' : ' yet'}.</p>
  ) : (
    <div className="table-scroll">
      <TableBox>
        <table>
          <caption>
            {`Entries ${rangeOf({
              // the page the entries are of: while the next loads, the one shown stays
              offset: (data.page - 1) * data.perPage,
              shown: data.entries.length,
              total: data.total_count,
              capped: data.total_count_capped,
            })}, newest first${data.next ? '; older ones on the next page' : ''}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Resource</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {data.entries.map((e, i) => (
              <tr key={`${e.at}-${e.request_id ?? i}`}>
                <td>{formatTime(e.at)}</td>
                <td>
                  {e.actor.name}
                  <span className="muted">
                    {' '}
                    ({e.actor.kind === 'user' ? (e.actor.email ?? 'person') : 'service account'}
                    {e.actor.subject ? `, token ${e.actor.subject}` : ''})
                  </span>
                </td>
                <td>{e.action}</td>
                <td>
                  <code>{e.resource}</code>
                </td>
                <td>{e.ip ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </div>
  );
}

export default function AuditLogPage() {
  const org = useParams().org ?? '';
  const [params, setParams] = useSearchParams();
  const filters = {
    actor: params.get('actor') ?? '',
    action: params.get('action') ?? '',
    page: Math.max(1, Number(params.get('page') ?? '1') || 1),
    perPage: perPageOf(params.get('per_page')),
  };
  const log = useAuditLog(org, filters);
  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) {
        next.set(k, v);
      } else {
        next.delete(k);
      }
    }
    setParams(next);
  };
  const onFilter = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    update({ actor: formText(form, 'actor'), action: formText(form, 'action'), page: null });
  };
  return (
    <>
      <title>{`Audit log · ${org} · Verity`}</title>
      <h1>Audit log</h1>
      <SettingsNav org={org} />
      <p>Every change made through the API, and every sign-in, with who made it.</p>
      <form className="filters" onSubmit={onFilter} aria-label="Filter the audit log">
        <Field id="audit-actor" label="Who (name or e-mail)">
          <input id="audit-actor" name="actor" type="search" defaultValue={filters.actor} />
        </Field>
        <Field id="audit-action" label="Action">
          <input id="audit-action" name="action" type="search" defaultValue={filters.action} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <QueryView query={log} what="the audit log">
        {(data) => (
          <>
            <AuditTable data={data} filters={filters} />
            <nav className="pager" aria-label="Audit log pages">
              <button
                type="button"
                disabled={filters.page <= 1}
                onClick={() => update({ page: String(filters.page - 1) })}
              >
                Newer entries
              </button>
              <button
                type="button"
                disabled={!data.next}
                onClick={() => update({ page: String(filters.page + 1) })}
              >
                Older entries
              </button>
            </nav>
          </>
        )}
      </QueryView>
    </>
  );
}
