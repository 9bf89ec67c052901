/** The key to the timelines' colours: each state named in words beside its swatch. */
export function ComplianceLegend({ note, unknown = 'unknown' }: { note?: string; unknown?: string }) {
  return (
    <span className="legend">
      <span className="swatch swatch-ok" aria-hidden="true" /> compliant
      <span className="swatch swatch-bad" aria-hidden="true" /> non-compliant (marked ✗)
      <span className="swatch swatch-unknown" aria-hidden="true" /> {unknown}
      {note ? ` · ${note}` : ''}
    </span>
  );
}
