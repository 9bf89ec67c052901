/**
 * `/{org}/flows/{flow}/trails/{trail}`: the template's slots for the trail and each artifact,
 * each compliant, non-compliant or missing (and why), overrides, evidence by type, downloads.
 */
import { useEffect, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { Badge, StateBadge } from '../../components/state-badge';
import { apiUrl, download, seg } from '../../lib/api-client';
import type { Attestation, AttestationStatus, Trail } from '../../lib/contract';
import { formatTime, jsonText, paths, safeHref, short } from '../../lib/format';
import { useTrail, useTrailAttestations } from './api';
import { EvidenceView } from './evidence';

type Unbound = Trail['compliance_status']['unbound_attestations'][number];

/** Why a slot has no evidence: an attestation that did not bind, or none reported. */
function missingReason(
  slot: AttestationStatus,
  artifactName: string | null,
  artifactMissing: boolean,
  unbound: Unbound[],
): string {
  const u = unbound.find(
    (x) =>
      x.attestation_name === slot.attestation_name &&
      (artifactName === null || x.target_artifacts.includes(artifactName)),
  );
  if (u) {
    // A pending attestation waits for an artifact of its name and commit: when an artifact of that
    // name is in the trail, its commit differs; when none is, the artifact was never reported.
    if (u.reason.startsWith('pending:')) {
      return artifactMissing ? `never reported: ${u.reason}` : `wrong commit: ${u.reason}`;
    }
    return `unbound: ${u.reason}`;
  }
  if (artifactMissing) return 'never reported: the artifact itself has not been reported to this trail';
  return 'never reported: no attestation with this name was made';
}

function SlotStatus({ slot, reason }: { slot: AttestationStatus; reason: string }) {
  if (slot.status === 'MISSING')
    return (
      <>
        <Badge tone="warn">Missing</Badge> <span className="small">{reason}</span>
      </>
    );
  return (
    <>
      {slot.is_compliant ? <Badge tone="ok">Compliant</Badge> : <Badge tone="bad">Non-compliant</Badge>}
      {slot.overridden_attestation_id && (
        <>
          {' '}
          <Badge tone="unknown">Overridden</Badge>
        </>
      )}
      {slot.unexpected && (
        <>
          {' '}
          <Badge tone="unknown">Not in template</Badge>
        </>
      )}
    </>
  );
}

function Slots({
  slots,
  byId,
  artifactName,
  artifactMissing,
  unbound,
  highlight,
  label,
}: {
  slots: AttestationStatus[];
  byId: Map<string, Attestation>;
  artifactName: string | null;
  artifactMissing: boolean;
  unbound: Unbound[];
  highlight: string | null;
  label: string;
}) {
  if (slots.length === 0) return <p className="muted">No attestation is expected here, and none was made.</p>;
  return (
    <ul className="slots" aria-label={label}>
      {slots.map((slot) => {
        const att = slot.attestation_id ? byId.get(slot.attestation_id) : undefined;
        const original = slot.overridden_attestation_id
          ? byId.get(slot.overridden_attestation_id)
          : undefined;
        const id = slot.attestation_id ? `attestation-${slot.attestation_id}` : undefined;
        return (
          <li
            key={`${slot.attestation_name}-${slot.attestation_id ?? 'missing'}`}
            id={id}
            className={highlight && slot.attestation_id === highlight ? 'slot highlighted' : 'slot'}
          >
            <h4>
              {slot.attestation_name}{' '}
              <span className="muted small">({slot.attestation_type ?? 'any type'})</span>
            </h4>
            <p>
              <SlotStatus
                slot={slot}
                reason={
                  slot.status === 'MISSING' ? missingReason(slot, artifactName, artifactMissing, unbound) : ''
                }
              />
            </p>
            {att && <EvidenceView att={att} />}
            {original && (
              <details>
                <summary>Original attestation (before the override)</summary>
                <p>
                  {original.is_compliant ? (
                    <Badge tone="ok">Compliant</Badge>
                  ) : (
                    <Badge tone="bad">Non-compliant</Badge>
                  )}
                </p>
                <EvidenceView att={original} />
              </details>
            )}
            {slot.overridden_attestation_id && !original && (
              <p className="small muted">
                The original attestation is {short(slot.overridden_attestation_id, 8)}.
              </p>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function AuditPackage({ org, flow, trail }: { org: string; flow: string; trail: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <p>
      <button
        type="button"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          download(
            apiUrl(`/trails/${seg(org)}/${seg(flow)}/${seg(trail)}/audit_package`),
            `${trail}-audit-package.tar.gz`,
          )
            .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
            .finally(() => setBusy(false));
        }}
      >
        {busy ? 'Preparing audit package…' : 'Download audit package'}
      </button>
      {error && (
        <span role="alert" className="error-inline">
          {' '}
          {error}
        </span>
      )}
    </p>
  );
}

export default function TrailPage() {
  const { org = '', flow = '', trail = '' } = useParams();
  const [params] = useSearchParams();
  const highlight = params.get('attestation_id');
  const trailQuery = useTrail(org, flow, trail);
  const atts = useTrailAttestations(org, flow, trail);
  const byId = new Map((atts.data?.data ?? []).map((a) => [a.attestation_id, a]));

  useEffect(() => {
    if (highlight && atts.data)
      document.getElementById(`attestation-${highlight}`)?.scrollIntoView({ block: 'center' });
  }, [highlight, atts.data]);

  return (
    <>
      <title>{`${trail} · ${flow} · Verity`}</title>
      <Breadcrumbs
        items={[
          { label: 'Flows', to: paths.flows(org) },
          { label: flow, to: paths.flow(org, flow) },
          { label: trail },
        ]}
      />
      <h1>Trail {trail}</h1>
      <QueryView query={trailQuery} what="the trail">
        {(t) => {
          const cs = t.compliance_status;
          const templateArtifacts = t.template.trail.artifacts.map((a) => a.name);
          const artifactNames = [...new Set([...templateArtifacts, ...Object.keys(cs.artifacts_statuses)])];
          return (
            <>
              <dl className="facts">
                <div>
                  <dt>Compliance</dt>
                  <dd>
                    <StateBadge state={t.compliance_state} />
                  </dd>
                </div>
                <div>
                  <dt>Commit</dt>
                  <dd>
                    {t.git_commit_info ? (
                      <>
                        <code>{short(t.git_commit_info.sha1, 10)}</code>{' '}
                        {t.git_commit_info.message?.split('\n')[0]}
                        {t.git_commit_info.author && ` · ${t.git_commit_info.author}`}
                      </>
                    ) : (
                      'none'
                    )}
                  </dd>
                </div>
                <div>
                  <dt>Created</dt>
                  <dd>
                    {formatTime(t.created_at)} by {t.created_by}
                  </dd>
                </div>
                <div>
                  <dt>Evaluated</dt>
                  <dd>{formatTime(cs.evaluated_at)}</dd>
                </div>
                {safeHref(t.origin_url) && (
                  <div>
                    <dt>Origin</dt>
                    <dd>
                      <a href={safeHref(t.origin_url)} rel="noreferrer noopener" target="_blank">
                        {t.origin_url}
                      </a>
                    </dd>
                  </div>
                )}
              </dl>
              {t.description && <p>{t.description}</p>}
              {t.user_data !== null && t.user_data !== undefined && jsonText(t.user_data) !== '{}' && (
                <details>
                  <summary>User data</summary>
                  <pre>{jsonText(t.user_data)}</pre>
                </details>
              )}
              <AuditPackage org={org} flow={flow} trail={trail} />
              {atts.error ? <p role="alert">Evidence could not be loaded: {atts.error.message}</p> : null}

              <section aria-labelledby="trail-slots">
                <h2 id="trail-slots">Trail attestations</h2>
                <Slots
                  slots={cs.attestations_statuses}
                  byId={byId}
                  artifactName={null}
                  artifactMissing={false}
                  unbound={cs.unbound_attestations}
                  highlight={highlight}
                  label="Trail attestations"
                />
              </section>

              <section aria-labelledby="artifact-slots">
                <h2 id="artifact-slots">Artifacts</h2>
                {artifactNames.length === 0 && (
                  <p>No artifact is expected in this trail, and none was reported.</p>
                )}
                {artifactNames.map((name) => {
                  const a = cs.artifacts_statuses[name];
                  const missing = !a || a.status === 'MISSING' || a.artifact_fingerprint === null;
                  return (
                    <article key={name} className="artifact-block" aria-labelledby={`artifact-${name}`}>
                      <h3 id={`artifact-${name}`}>
                        Artifact {name} {a ? <StateBadge state={a.status} /> : <StateBadge state="MISSING" />}
                      </h3>
                      {a?.artifact_fingerprint ? (
                        <p>
                          Fingerprint{' '}
                          <Link
                            to={`${paths.artifact(org, flow, a.artifact_fingerprint)}${a.artifact_id ? `?artifact_id=${encodeURIComponent(a.artifact_id)}` : ''}`}
                          >
                            <code>{short(a.artifact_fingerprint, 16)}</code>
                          </Link>
                          {a.unexpected && (
                            <>
                              {' '}
                              <Badge tone="unknown">Not in template</Badge>
                            </>
                          )}
                        </p>
                      ) : (
                        <p>
                          <Badge tone="warn">Missing</Badge> never reported: no artifact named {name} has been
                          attested in this trail.
                        </p>
                      )}
                      <Slots
                        slots={a?.attestations_statuses ?? []}
                        byId={byId}
                        artifactName={name}
                        artifactMissing={missing}
                        unbound={cs.unbound_attestations}
                        highlight={highlight}
                        label={`Attestations of artifact ${name}`}
                      />
                    </article>
                  );
                })}
              </section>

              {cs.unbound_attestations.length > 0 && (
                <section aria-labelledby="unbound">
                  <h2 id="unbound">Attestations not bound to an artifact</h2>
                  <ul className="plain">
                    {cs.unbound_attestations.map((u) => (
                      <li key={u.attestation_id}>
                        <strong>{u.attestation_name}</strong> ({u.attestation_type}) for{' '}
                        {u.target_artifacts.join(', ') || 'no artifact'}: {u.reason}
                      </li>
                    ))}
                  </ul>
                </section>
              )}
            </>
          );
        }}
      </QueryView>
    </>
  );
}
