/** Evidence file contents, stored once per organization and sha256. */
import type { Db } from '../database.js';

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
      .onConflict((oc) => oc.columns(['org_id', 'sha256']).doNothing())
      .execute();
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
