/**
 * Rows that concurrent requests must see stored before they answer share statements, and one row
 * that cannot be stored fails alone.
 */
import { describe, expect, it } from 'vitest';
import { RowBatcher } from '../../services/api/src/storage/batching/row-batcher.js';

function recorder(failOn?: (row: number) => boolean) {
  const statements: number[][] = [];
  const stored: number[] = [];
  const insert = async (rows: number[]) => {
    statements.push(rows);
    await new Promise((r) => setTimeout(r, 5));
    if (failOn && rows.some(failOn)) {
      throw new Error(`row ${rows.find(failOn)} violates a constraint`);
    }
    stored.push(...rows);
  };
  return { statements, stored, insert };
}

describe('RowBatcher', () => {
  it('writes the rows of one turn in one statement, and those that arrive meanwhile in the next', async () => {
    const r = recorder();
    const b = new RowBatcher(r.insert, 500, 1);
    const first = Array.from({ length: 100 }, (_, i) => b.write(i));
    await new Promise((res) => setTimeout(res, 1));
    const second = Array.from({ length: 50 }, (_, i) => b.write(100 + i));
    await Promise.all([...first, ...second]);
    expect(r.statements.map((s) => s.length)).toEqual([100, 50]);
    expect(r.stored.sort((x, y) => x - y)).toEqual([...Array(150).keys()]);
    await b.idle();
  });

  it('splits at the largest batch', async () => {
    const r = recorder();
    const b = new RowBatcher(r.insert, 40, 2);
    await Promise.all(Array.from({ length: 100 }, (_, i) => b.write(i)));
    expect(r.statements.map((s) => s.length)).toEqual([40, 40, 20]);
  });

  it('fails only the row that cannot be stored', async () => {
    const r = recorder((row) => row === 7);
    const b = new RowBatcher(r.insert);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => b.write(i)));
    expect(results.filter((x) => x.status === 'rejected')).toHaveLength(1);
    expect((results[7] as PromiseRejectedResult).reason.message).toBe('row 7 violates a constraint');
    expect(r.stored.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 8, 9]);
  });

  it('does not try the rows one by one when the error says the database is away', async () => {
    const statements: number[][] = [];
    const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const b = new RowBatcher(
      async (rows: number[]) => {
        statements.push(rows);
        throw away;
      },
      500,
      2,
      (err) => (err as { code?: string }).code !== 'ECONNREFUSED',
    );
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => b.write(i)));
    expect(results.every((r) => r.status === 'rejected' && r.reason === away)).toBe(true);
    expect(statements).toHaveLength(1);
  });

  it('says when every row handed in has its answer', async () => {
    const r = recorder();
    const b = new RowBatcher(r.insert);
    const pending = b.write(1);
    await b.idle();
    expect(r.stored).toEqual([1]);
    await pending;
  });
});
