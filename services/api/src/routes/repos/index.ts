/** Repos and tags (reference/cli-requests.md 3.10; spec endpoint 15). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OkString,
  OrgName,
  OrgParams,
  QueryInt,
  errorResponses,
} from '../../../../shared/contract/common.js';
import { REPO_PROVIDERS, TagPatch } from '../../../../shared/contract/evidence-common.js';
import { Repo, RepoPage, RepoTagChoices } from '../../../../shared/contract/repos.js';
import { roleAllows } from '../../domain/roles.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.js';
import { requireOrg, requireRole } from '../../plugins/auth.js';
import { reposRepository } from '../../storage/repositories/repos.js';
import { inTransaction } from '../../usecases/evidence-context.js';
import { presentRepo } from '../../usecases/repos.js';
import { TAG_TARGETS } from '../../usecases/tags.js';
import { evidenceContext, paging, Repeated, tagFilters } from '../evidence-shared.js';
import { sendJsonString } from '../schemas.js';

const tags = ['repos'];

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/repos/:org',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listRepos',
        summary: 'List repos captured from repo_info',
        tags,
        params: OrgParams,
        querystring: z.strictObject({
          page: QueryInt(1, 100_000).optional().default(1),
          per_page: QueryInt(1, 50).optional().default(15),
          name: z.string().max(512).optional(),
          search: z.string().max(512).optional(),
          provider: z.string().max(64).optional(),
          repo_id: z.string().max(256).optional(),
          vcs_instance: z.string().max(512).optional(),
          namespace: z.string().max(512).optional(),
          sort_direction: z.enum(['asc', 'desc']).optional().default('asc'),
          tag: Repeated,
        }),
        response: { 200: RepoPage, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const q = request.query;
      if (q.name !== undefined && q.search !== undefined) {
        throw new BadRequestError('Give either name or search, not both', {
          'query.search': 'conflicts with name',
        });
      }
      const { rows, total } = await reposRepository.list(
        app.db,
        ctx.orgId,
        {
          name: q.name,
          search: q.search,
          provider: q.provider,
          externalId: q.repo_id,
          tags: tagFilters(q.tag),
        },
        paging(q.page, q.per_page),
        q.sort_direction,
      );
      return {
        repos: rows.map(presentRepo),
        page: q.page,
        per_page: q.per_page,
        total_pages: Math.ceil(total / q.per_page),
        total_count: total,
        _links: {
          self: {
            href: `${app.config.publicUrl}/api/v2/repos/${ctx.orgName}?page=${q.page}&per_page=${q.per_page}`,
          },
        },
      };
    },
  );

  // Spec endpoint 15: declared as a literal, so `tags` is never taken as a repo name.
  app.get(
    '/repos/:org/tags',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'listRepoTagChoices',
        summary: 'The distinct tag key/value pairs of the organization’s repos',
        tags,
        params: OrgParams,
        response: { 200: RepoTagChoices, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      return {
        tag_choices: await reposRepository.tagChoices(app.db, ctx.orgId),
        _links: { self: { href: `${app.config.publicUrl}/api/v2/repos/${ctx.orgName}/tags` } },
      };
    },
  );

  app.get(
    '/repos/:org/*',
    {
      config: { auth: { permission: 'read' } },
      schema: {
        operationId: 'getRepo',
        summary: 'Get a repo by name (names contain /), or by its id with ?id=',
        tags,
        params: z.strictObject({ org: OrgName, '*': z.string().min(1).max(512) }),
        querystring: z.strictObject({
          provider: z.enum(REPO_PROVIDERS).optional(),
          id: z.string().max(256).optional(),
        }),
        response: { 200: Repo, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = evidenceContext(app, request);
      const name = request.params['*'];
      if (request.query.id) {
        const byId = await reposRepository.findById(app.db, ctx.orgId, request.query.id);
        if (!byId) throw new NotFoundError(`Repo '${request.query.id}' not found`);
        return presentRepo(byId);
      }
      const rows = await reposRepository.findByName(app.db, ctx.orgId, name, request.query.provider);
      if (rows.length === 0) throw new NotFoundError(`Repo '${name}' not found`);
      if (rows.length > 1) {
        throw new BadRequestError(
          `Repo '${name}' exists for several providers (${rows.map((r) => r.provider || '(none)').join(', ')}): give --provider`,
          { 'query.provider': 'required when the name is ambiguous' },
        );
      }
      return presentRepo(rows[0]!);
    },
  );

  app.patch(
    '/tags/:org/:type/:id',
    {
      config: { auth: { permission: 'evidence:write' } },
      schema: {
        operationId: 'patchTags',
        summary: 'Set and remove tags of a flow, repo (by id), control or environment',
        tags: ['tags'],
        params: z.strictObject({
          org: OrgName,
          type: z.string().max(32),
          id: z.string().min(1).max(512),
        }),
        body: TagPatch,
        response: { 200: OkString, ...errorResponses },
      },
    },
    async (request, reply) => {
      const target = TAG_TARGETS[request.params.type];
      if (!target) {
        throw new BadRequestError(`Unknown resource type '${request.params.type}'`, {
          'path.type': `must be one of ${Object.keys(TAG_TARGETS).join(', ')}`,
        });
      }
      if (!roleAllows(requireRole(request), target.permission)) throw new ForbiddenError();
      const ctx = evidenceContext(app, request);
      const change = { set: request.body.set_tags ?? {}, remove: request.body.remove_tags ?? [] };
      await app.db
        .transaction()
        .execute((trx) =>
          target.apply(inTransaction(ctx, trx), requireOrg(request), request.params.id, change),
        );
      return sendJsonString(reply, 'OK');
    },
  );
};

export default routes;
