/** Rows read back as JSON (row_to_json, json_agg): what JSON cannot carry is restored here. */

/** Rows read back from json_agg or row_to_json: timestamps arrive as strings. */
export const withDates = <T extends Record<string, unknown>>(row: T, keys: string[]): T => {
  const out: Record<string, unknown> = { ...row };
  for (const k of keys) {
    if (typeof out[k] === 'string') {
      out[k] = new Date(out[k]);
    }
  }
  return out as T;
};
