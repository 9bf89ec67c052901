/**
 * Evidence files, one row per organization and sha256: the digest, size and when stored, and the
 * bytes when the database keeps them (`content` is null when they are in the object store).
 */
import { sql } from 'kysely';
import type { Db } from '../database.js';

/** A file stored again later than this after it was stored counts as new (`created_at` moves). */
const TOUCH_AFTER_MS = 600_000;

/** Where a file's bytes are: in its row, or in the object store. */
export type EvidencePlace = 'database' | 's3';

export interface EvidenceFileKey {
  org_id: string;
  sha256: string;
  size: number;
}

export const evidenceFilesRepository = {
  /**
   * Records a file: with its bytes (`content`) or without them (the object store has them). A
   * row stored again keeps bytes it has, gains bytes it lacked, and is young again when old.
   */
  async put(
    db: Db,
    orgId: string,
    file: { sha256: string; size: number; content: Buffer | null; now: Date },
  ): Promise<void> {
    const touchBefore = new Date(file.now.getTime() - TOUCH_AFTER_MS);
    await db
      .insertInto('evidence_files')
      .values({
        org_id: orgId,
        sha256: file.sha256,
        size: file.size,
        content: file.content,
        created_at: file.now,
      })
      // A file stored again is young again, so `deleteOrphans` cannot take it from under the
      // attestation about to name it (the row lock orders the two).
      .onConflict((oc) =>
        oc
          .columns(['org_id', 'sha256'])
          .doUpdateSet({
            created_at: sql`case when evidence_files.created_at < ${touchBefore}
              then excluded.created_at else evidence_files.created_at end`,
            content: sql`coalesce(evidence_files.content, excluded.content)`,
          })
          .where(
            sql<boolean>`evidence_files.created_at < ${touchBefore}
              or (evidence_files.content is null and excluded.content is not null)`,
          ),
      )
      .execute();
  },

  /**
   * Deletes at most `limit` files stored before `span.before` (and at or after `span.since`, when
   * given) that no attestation of their organization names; returns the ones deleted. The rows
   * stay locked until the caller's transaction ends.
   */
  async deleteOrphans(
    db: Db,
    span: { since: Date | null; before: Date },
    limit: number,
  ): Promise<Array<{ org_id: string; sha256: string; place: EvidencePlace }>> {
    const { since, before } = span;
    const result = await sql<{ org_id: string; sha256: string; in_database: boolean }>`
      delete from evidence_files f
      where f.created_at < ${before}
        and (f.org_id, f.sha256) in (
          select e.org_id, e.sha256 from evidence_files e
          where e.created_at < ${before}
            and (${since}::timestamptz is null or e.created_at >= ${since}::timestamptz)
            and not exists (
              select 1 from attestations a where a.org_id = e.org_id and a.evidence_sha256 = e.sha256)
          limit ${limit})
      returning f.org_id, f.sha256, f.content is not null as in_database`.execute(db);
    return result.rows.map((r) => ({
      org_id: r.org_id,
      sha256: r.sha256,
      place: r.in_database ? 'database' : 's3',
    }));
  },

  /** Deletes those of these files stored before `storedBefore`; returns them and where they were. */
  async remove(
    db: Db,
    orgId: string,
    sha256s: readonly string[],
    storedBefore: Date,
  ): Promise<Array<{ sha256: string; place: EvidencePlace }>> {
    if (sha256s.length === 0) {
      return [];
    }
    const r = await sql<{ sha256: string; in_database: boolean }>`
      delete from evidence_files
      where org_id = ${orgId} and sha256 = any(${[...sha256s]}::text[]) and created_at < ${storedBefore}
      returning sha256, content is not null as in_database`.execute(db);
    return r.rows.map((x) => ({ sha256: x.sha256, place: x.in_database ? 'database' : 's3' }));
  },

  /** A file's row: its size, and its bytes when the database keeps them (null otherwise). */
  async get(
    db: Db,
    orgId: string,
    sha256: string,
  ): Promise<{ content: Buffer | null; size: number } | undefined> {
    const row = await db
      .selectFrom('evidence_files')
      .select(['content', 'size'])
      .where('org_id', '=', orgId)
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return row
      ? { content: row.content ? Buffer.from(row.content) : null, size: Number(row.size) }
      : undefined;
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

  /**
   * At most `limit` files (of one organization, when given) whose bytes are not yet in `to`,
   * after `after` in (org_id, sha256) order: the next batch of a move between stores.
   */
  async toMove(
    db: Db,
    to: EvidencePlace,
    opts: { orgId: string | null; after: { org_id: string; sha256: string } | null; limit: number },
  ): Promise<EvidenceFileKey[]> {
    let q = db
      .selectFrom('evidence_files')
      .select(['org_id', 'sha256', 'size'])
      .where('content', to === 's3' ? 'is not' : 'is', null)
      .orderBy('org_id')
      .orderBy('sha256')
      .limit(opts.limit);
    if (opts.orgId) {
      q = q.where('org_id', '=', opts.orgId);
    }
    if (opts.after) {
      const { org_id, sha256 } = opts.after;
      q = q.where(sql<boolean>`(org_id, sha256) > (${org_id}, ${sha256})`);
    }
    return (await q.execute()).map((r) => ({ ...r, size: Number(r.size) }));
  },

  /** How many files (of one organization, when given) have their bytes in each place. */
  async countByPlace(db: Db, orgId: string | null): Promise<Record<EvidencePlace, number>> {
    const rows = await sql<{ in_database: boolean; n: string }>`
      select content is not null as in_database, count(*) as n from evidence_files
      where (${orgId}::text is null or org_id = ${orgId}::text)
      group by 1`.execute(db);
    const out: Record<EvidencePlace, number> = { database: 0, s3: 0 };
    for (const r of rows.rows) {
      out[r.in_database ? 'database' : 's3'] = Number(r.n);
    }
    return out;
  },

  /** Sets or drops a file's bytes in its row; false when the row is gone or already so. */
  async setContent(db: Db, orgId: string, sha256: string, content: Buffer | null): Promise<boolean> {
    const result = await db
      .updateTable('evidence_files')
      .set({ content })
      .where('org_id', '=', orgId)
      .where('sha256', '=', sha256)
      .where('content', content === null ? 'is not' : 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
