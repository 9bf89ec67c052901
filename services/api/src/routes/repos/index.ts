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
import { BadRequestError, ForbiddenError } from '../../errors.js';
import { requireOrg, requireRole } from '../../plugins/auth.js';
import { transact } from '../../usecases/scope/org-scope.js';
import { findRepo, listRepos, repoTagChoices } from '../../usecases/evidence/repos.js';
import { TAG_TARGETS } from '../../usecases/tags.js';
import { sortedPage } from '../paging.js';
import { Repeated, tagFilters } from '../params.js';
import { orgScope } from '../request-context.js';
import { sendOk } from '../reply.js';

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
      const q = request.query;
      return listRepos(
        orgScope(app, request),
        {
          name: q.name,
          search: q.search,
          provider: q.provider,
          externalId: q.repo_id,
          tags: tagFilters(q.tag),
        },
        sortedPage(q),
      );
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
    async (request) => repoTagChoices(orgScope(app, request)),
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
      const { id, provider } = request.query;
      return findRepo(orgScope(app, request), { id, name: request.params['*'], provider });
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
      if (!roleAllows(requireRole(request), target.permission)) {
        throw new ForbiddenError();
      }
      const ctx = orgScope(app, request);
      const change = { set: request.body.set_tags ?? {}, remove: request.body.remove_tags ?? [] };
      await transact(ctx, (s) => target.apply(s, requireOrg(request), request.params.id, change));
      return sendOk(reply);
    },
  );
};

export default routes;
