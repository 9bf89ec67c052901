/** A clock tests move by hand. */
export class TestClock {
  private current: number;
  constructor(start = Date.parse('2026-11-01T12:00:00Z')) {
    this.current = start;
  }
  now = (): Date => new Date(this.current);
  advance(ms: number): void {
    this.current += ms;
  }
  /** Epoch seconds of now, as the wire carries them. */
  seconds(): number {
    return this.current / 1000;
  }
}
