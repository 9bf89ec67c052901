/**
 * The template's slots of a trail or of one of its artifacts: each compliant, non-compliant or
 * missing (and why), with its evidence and any override.
 */
import { Badge, ComplianceBadge, GREY_SYMBOL } from '../../components/state-badge';
import type { Attestation, AttestationStatus, Trail } from '../../lib/contract';
import { short } from '../../lib/format';
import { EvidenceView } from './evidence';

export type Unbound = Trail['compliance_status']['unbound_attestations'][number];

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
  if (artifactMissing) {
    return 'never reported: the artifact itself has not been reported to this trail';
  }
  return 'never reported: no attestation with this name was made';
}

/** A slot's status in words: missing and why, or compliant or not, overridden, unexpected. */
function SlotStatus({ slot, reason }: { slot: AttestationStatus; reason: string }) {
  if (slot.status === 'MISSING') {
    return (
      <>
        <Badge tone="warn">Missing</Badge> <span className="small">{reason}</span>
      </>
    );
  }
  return (
    <>
      <ComplianceBadge compliant={Boolean(slot.is_compliant)} />
      {slot.overridden_attestation_id && (
        <>
          {' '}
          <Badge tone="unknown" symbol={GREY_SYMBOL.overridden}>
            Overridden
          </Badge>
        </>
      )}
      {slot.unexpected && (
        <>
          {' '}
          <Badge tone="unknown" symbol={GREY_SYMBOL.notInTemplate}>
            Not in template
          </Badge>
        </>
      )}
    </>
  );
}

export function Slots({
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
  if (slots.length === 0) {
    return <p className="muted">No attestation is expected here, and none was made.</p>;
  }
  return (
    <ul className="slots" aria-label={label}>
      {slots.map((slot) => (
        <SlotItem
          key={`${slot.attestation_name}-${slot.attestation_id ?? 'missing'}`}
          slot={slot}
          byId={byId}
          highlight={highlight}
          reason={
            slot.status === 'MISSING' ? missingReason(slot, artifactName, artifactMissing, unbound) : ''
          }
        />
      ))}
    </ul>
  );
}

/** One slot: its name and type, its status (or why it is missing), its evidence and any override. */
function SlotItem({
  slot,
  byId,
  highlight,
  reason,
}: {
  slot: AttestationStatus;
  byId: Map<string, Attestation>;
  highlight: string | null;
  reason: string;
}) {
  const att = slot.attestation_id ? byId.get(slot.attestation_id) : undefined;
  const original = slot.overridden_attestation_id ? byId.get(slot.overridden_attestation_id) : undefined;
  const id = slot.attestation_id ? `attestation-${slot.attestation_id}` : undefined;
  return (
    <li id={id} className={highlight && slot.attestation_id === highlight ? 'slot highlighted' : 'slot'}>
      <h4>
        {slot.attestation_name} <span className="muted small">({slot.attestation_type ?? 'any type'})</span>
      </h4>
      <p>
        <SlotStatus slot={slot} reason={reason} />
      </p>
      {att && <EvidenceView att={att} />}
      {original && (
        <details>
          <summary>Original attestation (before the override)</summary>
          <p>
            <ComplianceBadge compliant={Boolean(original.is_compliant)} />
          </p>
          <EvidenceView att={original} />
        </details>
      )}
      {slot.overridden_attestation_id && !original && (
        <p className="small muted">The original attestation is {short(slot.overridden_attestation_id, 8)}.</p>
      )}
    </li>
  );
}
