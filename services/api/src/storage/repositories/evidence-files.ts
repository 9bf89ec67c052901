/** Evidence file contents, stored once per organization and sha256. */
import { sql } from 'kysely';
import type { Db } from '../database.js';

/** A file stored again later than this after it was stored counts as new (`created_at` moves). */
const TOUCH_AFTER_MS = 600_000;

export const evidenceFilesRepository = {
  async put(db: Db, orgId: string, file: { sha256: string; content: Buffer; now: Date }): Promise<void> {
    await db
      .insertInto('evidence_files')
      .values({
        org_id: orgId,
        sha256: file.sha256,
        size: file.content.length,
        content: file.content,
        created_at: file.now,
      })
      // A file stored again is young again, so `deleteOrphans` cannot take it from under the
      // attestation about to name it (the row lock orders the two).
      .onConflict((oc) =>
        oc
          .columns(['org_id', 'sha256'])
          .doUpdateSet({ created_at: (eb) => eb.ref('excluded.created_at') })
          .where('evidence_files.created_at', '<', new Date(file.now.getTime() - TOUCH_AFTER_MS)),
      )
      .execute();
  },

  /**
   * Deletes at most `limit` files stored before `span.before` (and at or after `span.since`, when
   * given) that no attestation of their organization names; returns how many.
   */
  async deleteOrphans(db: Db, span: { since: Date | null; before: Date }, limit: number): Promise<number> {
    const { since, before } = span;
    const result = await sql`
      delete from evidence_files f
      where f.created_at < ${before}
        and (f.org_id, f.sha256) in (
          select e.org_id, e.sha256 from evidence_files e
          where e.created_at < ${before}
            and (${since}::timestamptz is null or e.created_at >= ${since}::timestamptz)
            and not exists (
              select 1 from attestations a where a.org_id = e.org_id and a.evidence_sha256 = e.sha256)
          limit ${limit})`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  },

  /** Deletes those of these files stored before `storedBefore`; returns their digests. */
  async remove(db: Db, orgId: string, sha256s: readonly string[], storedBefore: Date): Promise<string[]> {
    if (sha256s.length === 0) {
      return [];
    }
    const r = await sql<{ sha256: string }>`
      delete from evidence_files
      where org_id = ${orgId} and sha256 = any(${[...sha256s]}::text[]) and created_at < ${storedBefore}
      returning sha256`.execute(db);
    return r.rows.map((x) => x.sha256).sort();
  },

  async get(db: Db, orgId: string, sha256: string): Promise<{ content: Buffer; size: number } | undefined> {
    const row = await db
      .selectFrom('evidence_files')
      .select(['content', 'size'])
      .where('org_id', '=', orgId)
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return row ? { content: Buffer.from(row.content), size: Number(row.size) } : undefined;
  },

  async stat(db: Db, orgId: string, sha256: string): Promise<{ size: number } | undefined> {
    const row = await db
      .selectFrom('evidence_files')
      .select('size')
      .where('org_id', '=', orgId)
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return row ? { size: Number(row.size) } : undefined;
  },
};
