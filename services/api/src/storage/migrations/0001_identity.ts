/** Organizations, users, memberships, service accounts, API keys. Frozen once shipped. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('experimental_features_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('default_org_id', 'text', (c) => c.references('orgs.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) =>
      c.notNull().check(sql`role in ('admin','member','snapshotter','reader')`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('memberships_pk', ['org_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('service_accounts')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('privilege', 'text', (c) =>
      c.notNull().check(sql`privilege in ('admin','member','snapshotter','reader')`),
    )
    .addColumn('created_by_principal', 'text', (c) => c.notNull())
    .addColumn('created_by_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('service_accounts_pk', ['org_id', 'id'])
    .addUniqueConstraint('service_accounts_org_name_key', ['org_id', 'name'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('org_id', 'text', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('service_account_id', 'text')
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('rotated_from', 'text')
    .addForeignKeyConstraint(
      'api_keys_service_account_fk',
      ['org_id', 'service_account_id'],
      'service_accounts',
      ['org_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .addCheckConstraint(
      'api_keys_owner_check',
      sql`(service_account_id is not null and org_id is not null and user_id is null) or (user_id is not null and service_account_id is null)`,
    )
    .execute();
  await db.schema
    .createIndex('api_keys_org_sa_idx')
    .on('api_keys')
    .columns(['org_id', 'service_account_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'service_accounts', 'memberships', 'users', 'orgs']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
