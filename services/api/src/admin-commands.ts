/** The admin commands: organizations, users, memberships and keys, without the HTTP API. */
import { parseArgs } from 'node:util';
import { ROLES, type Role } from './domain/roles.js';
import { newId } from './ids.js';
import { epochSeconds } from './time.js';
import type { DatabaseHandle } from './storage/create-db.js';
import { orgsRepository } from './storage/repositories/orgs.js';
import { serviceAccountsRepository } from './storage/repositories/service-accounts.js';
import { usersRepository } from './storage/repositories/users.js';
import { createServiceAccountKey, createUserKey, parseExpiresAt } from './usecases/access/api-keys.js';
import { verifySignaturesAgain } from './admin-signatures.js';
import { databaseEvidenceStore } from './usecases/evidence/evidence-store.js';
import type { EvidenceStore } from './usecases/scope/services.js';
import { buildSignatureTrust, type SignatureTrust } from './workers/signed-evidence.mjs';

export const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  org create <name> [--display-name <text>]
  org list
  user create <name> [--email <address>]
  member add <org> <user> --role <admin|member|snapshotter|reader>
  service-account create <org> <name> --role <role> [--description <text>]
  key create --user <name> [--description <text>] [--expires-at <epoch seconds>]
  key create --org <org> --service-account <name> [--description <text>] [--expires-at <epoch seconds>]
  signatures verify <org> [--attestation <id>]   (again, with VERITY_SIGSTORE_* as set now)

Keys are printed once; only their hash is stored.`;

/** Thrown for a usage mistake; printed without a stack. */
export class AdminUsageError extends Error {}

function role(value: string | undefined): Role {
  if (!value || !(ROLES as readonly string[]).includes(value)) {
    throw new AdminUsageError(`--role must be one of ${ROLES.join(', ')}`);
  }
  return value as Role;
}

function positional(args: string[], index: number, what: string): string {
  const v = args[index];
  if (!v) {
    throw new AdminUsageError(`missing ${what}`);
  }
  return v;
}

const OPTIONS = {
  'display-name': { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  description: { type: 'string' },
  'expires-at': { type: 'string' },
  user: { type: 'string' },
  org: { type: 'string' },
  'service-account': { type: 'string' },
  attestation: { type: 'string' },
} as const;

/** One command's input: the database, its options, its positional arguments and the time. */
interface AdminCall {
  db: DatabaseHandle['db'];
  values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  rest: string[];
  now: Date;
  /** The trust material of signed evidence, from the settings. */
  signatureTrust: SignatureTrust;
  /** Where evidence files are kept, as the settings say. */
  store: EvidenceStore;
}

function expires({ values, now }: AdminCall): Date | null {
  const raw = values['expires-at'];
  if (raw === undefined) {
    return null;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw new AdminUsageError('--expires-at must be epoch seconds');
  }
  return parseExpiresAt(n, now);
}

async function findOrg(db: DatabaseHandle['db'], name: string) {
  const org = await orgsRepository.findByName(db, name);
  if (!org) {
    throw new AdminUsageError(`organization '${name}' does not exist`);
  }
  return org;
}

async function createOrg({ db, values, rest }: AdminCall): Promise<string[]> {
  const name = positional(rest, 0, 'organization name');
  const { created } = await orgsRepository.ensure(db, {
    id: newId(),
    name,
    display_name: values['display-name'] ?? name,
  });
  return [created ? `created organization '${name}'` : `organization '${name}' already exists`];
}

async function listOrgs({ db }: AdminCall): Promise<string[]> {
  const orgs = await orgsRepository.list(db);
  return orgs.length === 0 ? ['no organizations'] : orgs.map((o) => `${o.name}\t${o.display_name}`);
}

async function createUser({ db, values, rest }: AdminCall): Promise<string[]> {
  const name = positional(rest, 0, 'user name');
  if (await usersRepository.findByName(db, name)) {
    return [`user '${name}' already exists`];
  }
  await usersRepository.create(db, { id: newId(), name, email: values.email ?? null });
  return [`created user '${name}'`];
}

async function addMember({ db, values, rest }: AdminCall): Promise<string[]> {
  const org = await findOrg(db, positional(rest, 0, 'organization name'));
  const userName = positional(rest, 1, 'user name');
  const user = await usersRepository.findByName(db, userName);
  if (!user) {
    throw new AdminUsageError(`user '${userName}' does not exist`);
  }
  const r = role(values.role);
  await usersRepository.upsertMembership(db, org.id, user.id, r);
  if (!user.default_org_id) {
    await usersRepository.setDefaultOrg(db, user.id, org.id);
  }
  return [`'${userName}' is ${r} in '${org.name}'`];
}

async function createServiceAccount({ db, values, rest }: AdminCall): Promise<string[]> {
  const org = await findOrg(db, positional(rest, 0, 'organization name'));
  const name = positional(rest, 1, 'service account name');
  const inserted = await serviceAccountsRepository.insert(db, {
    org_id: org.id,
    id: newId(),
    name,
    description: values.description ?? '',
    privilege: role(values.role),
    created_by_principal: 'system',
    created_by_name: 'admin-cli',
  });
  return [
    inserted
      ? `created service account '${name}' in '${org.name}'`
      : `service account '${name}' already exists`,
  ];
}

async function createKey(call: AdminCall): Promise<string[]> {
  const { db, values, now } = call;
  const description = values.description ?? 'created with the admin command';
  if (values.user) {
    const user = await usersRepository.findByName(db, values.user);
    if (!user) {
      throw new AdminUsageError(`user '${values.user}' does not exist`);
    }
    const { row, key } = await createUserKey(db, {
      userId: user.id,
      description,
      expiresAt: expires(call),
      now,
    });
    return keyLines(row.id, key, row.expires_at);
  }
  if (values.org && values['service-account']) {
    const org = await findOrg(db, values.org);
    const account = await serviceAccountsRepository.findByName(db, org.id, values['service-account']);
    if (!account) {
      throw new AdminUsageError(
        `service account '${values['service-account']}' does not exist in '${org.name}'`,
      );
    }
    const { row, key } = await createServiceAccountKey(db, {
      orgId: org.id,
      serviceAccountId: account.id,
      description,
      expiresAt: expires(call),
      now,
    });
    return keyLines(row.id, key, row.expires_at);
  }
  throw new AdminUsageError('key create needs --user, or --org and --service-account');
}

async function verifySignatures({
  db,
  values,
  rest,
  now,
  signatureTrust,
  store,
}: AdminCall): Promise<string[]> {
  const org = await findOrg(db, positional(rest, 0, 'organization'));
  return verifySignaturesAgain(db, org, signatureTrust, values.attestation, now, store);
}

const COMMANDS: Record<string, (call: AdminCall) => Promise<string[]>> = {
  'org create': createOrg,
  'org list': listOrgs,
  'user create': createUser,
  'member add': addMember,
  'service-account create': createServiceAccount,
  'key create': createKey,
  'signatures verify': verifySignatures,
};

/** Runs one admin command; returns the lines to print. */
export async function runAdmin(
  db: DatabaseHandle['db'],
  argv: string[],
  now = new Date(),
  signatureTrust: SignatureTrust = buildSignatureTrust(undefined, undefined),
  store: EvidenceStore = databaseEvidenceStore,
): Promise<string[]> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const [noun, verb] = positionals;
  const command = COMMANDS[`${noun ?? ''} ${verb ?? ''}`];
  if (!command) {
    throw new AdminUsageError(USAGE);
  }
  return command({ db, values, rest: positionals.slice(2), now, signatureTrust, store });
}

function keyLines(id: string, key: string, expiresAt: Date | null): string[] {
  return [
    `key id:  ${id}`,
    `API key: ${key}`,
    `expires: ${expiresAt ? `${expiresAt.toISOString()} (${epochSeconds(expiresAt)})` : 'never'}`,
    'Store the key now: it is not shown again.',
  ];
}
