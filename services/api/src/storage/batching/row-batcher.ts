/**
 * Writes rows that concurrent requests each must see stored before they answer, in shared
 * statements: the rows that arrive in one turn of the event loop, or while earlier ones are being
 * written, go in one insert (one statement and one commit instead of one each). The audit entry
 * of every write goes this way: alone, its insert and commit cost PostgreSQL about as much as the
 * attestation it records (bench/README.md, "Audit entries").
 *
 * A failed statement is retried row by row, so that one row that cannot be stored fails alone
 * and the others are written; not when the error says the database is away (`retryAlone`), where
 * each row's statement would only wait to fail in turn and hold its request's answer meanwhile.
 */
interface Pending<T> {
  row: T;
  resolve(): void;
  reject(err: unknown): void;
}

export class RowBatcher<T> {
  private queue: Array<Pending<T>> = [];
  private inFlight = 0;
  private scheduled = false;
  private drained: Array<() => void> = [];

  /**
   * @param insert writes the rows in one statement (and its own transaction).
   * @param maxBatch rows one statement holds at most.
   * @param maxInFlight statements under way at once at most; what arrives meanwhile waits for one to end.
   * @param retryAlone whether a failed statement's rows are worth trying one by one.
   */
  constructor(
    private readonly insert: (rows: T[]) => Promise<void>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
    private readonly retryAlone: (err: unknown) => boolean = () => true,
  ) {}

  /** Resolves once the row is stored; rejects with the error that kept it out. */
  write(row: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every row handed in so far has its answer. */
  idle(): Promise<void> {
    return this.isIdle() ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private isIdle(): boolean {
    return this.inFlight === 0 && this.queue.length === 0 && !this.scheduled;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) {
      return;
    }
    this.scheduled = true;
    // Whatever else arrives in this turn of the event loop joins the statement.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.inFlight += 1;
        void this.run(batch).finally(() => {
          this.inFlight -= 1;
          this.schedule();
          if (this.isIdle()) {
            this.drained.splice(0).forEach((resolve) => resolve());
          }
        });
      }
    });
  }

  private async run(batch: Array<Pending<T>>): Promise<void> {
    try {
      await this.insert(batch.map((p) => p.row));
      batch.forEach((p) => p.resolve());
      return;
    } catch (err) {
      if (batch.length === 1 || !this.retryAlone(err)) {
        batch.forEach((p) => p.reject(err));
        return;
      }
    }
    // One by one: a row that cannot be stored fails alone (bounded by maxBatch statements).
    for (const p of batch) {
      try {
        await this.insert([p.row]);
        p.resolve();
      } catch (err) {
        p.reject(err);
      }
    }
  }
}
