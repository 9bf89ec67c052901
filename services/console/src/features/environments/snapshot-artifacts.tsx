/** The artifacts of one snapshot: what runs, where it came from, and why it is not compliant. */
import { Link } from 'react-router';
import { Badge, ComplianceBadge, GREY_SYMBOL } from '../../components/state-badge';
import { consolePath, paths, safeHref, short } from '../../lib/format';
import type { SnapshotArtifact } from '../../lib/contract';
import { ColumnHeads } from '../../components/table-head';
import { TableBox } from '../../components/table-box';

/** The artifact's change against the previous snapshot (the API's annotation), in words. */
function Change({ a }: { a: SnapshotArtifact }) {
  const { type, was, now } = a.annotation;
  if (type.startsWith('started')) {
    return <Badge tone="ok">{`Started (${now})`}</Badge>;
  }
  switch (type) {
    case 'exited':
      return <Badge tone="unknown" symbol={GREY_SYMBOL.exited}>{`Exited (was ${was})`}</Badge>;
    case 'became-compliant':
      return <Badge tone="ok">{`Became compliant (${now})`}</Badge>;
    case 'became-non-compliant':
      return <Badge tone="bad">{`Became non-compliant (${now})`}</Badge>;
    case 'updated-provenance':
      return <Badge tone="warn">{`Provenance updated (${now})`}</Badge>;
    default:
      return <span className="muted">{was === now ? `Unchanged (${now})` : `Scaled (${was} → ${now})`}</span>;
  }
}

function Provenance({ org, a }: { org: string; a: SnapshotArtifact }) {
  if (a.flows.length === 0) {
    return <Badge tone="warn">No provenance: not attested in any flow</Badge>;
  }
  return (
    <ul className="plain">
      {a.flows.map((f) => (
        <li key={`${f.flow_name}/${f.trail_name ?? ''}`}>
          Flow <Link to={paths.flow(org, f.flow_name)}>{f.flow_name}</Link>
          {f.trail_name && (
            <>
              {' '}
              · trail <Link to={paths.trail(org, f.flow_name, f.trail_name)}>{f.trail_name}</Link>
            </>
          )}
          {f.git_commit && (
            <>
              {' '}
              · commit{' '}
              {safeHref(f.commit_url) ? (
                <a href={safeHref(f.commit_url)} rel="noreferrer noopener" target="_blank">
                  <code>{short(f.git_commit, 10)}</code>
                </a>
              ) : (
                <code>{short(f.git_commit, 10)}</code>
              )}
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

export function SnapshotArtifacts({
  org,
  artifacts,
  caption,
}: {
  org: string;
  artifacts: SnapshotArtifact[];
  caption: string;
}) {
  if (artifacts.length === 0) {
    return <p>Nothing runs in this snapshot.</p>;
  }
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <ColumnHeads columns={['Artifact', 'Compliance', 'Change (instances)', 'Provenance']} />
        <tbody>
          {artifacts.map((a) => {
            const link = consolePath(a.html_url);
            return (
              <tr key={`${a.fingerprint}-${a.annotation.type}`}>
                <th scope="row">
                  {link ? <Link to={link}>{a.name}</Link> : a.name}
                  <div className="small">
                    <code title={a.fingerprint}>{short(a.fingerprint, 16)}</code>
                  </div>
                </th>
                <td>
                  <ComplianceBadge compliant={a.compliant} unknown="no-policy" />
                  {a.allowlisted && (
                    <>
                      {' '}
                      <Badge tone="unknown" symbol={GREY_SYMBOL.allowlisted}>
                        Allowlisted
                      </Badge>
                    </>
                  )}
                  {a.reasons_for_incompliance.length > 0 && (
                    <ul className="reasons" aria-label="Why it is not compliant">
                      {a.reasons_for_incompliance.map((r) => (
                        <li key={r}>{r}</li>
                      ))}
                    </ul>
                  )}
                </td>
                <td>
                  <Change a={a} />
                </td>
                <td>
                  <Provenance org={org} a={a} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}

/** Applied policies of a snapshot, with the artifacts each one failed. */
export function AppliedPolicies({
  policies,
  attached,
}: {
  policies: Array<Record<string, unknown>>;
  attached: string[];
}) {
  const applied = new Map(policies.map((p) => [String(p.name), p]));
  const names = [...new Set([...attached, ...applied.keys()])];
  if (names.length === 0) {
    return <p>No policy is attached: compliance of this environment is unknown.</p>;
  }
  return (
    <ul className="plain">
      {names.map((name) => {
        const p = applied.get(name);
        const failing = Array.isArray(p?.failing_artifacts) ? (p.failing_artifacts as string[]) : [];
        return (
          <li key={name}>
            <strong>{name}</strong>
            {p && typeof p.version === 'number' && <span className="muted"> version {p.version}</span>}{' '}
            {!p ? (
              <Badge tone="unknown" symbol={GREY_SYMBOL.notYetApplied}>
                Not yet applied
              </Badge>
            ) : failing.length > 0 ? (
              <Badge tone="bad">{`Failed by ${failing.length} artifact${failing.length === 1 ? '' : 's'}`}</Badge>
            ) : (
              <Badge tone="ok">Passed</Badge>
            )}
          </li>
        );
      })}
    </ul>
  );
}
