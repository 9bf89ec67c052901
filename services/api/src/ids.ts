/** Server-issued ids: 32 characters, 8-4-4-4-8 lowercase hex, as the interface shows them. */
import { randomUUID } from 'node:crypto';

/** A new random id such as `fe3ed5e5-0ed1-4cb8-8d5a-57d636d7`. */
export function newId(): string {
  return randomUUID().slice(0, 32);
}

/** Epoch seconds (fractional) of a date, the wire form of timestamps. */
export function epochSeconds(date: Date): number {
  return date.getTime() / 1000;
}

/** Epoch seconds, or 0 when there is no date (the interface's "never"). */
export function epochOrZero(date: Date | null | undefined): number {
  return date ? epochSeconds(date) : 0;
}
