/**
 * A bounded map that forgets the least recently used entry first: at most `max` entries and,
 * given `weigh`, at most `maxWeight` of their weight (a value heavier than that is not kept).
 */
export class LruMap<V> {
  private readonly map = new Map<string, V>();
  private weight = 0;
  constructor(
    private readonly max: number,
    private readonly weigh?: (value: V) => number,
    private readonly maxWeight = Infinity,
  ) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.delete(key);
    const w = this.weigh?.(value) ?? 0;
    if (w > this.maxWeight) {
      return;
    }
    this.map.set(key, value);
    this.weight += w;
    while (this.map.size > this.max || this.weight > this.maxWeight) {
      this.delete(this.map.keys().next().value as string);
    }
  }
  delete(key: string): void {
    const v = this.map.get(key);
    if (v !== undefined && this.map.delete(key)) {
      this.weight -= this.weigh?.(v) ?? 0;
    }
  }
  clear(): void {
    this.map.clear();
    this.weight = 0;
  }
  get size(): number {
    return this.map.size;
  }
}
