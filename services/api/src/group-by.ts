/**
 * Grouping into a Map of arrays in linear time. `map.set(k, [...(map.get(k) ?? []), x])` copies
 * the group on every item (quadratic in the size of a group); lint refuses it and names these.
 */

/** Appends `value` to the group of `key`, creating the group on first use. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const group = map.get(key);
  if (group) {
    group.push(value);
  } else {
    map.set(key, [value]);
  }
}

/** The items by key, each group in the items' order; `value` maps an item to what is kept. */
export function groupBy<T, K, V = T>(
  items: Iterable<T>,
  key: (item: T) => K,
  value: (item: T) => V = (item) => item as unknown as V,
): Map<K, V[]> {
  const out = new Map<K, V[]>();
  for (const item of items) {
    pushTo(out, key(item), value(item));
  }
  return out;
}
