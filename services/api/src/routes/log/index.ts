/**
 * The organization's transparency log: entries, the signed checkpoint (C2SP tlog-checkpoint, as
 * text/plain), the note verifier keys, and RFC 9162 inclusion and consistency proofs. Reads, for
 * every role that reads.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgName, errorResponses } from '../../../../shared/contract/common.js';
import {
  checkpoint,
  readConsistencyProof,
  readEntries,
  readEntry,
  readInclusionProof,
  verifierKeys,
} from '../../usecases/log/log.js';
import { orgScope } from '../request-context.js';

const tags = ['log'];
const Params = z.strictObject({ org: OrgName });
const Num = z.string().max(20).optional();

const Entry = z
  .object({
    index: z.number().int(),
    kind: z.string(),
    resource: z.string().nullable(),
    record: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'LogEntry' });
const Hashes = z.array(z.string());

const routes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const read = { auth: { permission: 'read' as const } };
  const base = (ctx: ReturnType<typeof orgScope>) => ({
    publicUrl: ctx.publicUrl,
    org: ctx.org,
    orgId: ctx.org.id,
  });

  app.get(
    '/log/:org/entries/:index',
    {
      config: read,
      schema: {
        operationId: 'getLogEntry',
        summary: 'One entry of the organization’s transparency log',
        tags,
        params: Params.extend({ index: z.string().max(20) }),
        response: { 200: Entry, ...errorResponses },
      },
    },
    async (request) => {
      const ctx = orgScope(app, request);
      return readEntry(ctx.db, base(ctx), request.params.index);
    },
  );

  app.get(
    '/log/:org/entries',
    {
      config: read,
      schema: {
        operationId: 'listLogEntries',
        summary: 'Entries [from, to) of the transparency log (at most 100)',
        tags,
        params: Params,
        querystring: z.object({ from: Num, to: Num }),
        response: {
          200: z.object({ from: z.number(), to: z.number(), tree_size: z.number(), entries: z.array(Entry) }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const ctx = orgScope(app, request);
      return readEntries(ctx.db, base(ctx), request.query.from, request.query.to);
    },
  );

  app.get(
    '/log/:org/checkpoint',
    {
      config: read,
      schema: {
        operationId: 'getLogCheckpoint',
        summary: 'The latest signed checkpoint (C2SP tlog-checkpoint in a signed note), text/plain',
        tags,
        params: Params,
        response: { 200: z.string(), ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = orgScope(app, request);
      const { checkpoint: note } = await checkpoint(ctx.db, ctx.org, app.transparencyLog.settings, ctx.now);
      return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(note);
    },
  );

  app.get(
    '/log/:org/key',
    {
      config: read,
      schema: {
        operationId: 'getLogKey',
        summary:
          'The note verifier key of the log (the signing key first, then retired keys, one a line), text/plain',
        tags,
        params: Params,
        response: { 200: z.string(), ...errorResponses },
      },
    },
    async (request, reply) => {
      const ctx = orgScope(app, request);
      const keys = await verifierKeys(ctx.db, ctx.org, app.transparencyLog.settings, ctx.now);
      return reply.type('text/plain; charset=utf-8').send(`${keys.join('\n')}\n`);
    },
  );

  app.get(
    '/log/:org/proof/inclusion',
    {
      config: read,
      schema: {
        operationId: 'getLogInclusionProof',
        summary: 'RFC 9162 inclusion proof of an entry in the tree of a size',
        tags,
        params: Params,
        querystring: z.object({ index: Num, tree_size: Num }),
        response: {
          200: z.object({ index: z.number(), tree_size: z.number(), hashes: Hashes }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const ctx = orgScope(app, request);
      return readInclusionProof(ctx.db, ctx.org.id, request.query.index, request.query.tree_size);
    },
  );

  app.get(
    '/log/:org/proof/consistency',
    {
      config: read,
      schema: {
        operationId: 'getLogConsistencyProof',
        summary: 'RFC 9162 consistency proof between two tree sizes',
        tags,
        params: Params,
        querystring: z.object({ from: Num, to: Num }),
        response: { 200: z.object({ from: z.number(), to: z.number(), hashes: Hashes }), ...errorResponses },
      },
    },
    async (request) => {
      const ctx = orgScope(app, request);
      return readConsistencyProof(ctx.db, ctx.org.id, request.query.from, request.query.to);
    },
  );
};

export default routes;
