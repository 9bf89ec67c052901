/** Server-issued ids: 32 characters, 8-4-4-4-8 lowercase hex, as the interface shows them. */
import { randomUUID } from 'node:crypto';

/** A new random id such as `fe3ed5e5-0ed1-4cb8-8d5a-57d636d7`. */
export function newId(): string {
  return randomUUID().slice(0, 32);
}
