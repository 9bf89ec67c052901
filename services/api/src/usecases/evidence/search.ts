/** Search by fingerprint or commit, and asserts in flow scope (reference/cli-requests.md 3.3). */
import type { z } from 'zod';
import type { AssertResult, NameSearchResult, SearchResult } from '../../../../shared/contract/search.js';
import type { SlotStatus } from '../../domain/compliance.js';
import { NotFoundError } from '../../errors.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { nameSearchRepository } from '../../storage/repositories/name-search.js';
import { environmentHtmlUrl, flowHtmlUrl, trailHtmlUrl } from '../scope/links.js';
import { artifactRowUrls, runtimeOf } from './artifact-present.js';
import { resolvePrefix } from './artifacts.js';
import type { OrgScope } from '../scope/org-scope.js';
import { flowNotFound } from './flows.js';

/** How many matches and artifacts one search returns at most. */
const SEARCH_LIMIT = 100;

/** Finds artifacts whose fingerprint or commit starts with `value`; 404 `No matches for 'x'.`. */
export async function search(ctx: OrgScope, value: string): Promise<z.infer<typeof SearchResult>> {
  const [fingerprints, commits] = await Promise.all([
    value.length <= 64
      ? artifactsRepository.fingerprintsByPrefix(ctx.db, ctx.org.id, value, null, SEARCH_LIMIT)
      : [],
    value.length <= 40 ? artifactsRepository.commitsByPrefix(ctx.db, ctx.org.id, value, SEARCH_LIMIT) : [],
  ]);
  if (fingerprints.length === 0 && commits.length === 0) {
    throw new NotFoundError(`No matches for '${value}'.`);
  }
  const type = fingerprints.length > 0 ? 'fingerprint' : 'commit';
  const chosen = type === 'fingerprint' ? fingerprints : commits;
  const rows = await artifactsRepository.bySha(
    ctx.db,
    ctx.org.id,
    type === 'fingerprint' ? fingerprints : [],
    type === 'commit' ? commits : [],
    SEARCH_LIMIT,
  );
  const runtime = await runtimeOf(ctx.db, ctx.org.id, rows);
  return {
    resolved_to: {
      type,
      full_match: chosen.length === 1 ? chosen[0]! : null,
      fingerprints: { type: 'fingerprint', count: fingerprints.length, matches: fingerprints },
      commits: { type: 'commit', count: commits.length, matches: commits },
    },
    artifacts: rows.map((r) => {
      const rt = runtime.get(`${r.trail_id}:${r.fingerprint}`) ?? {
        running: [],
        exited: [],
        history: [],
        history_total: 0,
      };
      return {
        fingerprint: r.fingerprint,
        name: r.filename,
        flow: r.flow_name,
        pipeline: r.flow_name,
        trail: r.trail_name,
        template_reference_name: r.template_reference_name,
        git_commit: r.git_commit,
        has_provenance: true,
        commit_url: r.commit_url,
        build_url: r.build_url,
        ...artifactRowUrls(ctx, r),
        compliance_state: r.state,
        running_in: rt.running.map((p) => p.environment_name),
        exited_from: rt.exited.map((p) => p.environment_name),
        history: rt.history,
        history_total: rt.history_total,
      };
    }),
  };
}

/** How many of each kind a name search answers at most. */
export const NAME_SEARCH_LIMIT = 20;

/** Flows, trails, environments and artifacts whose name contains `text` (case-insensitive). */
export async function searchNames(ctx: OrgScope, text: string): Promise<z.infer<typeof NameSearchResult>> {
  const { db, org } = ctx;
  const limit = NAME_SEARCH_LIMIT;
  const [flows, trails, environments, artifacts] = await Promise.all([
    nameSearchRepository.flows(db, org.id, text, limit),
    nameSearchRepository.trails(db, org.id, text, limit),
    nameSearchRepository.environments(db, org.id, text, limit),
    nameSearchRepository.artifacts(db, org.id, text, limit),
  ]);
  return {
    query: text,
    limit,
    flows: flows.slice(0, limit).map((f) => ({
      name: f.name,
      description: f.description,
      html_url: flowHtmlUrl(ctx, f.name),
    })),
    trails: trails.slice(0, limit).map((t) => ({
      flow: t.flow_name,
      name: t.name,
      compliance_state: t.compliance_state,
      html_url: trailHtmlUrl(ctx, t.flow_name, t.name),
    })),
    environments: environments.slice(0, limit).map((e) => ({
      name: e.name,
      type: e.type,
      html_url: environmentHtmlUrl(ctx, e.name),
    })),
    artifacts: artifacts.slice(0, limit).map((a) => ({
      name: a.filename,
      fingerprint: a.fingerprint,
      flow: a.flow_name,
      trail: a.trail_name,
      compliance_state: a.state,
      html_url: artifactRowUrls(ctx, a).html_url,
    })),
    more: {
      flows: flows.length > limit,
      trails: trails.length > limit,
      environments: environments.length > limit,
      artifacts: artifacts.length > limit,
    },
  };
}

/** Compliance slots (none when the stored compliance has none) with their scope. */
const scoped = (slots: SlotStatus[] | null, scope: 'trail' | 'artifact') =>
  (slots ?? []).map((s) => ({ ...s, scope }));

/** The flows holding a fingerprint (or only `flowId`), as an assert lists them; empty when none. */
export async function assertFlows(ctx: OrgScope, fingerprint: string, flowId: string | null) {
  const contexts = (await artifactsRepository.latestPerFlow(ctx.db, ctx.org.id, [fingerprint])).filter(
    (c) => flowId === null || c.flow_id === flowId,
  );
  return contexts.map((c) => ({
    flow: c.flow_name,
    trail: c.trail_name,
    compliant: c.state === 'COMPLIANT',
    compliance_status: {
      status: c.state,
      is_compliant: c.state === 'COMPLIANT',
      attestations_statuses: [...scoped(c.trail_slots, 'trail'), ...scoped(c.artifact_slots, 'artifact')],
    },
    html_url: artifactRowUrls(ctx, c).html_url,
  }));
}

/** The flow named in an assert, or null; 404 when it does not exist. */
export async function assertFlowId(ctx: OrgScope, flowName: string | undefined): Promise<string | null> {
  if (flowName === undefined) {
    return null;
  }
  const flow = await flowsRepository.findByName(ctx.db, ctx.org.id, flowName);
  if (!flow) {
    throw flowNotFound(flowName, ctx.org.name);
  }
  return flow.id;
}

/** Assert in flow scope: is the fingerprint compliant in every flow holding it (or the named one)? */
export async function assertInFlows(
  ctx: OrgScope,
  fingerprintOrPrefix: string,
  flowName: string | undefined,
): Promise<z.infer<typeof AssertResult>> {
  const flowId = await assertFlowId(ctx, flowName);
  const fingerprint = await resolvePrefix(ctx.db, ctx.org.id, fingerprintOrPrefix, flowId);
  const flows = fingerprint ? await assertFlows(ctx, fingerprint, flowId) : [];
  if (flows.length === 0) {
    throw new NotFoundError(
      flowName === undefined
        ? `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in organization '${ctx.org.name}'`
        : `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in flow '${flowName}' belonging to organization '${ctx.org.name}'`,
    );
  }
  return {
    fingerprint: fingerprint!,
    compliant: flows.every((f) => f.compliant),
    scope: 'flow',
    environment: null,
    policy_evaluations: [],
    allow_listing: null,
    flows,
    flow: flows[0]!.flow,
    trail: flows[0]!.trail,
    html_url: flows[0]!.html_url,
  };
}
