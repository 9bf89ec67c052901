/** Query pieces several repositories share. */
import type { SelectQueryBuilder } from 'kysely';

/**
 * How many rows a query finds, whatever it selects; call it before adding order and paging.
 * (The row type is stated because TypeScript cannot work out a selection on a generic query.)
 */
export async function countRows<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  const { n } = await q
    .clearSelect()
    .select((eb) => eb.fn.countAll().as('n'))
    .$castTo<{ n: string | number | bigint }>()
    .executeTakeFirstOrThrow();
  return Number(n);
}
