/** A compliance state in words, with a colour and a symbol, never colour alone. */

export type Tone = 'ok' | 'bad' | 'warn' | 'unknown';

const SYMBOL: Record<Tone, string> = { ok: '✓', bad: '✗', warn: '!', unknown: '?' };

export function Badge({ tone, children, title }: { tone: Tone; children: string; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      <span aria-hidden="true">{SYMBOL[tone]} </span>
      {children}
    </span>
  );
}

/** A state string from the API (COMPLIANT, NON-COMPLIANT, INCOMPLETE, MISSING, UNKNOWN). */
const STATES: Record<string, [Tone, string]> = {
  COMPLIANT: ['ok', 'Compliant'],
  'NON-COMPLIANT': ['bad', 'Non-compliant'],
  INCOMPLETE: ['warn', 'Incomplete'],
  MISSING: ['warn', 'Missing'],
};

export function StateBadge({ state }: { state: string | null | undefined }) {
  const [tone, words] = (state && STATES[state]) || ['unknown', 'Unknown'];
  return <Badge tone={tone}>{words}</Badge>;
}

/** A boolean-or-null compliance (null: no policy decides it). */
export function ComplianceBadge({ compliant }: { compliant: boolean | null | undefined }) {
  if (compliant === true) {
    return <StateBadge state="COMPLIANT" />;
  }
  if (compliant === false) {
    return <StateBadge state="NON-COMPLIANT" />;
  }
  return <StateBadge state="UNKNOWN" />;
}
