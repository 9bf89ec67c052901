/**
 * `/{org}/flows/{flow}/trails/{trail}`: the template's slots for the trail and each artifact,
 * each compliant, non-compliant or missing (and why), overrides, evidence by type, downloads.
 */
import { useEffect } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { DownloadError, useDownload } from '../../components/download';
import { ExternalLink } from '../../components/external-link';
import { Fact } from '../../components/facts';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { Badge, GREY_SYMBOL, StateBadge } from '../../components/state-badge';
import { apiUrl, seg } from '../../lib/api-client';
import type { Attestation, Trail } from '../../lib/contract';
import { formatTime, paths, plural, safeHref, short } from '../../lib/format';
import { ATTESTATION_PAGES_AUTO, ATTESTATIONS_PER_PAGE, useTrail, useTrailAttestations } from './api';
import { CommitSummary, UserData } from './record-parts';
import { Slots } from './trail-slots';

function AuditPackage({ org, flow, trail }: { org: string; flow: string; trail: string }) {
  const { error, busy, start } = useDownload();
  return (
    <p>
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          start(
            apiUrl(`/trails/${seg(org)}/${seg(flow)}/${seg(trail)}/audit_package`),
            `${trail}-audit-package.tar.gz`,
          )
        }
      >
        {busy ? 'Preparing audit package…' : 'Download audit package'}
      </button>
      <DownloadError error={error} />
    </p>
  );
}

function TrailFacts({ t }: { t: Trail }) {
  return (
    <dl className="facts">
      <Fact term="Compliance">
        <StateBadge state={t.compliance_state} />
      </Fact>
      <Fact term="Commit">
        {t.git_commit_info ? <CommitSummary sha={t.git_commit_info.sha1} info={t.git_commit_info} /> : 'none'}
      </Fact>
      <Fact term="Created">
        {formatTime(t.created_at)} by {t.created_by}
      </Fact>
      <Fact term="Evaluated">{formatTime(t.compliance_status.evaluated_at)}</Fact>
      {safeHref(t.origin_url) && (
        <Fact term="Origin">
          <ExternalLink href={t.origin_url}>{t.origin_url}</ExternalLink>
        </Fact>
      )}
    </dl>
  );
}

interface TrailView {
  org: string;
  flow: string;
  trail: string;
  t: Trail;
  byId: Map<string, Attestation>;
  highlight: string | null;
}

/** One artifact of the trail: its state and fingerprint (or that it was never reported), and its slots. */
function TrailArtifact({ view, name }: { view: TrailView; name: string }) {
  const { org, flow, t, byId, highlight } = view;
  const cs = t.compliance_status;
  const a = cs.artifacts_statuses[name];
  const missing = !a || a.status === 'MISSING' || a.artifact_fingerprint === null;
  return (
    <article className="artifact-block" aria-labelledby={`artifact-${name}`}>
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
              <Badge tone="unknown" symbol={GREY_SYMBOL.notInTemplate}>
                Not in template
              </Badge>
            </>
          )}
        </p>
      ) : (
        <p>
          <Badge tone="warn">Missing</Badge> never reported: no artifact named {name} has been attested in
          this trail.
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
}

function UnboundAttestations({ unbound }: { unbound: Trail['compliance_status']['unbound_attestations'] }) {
  if (unbound.length === 0) {
    return null;
  }
  return (
    <section aria-labelledby="unbound">
      <h2 id="unbound">Attestations not bound to an artifact</h2>
      <ul className="plain">
        {unbound.map((u) => (
          <li key={u.attestation_id}>
            <strong>{u.attestation_name}</strong> ({u.attestation_type}) for{' '}
            {u.target_artifacts.join(', ') || 'no artifact'}: {u.reason}
          </li>
        ))}
      </ul>
    </section>
  );
}

function TrailBody({ view, evidenceError }: { view: TrailView; evidenceError: Error | null }) {
  const { org, flow, t, byId, highlight } = view;
  const cs = t.compliance_status;
  const templateArtifacts = t.template.trail.artifacts.map((a) => a.name);
  const artifactNames = [...new Set([...templateArtifacts, ...Object.keys(cs.artifacts_statuses)])];
  return (
    <>
      <TrailFacts t={t} />
      {t.description && <p>{t.description}</p>}
      <UserData data={t.user_data} />
      <AuditPackage org={org} flow={flow} trail={view.trail} />
      {evidenceError ? <p role="alert">Evidence could not be loaded: {evidenceError.message}</p> : null}

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
        {artifactNames.length === 0 && <p>No artifact is expected in this trail, and none was reported.</p>}
        {artifactNames.map((name) => (
          <TrailArtifact key={name} view={view} name={name} />
        ))}
      </section>

      <UnboundAttestations unbound={cs.unbound_attestations} />
    </>
  );
}

export default function TrailPage() {
  const { org = '', flow = '', trail = '' } = useParams();
  const [params] = useSearchParams();
  const highlight = params.get('attestation_id');
  const trailQuery = useTrail(org, flow, trail);
  const atts = useTrailAttestations(org, flow, trail);
  const loaded = (atts.data?.pages ?? []).flatMap((p) => p.data);
  const byId = new Map(loaded.map((a) => [a.attestation_id, a]));
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = atts;
  const pages = atts.data?.pages.length ?? 0;
  // how many the trail holds in all, as its first page counted them
  const total = atts.data?.pages[0]?.total_count;
  // The first pages load by themselves; a trail with more evidence offers the rest on demand.
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && pages < ATTESTATION_PAGES_AUTO) {
      void fetchNextPage();
    }
  }, [hasNextPage, isFetchingNextPage, pages, fetchNextPage]);

  // The highlighted slot exists once both the trail and its attestations are in, in either order.
  useEffect(() => {
    if (highlight && atts.data && trailQuery.data) {
      document.getElementById(`attestation-${highlight}`)?.scrollIntoView({ block: 'center' });
    }
  }, [highlight, atts.data, trailQuery.data]);

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
        {(t) => <TrailBody view={{ org, flow, trail, t, byId, highlight }} evidenceError={atts.error} />}
      </QueryView>
      {atts.data && (
        <p role="status" className="muted">
          {total !== undefined && hasNextPage
            ? `Evidence shown for ${loaded.length} of ${plural(total, 'attestation')} of this trail, newest first.`
            : `Evidence shown for ${plural(loaded.length, 'attestation')}${hasNextPage ? ': this trail has more.' : ', all of this trail.'}`}{' '}
          {hasNextPage && (
            <button type="button" disabled={isFetchingNextPage} onClick={() => void fetchNextPage()}>
              {isFetchingNextPage ? 'Loading more evidence…' : `Load ${ATTESTATIONS_PER_PAGE} more`}
            </button>
          )}
        </p>
      )}
    </>
  );
}
