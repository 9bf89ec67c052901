/**
 * Server-issued ids: 32 characters, 8-4-4-4-8 lowercase hex, as the interface shows them. The
 * first 12 digits are the creation time in milliseconds and the other 16 are random (64 bits), as
 * in a UUIDv7: a table's new rows go to the end of its id index instead of to a random page of it,
 * so an organization with millions of rows writes and caches one hot page per index, not millions.
 */
import { randomUUID } from 'node:crypto';

/** A new id such as `019ab5f2-7c3e-5d1a-9f40-0b6e21c7`; `now` is the time it records (ms). */
export function newId(now = Date.now()): string {
  const u = randomUUID(); // random but for its version digit (14) and variant digit (19)
  const hex = now.toString(16).padStart(12, '0').slice(-12) + u.slice(0, 8) + u.slice(24, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 28)}`;
}
