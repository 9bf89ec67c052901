/**
 * A state in words, with a colour and a symbol, never colour alone. Each grey state has its own
 * word and its own symbol: no policy attached, overridden, not in template, exited, allowlisted.
 */

export type Tone = 'ok' | 'bad' | 'warn' | 'unknown' | 'none';

const SYMBOL: Record<Tone, string> = { ok: '✓', bad: '✗', warn: '!', unknown: '?', none: '∅' };

/** The symbols of the grey states that are not "unknown". */
export const GREY_SYMBOL = {
  noPolicy: '∅',
  noSnapshot: '–',
  overridden: '↺',
  notInTemplate: '+',
  exited: '↘',
  allowlisted: '◇',
  notYetApplied: '…',
} as const;

export function Badge({
  tone,
  children,
  title,
  symbol,
}: {
  tone: Tone;
  children: string;
  title?: string;
  /** Another symbol than the tone's own, for a grey state with its own meaning. */
  symbol?: string;
}) {
  return (
    <span className={`badge badge-${tone === 'none' ? 'unknown' : tone}`} title={title}>
      <span aria-hidden="true">{symbol ?? SYMBOL[tone]} </span>
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

/**
 * A state string; `unknown` words what UNKNOWN (or no state) means where it is shown, such as
 * "No policy attached" for a snapshot.
 */
export function StateBadge({ state, unknown }: { state: string | null | undefined; unknown?: Unknown }) {
  const known = state ? STATES[state] : undefined;
  if (known) {
    return <Badge tone={known[0]}>{known[1]}</Badge>;
  }
  return <UnknownBadge unknown={unknown} />;
}

/** What an undecided compliance means in its place. */
export type Unknown = 'no-policy' | 'no-snapshot' | undefined;

function UnknownBadge({ unknown }: { unknown: Unknown }) {
  if (unknown === 'no-policy') {
    return (
      <Badge tone="none" symbol={GREY_SYMBOL.noPolicy} title="No policy decides the compliance here">
        No policy attached
      </Badge>
    );
  }
  if (unknown === 'no-snapshot') {
    return (
      <Badge tone="none" symbol={GREY_SYMBOL.noSnapshot}>
        No snapshot yet
      </Badge>
    );
  }
  return <Badge tone="unknown">Unknown</Badge>;
}

/** A boolean-or-null compliance (null: no policy decides it). */
export function ComplianceBadge({
  compliant,
  unknown,
}: {
  compliant: boolean | null | undefined;
  unknown?: Unknown;
}) {
  if (compliant === true) {
    return <StateBadge state="COMPLIANT" />;
  }
  if (compliant === false) {
    return <StateBadge state="NON-COMPLIANT" />;
  }
  return <UnknownBadge unknown={unknown} />;
}
