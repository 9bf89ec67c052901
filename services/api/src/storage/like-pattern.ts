/** LIKE patterns built from user text, whose wildcards must match themselves. */

/** A LIKE pattern matching `text` anywhere, with the user's `%`, `_` and `\\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
