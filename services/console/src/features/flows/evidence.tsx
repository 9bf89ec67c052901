/**
 * One attestation's evidence in a readable form, by type: JUnit counts, scanner findings, pull
 * requests and approvers, tickets, quality gates, a custom type's summary, overrides. Everything
 * the tenant sent is rendered as text.
 */
import { DownloadError, useDownload } from '../../components/download';
import { ExternalLink } from '../../components/external-link';
import { Badge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import { consolePath, formatTime, jsonText, short } from '../../lib/format';
import type {
  Attestation,
  JUnitResult,
  PullRequest,
  QualityResults,
  ScanResults,
  TicketItem,
} from '../../lib/contract';
import { TableBox } from '../../components/table-box';

const asArray = <T,>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

function JUnit({ results }: { results: JUnitResult[] }) {
  const t = results.reduce(
    (acc, r) => ({
      total: acc.total + r.total,
      failures: acc.failures + r.failures,
      errors: acc.errors + r.errors,
      skipped: acc.skipped + r.skipped,
    }),
    { total: 0, failures: 0, errors: 0, skipped: 0 },
  );
  const passed = t.total - t.failures - t.errors - t.skipped;
  return (
    <div>
      <p>
        <strong>{t.total} tests</strong>: {passed} passed, {t.failures} failed, {t.errors} errors, {t.skipped}{' '}
        skipped
      </p>
      {results.length > 0 && (
        <TableBox>
          <table className="compact">
            <caption className="visually-hidden">Test suites</caption>
            <ColumnHeads columns={['Suite', 'Tests', 'Failures', 'Errors', 'Skipped', 'Duration (s)']} />
            <tbody>
              {results.slice(0, 50).map((r, i) => (
                <tr key={`${r.name}-${i}`}>
                  <th scope="row">{r.name}</th>
                  <td className="num">{r.total}</td>
                  <td className="num">{r.failures}</td>
                  <td className="num">{r.errors}</td>
                  <td className="num">{r.skipped}</td>
                  <td className="num">{r.duration.toFixed(2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {results.length > 50 && <p className="muted">and {results.length - 50} more suites</p>}
    </div>
  );
}

function Scan({ scan }: { scan: ScanResults }) {
  const runs = asArray<ScanResults['results'][number]>(scan.results);
  const sum = (k: 'high_count' | 'medium_count' | 'low_count') => runs.reduce((n, r) => n + r[k], 0);
  const issues = runs.flatMap((r) => [
    ...(r.high ?? []).map((x) => ({ ...x, severity: 'high' })),
    ...(r.medium ?? []).map((x) => ({ ...x, severity: 'medium' })),
    ...(r.low ?? []).map((x) => ({ ...x, severity: 'low' })),
  ]);
  return (
    <div>
      <p>
        Scanner <strong>{scan.tool.name}</strong>
        {scan.tool.version ? ` ${scan.tool.version}` : ''}: {sum('high_count')} high, {sum('medium_count')}{' '}
        medium, {sum('low_count')} low findings
      </p>
      {issues.length > 0 && (
        <details>
          <summary>Findings ({issues.length})</summary>
          <ul className="plain">
            {issues.slice(0, 100).map((x, i) => (
              <li key={`${x.id}-${i}`}>
                <Badge tone={x.severity === 'high' ? 'bad' : 'warn'}>{x.severity}</Badge> <code>{x.id}</code>:{' '}
                {x.message}
                {x.locations && x.locations.length > 0 && (
                  <span className="muted small">
                    {' '}
                    ({x.locations.map((l) => `${l.uri}${l.lines ? `:${l.lines}` : ''}`).join(', ')})
                  </span>
                )}
              </li>
            ))}
          </ul>
          {issues.length > 100 && <p className="muted">and {issues.length - 100} more</p>}
        </details>
      )}
    </div>
  );
}

function PullRequests({ prs, provider }: { prs: PullRequest[]; provider: string | undefined }) {
  if (prs.length === 0) {
    return <p>No pull request was found for this commit{provider ? ` on ${provider}` : ''}.</p>;
  }
  return (
    <ul className="plain">
      {prs.map((pr) => {
        const approvers = (pr.approvers ?? []).map((a) => (typeof a === 'string' ? a : a.username));
        return (
          <li key={pr.url}>
            <ExternalLink href={pr.url}>{pr.title ?? pr.url}</ExternalLink> · {pr.state}
            {pr.author && ` · by ${pr.author}`} ·{' '}
            {approvers.length > 0 ? (
              `approved by ${approvers.join(', ')}`
            ) : (
              <Badge tone="warn">No approvers</Badge>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function Tickets({ tickets }: { tickets: TicketItem[] }) {
  if (tickets.length === 0) {
    return <p>No issue reference was found.</p>;
  }
  return (
    <ul className="plain">
      {tickets.map((t) => (
        <li key={t.issue_id}>
          <ExternalLink href={t.issue_url}>{t.issue_id}</ExternalLink>{' '}
          {t.issue_exists ? <Badge tone="ok">Exists</Badge> : <Badge tone="bad">Not found</Badge>}
          {t.issue_fields && typeof t.issue_fields.summary === 'string' && ` ${t.issue_fields.summary}`}
        </li>
      ))}
    </ul>
  );
}

function Quality({ q }: { q: QualityResults }) {
  return (
    <div>
      <p>
        Project <ExternalLink href={q.project.url}>{q.project.name ?? q.project.key}</ExternalLink> at
        revision <code>{short(q.revision, 10)}</code>, quality gate:{' '}
        <strong>{q.qualityGate?.status ?? 'none'}</strong>
      </p>
      {q.qualityGate && q.qualityGate.conditions.length > 0 && (
        <ul className="plain">
          {q.qualityGate.conditions.map((c) => (
            <li key={c.metric}>
              {c.metric}: {c.value ?? '?'} ({c.operator} {c.errorThreshold ?? ''}) · {c.status}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Custom({ att }: { att: Attestation }) {
  const ev = att.evaluation;
  return (
    <div>
      <p>
        Custom type <strong>{att.type_name ?? att.attestation_type}</strong>
        {ev ? ` (version ${ev.type_version})` : ''}
      </p>
      {ev && ev.summary.length > 0 && (
        <dl className="summary">
          {ev.summary.map((s) => (
            <div key={s.name}>
              <dt>{s.name}</dt>
              <dd>
                {s.error ? `error: ${s.error}` : typeof s.value === 'string' ? s.value : jsonText(s.value)}
              </dd>
            </div>
          ))}
        </dl>
      )}
      {ev && ev.schema_errors.length > 0 && (
        <ul className="reasons" aria-label="Schema errors">
          {ev.schema_errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {ev && ev.rule_results.some((r) => r.result !== true) && (
        <ul className="reasons" aria-label="Rules not met">
          {ev.rule_results
            .filter((r) => r.result !== true)
            .map((r) => (
              <li key={r.rule}>
                <code>{r.rule}</code> {r.error ? `failed: ${r.error}` : 'is not met'}
              </li>
            ))}
        </ul>
      )}
      {att.attestation_data !== undefined && (
        <details>
          <summary>Attested data</summary>
          <pre>{jsonText(att.attestation_data)}</pre>
        </details>
      )}
    </div>
  );
}

function TypeBody({ att }: { att: Attestation }) {
  const type = att.attestation_type;
  if (type === 'junit') {
    return <JUnit results={asArray<JUnitResult>(att.junit_results)} />;
  }
  if (type === 'snyk' && att.snyk_results) {
    return <Scan scan={att.snyk_results as ScanResults} />;
  }
  if (type === 'pull_request') {
    return <PullRequests prs={asArray<PullRequest>(att.pull_requests)} provider={att.git_provider} />;
  }
  if (type === 'jira') {
    return <Tickets tickets={asArray<TicketItem>(att.jira_results)} />;
  }
  if (type === 'sonar' && att.sonar_results) {
    return <Quality q={att.sonar_results as QualityResults} />;
  }
  if (type === 'override') {
    return (
      <p>
        Override of a <strong>{att.original_attestation_type}</strong> attestation to{' '}
        <strong>{att.new_compliance_status ? 'compliant' : 'non-compliant'}</strong>. Reason: {att.reason}
      </p>
    );
  }
  if (type === 'decision' || att.control) {
    return (
      <p>
        Decision for control <strong>{att.control}</strong>
        {att.control_version ? ` version ${att.control_version}` : ''}
      </p>
    );
  }
  if (type.startsWith('custom') || att.evaluation || att.attestation_data !== undefined) {
    return <Custom att={att} />;
  }
  return null;
}

/** The evidence file and its download (the key goes in a header, so links cannot carry it). */
function EvidenceFile({ att }: { att: Attestation }) {
  const { error, start } = useDownload();
  const file = att.evidence_file;
  if (!file) {
    return null;
  }
  const url = consolePath(file.download_url);
  return (
    <p>
      Evidence file <code>{file.filename}</code> ({file.size} bytes, sha256{' '}
      <code title={file.sha256}>{short(file.sha256, 12)}</code>){' '}
      {url && (
        <button type="button" onClick={() => start(url, file.filename)}>
          Download evidence file {file.filename}
        </button>
      )}
      <DownloadError error={error} />
    </p>
  );
}

export function EvidenceView({ att }: { att: Attestation }) {
  const hasUserData =
    att.user_data !== null &&
    att.user_data !== undefined &&
    !(typeof att.user_data === 'object' && Object.keys(att.user_data).length === 0);
  return (
    <div className="evidence">
      <p className="small muted">
        {att.attestation_type} · reported {formatTime(att.created_at)} by {att.reported_by}
        {att.git_commit_info && (
          <>
            {' '}
            · commit <code>{short(att.git_commit_info.sha1, 10)}</code>
          </>
        )}
        {att.origin_url && (
          <>
            {' '}
            · <ExternalLink href={att.origin_url}>origin</ExternalLink>
          </>
        )}
      </p>
      {att.description && <p>{att.description}</p>}
      <TypeBody att={att} />
      <EvidenceFile att={att} />
      {hasUserData && (
        <details>
          <summary>User data</summary>
          <pre>{jsonText(att.user_data)}</pre>
        </details>
      )}
    </div>
  );
}
