/** Wire timestamps: the interface shows times as epoch seconds. */

/** Epoch seconds (fractional) of a date, the wire form of timestamps. */
export function epochSeconds(date: Date): number {
  return date.getTime() / 1000;
}

/** Epoch seconds, or 0 when there is no date (the interface's "never"). */
export function epochOrZero(date: Date | null | undefined): number {
  return date ? epochSeconds(date) : 0;
}
