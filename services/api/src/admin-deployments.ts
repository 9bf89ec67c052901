/**
 * `npm run admin -- deployments backfill [org]`: records the deployments of the snapshots written
 * before deployments were recorded, in every organization or the one named, printing each
 * environment's progress (snapshots gone through of all, deployments recorded). Running it again
 * records nothing more.
 */
import { AdminUsageError } from './admin-commands.js';
import type { Db } from './storage/database.js';
import { orgsRepository } from './storage/repositories/orgs.js';
import { backfillDeployments } from './usecases/runtime/delivery-backfill.js';

export const DEPLOYMENTS_USAGE = `  deployments backfill [org]
      records the deployments of snapshots written before deployments were recorded (every
      organization, or the one named); snapshots that have deployments are skipped`;

/** Runs `deployments backfill`, printing a line per page of each environment's snapshots. */
export async function deploymentsCommand(
  argv: readonly string[],
  db: Db,
  print: (line: string) => void,
): Promise<void> {
  const [, verb, orgName, extra] = argv;
  if (verb !== 'backfill' || extra !== undefined) {
    throw new AdminUsageError(`Usage: npm run admin -- deployments backfill [org]`);
  }
  if (orgName !== undefined && !(await orgsRepository.findByName(db, orgName))) {
    throw new AdminUsageError(`organization '${orgName}' does not exist`);
  }
  const r = await backfillDeployments(db, orgName ?? null, {
    onProgress: (p) =>
      print(
        `${p.org}/${p.environment}: ${p.done}/${p.total} snapshots, ${p.deployments} deployments recorded`,
      ),
  });
  print(
    `${r.deployments} deployments recorded from ${r.snapshots} snapshots in ${r.environments} environments`,
  );
}
