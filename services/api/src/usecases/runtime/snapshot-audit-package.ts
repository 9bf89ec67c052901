/**
 * The audit package of an environment at one snapshot: what ran then and the evidence for it, in
 * one streamed .tar.gz. It holds the snapshot as the API answers it (`snapshot.json`), the
 * policies applied with their text and decision (`policies.json`), and per running artifact its
 * entry of the snapshot (`running.json`: compliance, policy decisions, reasons, provenance) and,
 * for each flow and trail it was reported in, that artifact's audit package (record, compliance,
 * attestations and evidence files); `MANIFEST.sha256` sums every other member.
 */
import {
  artifactMembers,
  proofMembers,
  json,
  pack,
  safe,
  type AuditPackage,
  type Member,
} from '../evidence/audit-package.js';
import { BadRequestError } from '../../errors.js';
import type { LogRef } from '../log/package.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import type { OrgScope } from '../scope/org-scope.js';
import { readSnapshot } from './snapshots.js';

/**
 * At most this many artifact records (a running artifact in one trail) in one package: each one
 * reads its trail's attestations, so the work of one download stays bounded.
 */
export const SNAPSHOT_PACKAGE_MAX_RECORDS = 200;

/** `GET /snapshots/{org}/{env}/{expression}/audit_package`. */
export async function snapshotAuditPackage(
  ctx: OrgScope,
  envName: string,
  expression: string,
): Promise<AuditPackage> {
  const snapshot = await readSnapshot(ctx, envName, expression);
  const running = snapshot.artifacts.filter((a) => a.annotation.now > 0);
  const records = running.reduce((n, a) => n + a.flows.filter((f) => f.trail_name !== null).length, 0);
  if (records > SNAPSHOT_PACKAGE_MAX_RECORDS) {
    throw new BadRequestError(
      `Snapshot ${snapshot.index} of '${envName}' runs ${records} artifact records; one package holds at most ${SNAPSHOT_PACKAGE_MAX_RECORDS}: download the audit package of each artifact instead`,
    );
  }
  const members: Member[] = [
    { name: 'snapshot.json', content: json(snapshot) },
    {
      name: 'policies.json',
      content: json(
        snapshot.applied_policies.map((p) => {
          const failing = Array.isArray(p.failing_artifacts) ? p.failing_artifacts : [];
          return { ...p, decision: failing.length === 0 ? 'pass' : 'fail' };
        }),
      ),
    },
  ];
  const refs: LogRef[] = [];
  const env = await ctx.db
    .selectFrom('environments')
    .select('id')
    .where('org_id', '=', ctx.org.id)
    .where('name', '=', envName)
    .executeTakeFirst();
  if (env) {
    refs.push({ kind: 'environment', id: env.id }, { kind: 'snapshot', id: `${env.id}:${snapshot.index}` });
  }
  const flowIds = new Map<string, string | undefined>();
  for (const [i, a] of running.entries()) {
    const dir = `artifacts/${String(i + 1).padStart(3, '0')}-${safe(a.name)}`;
    members.push({
      name: `${dir}/running.json`,
      content: json({
        name: a.name,
        fingerprint: a.fingerprint,
        compliant: a.compliant,
        policy_decisions: a.policy_decisions,
        reasons_for_incompliance: a.reasons_for_incompliance,
        allowlisted: a.allowlisted,
        flows: a.flows,
      }),
    });
    for (const f of a.flows) {
      if (f.trail_name === null) {
        continue;
      }
      if (!flowIds.has(f.flow_name)) {
        flowIds.set(f.flow_name, (await flowsRepository.findByName(ctx.db, ctx.org.id, f.flow_name))?.id);
      }
      const flowId = flowIds.get(f.flow_name);
      const record = flowId
        ? await artifactsRepository.findInFlow(ctx.db, ctx.org.id, flowId, a.fingerprint, f.trail_name)
        : undefined;
      if (record) {
        members.push(
          ...(await artifactMembers(ctx, record, `${dir}/${safe(f.flow_name)}-${safe(f.trail_name)}`, refs)),
        );
      }
    }
  }
  members.push(...(await proofMembers(ctx, refs)));
  return {
    stream: pack(members, ctx.now),
    fileName: `${envName}-snapshot-${snapshot.index}-audit-package.tar.gz`,
  };
}
