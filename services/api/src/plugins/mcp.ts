/**
 * The same answers for AI assistants: a Model Context Protocol endpoint (Streamable HTTP, stateless,
 * JSON answers) at `POST /mcp`, authenticated as the API is (the caller's API key), read-only.
 * Each tool names the organization it reads (a service account's own by default) and is answered
 * only when the caller may read there, through the same use cases as the API: what runs in an
 * environment now or at a time, an artifact's provenance and evidence, an environment's compliance
 * history, deployments, the DORA keys, and exposure by package URL.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import { DORA_BUCKETS } from '../../../shared/contract/insight.js';
import { QueryTime } from '../../../shared/contract/exposure.js';
import { roleAllows } from '../domain/roles.js';
import { ApiError } from '../errors.js';
import { readArtifactByFingerprint } from '../usecases/evidence/artifact-reads.js';
import { exposure, EXPOSURE_PER_PAGE } from '../usecases/evidence/exposure.js';
import { listDeployments } from '../usecases/insight/deployments.js';
import { doraFigures } from '../usecases/insight/dora.js';
import { listSnapshots, readSnapshot } from '../usecases/runtime/snapshots.js';
import { scopeFor, type OrgScope } from '../usecases/scope/org-scope.js';
import { orgAccess, requirePrincipal } from './auth.js';

const Name = z.string().min(1).max(512);
const Org = Name.optional().describe("The organization; a service account's own when omitted");
/** Times as tools take them: epoch seconds or ISO 8601, as the API's queries. */
const Time = z.string().max(64).describe('Epoch seconds or an ISO 8601 date-time');

const json = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
});
const refused = (message: string): CallToolResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
});

function parseTime(text: string | undefined, name: string): Date | undefined {
  if (text === undefined) {
    return undefined;
  }
  const parsed = QueryTime.safeParse(text);
  if (!parsed.success) {
    throw new ToolInputError(`${name}: must be epoch seconds or an ISO 8601 date-time`);
  }
  return parsed.data;
}

class ToolInputError extends Error {}

interface Tool<S extends z.ZodRawShape> {
  name: string;
  description: string;
  input: S;
  run(scope: OrgScope, args: z.infer<z.ZodObject<S>>): Promise<unknown>;
}

/** A tool, its arguments typed by its input while it is written. */
const tool = <S extends z.ZodRawShape>(t: Tool<S>): Tool<z.ZodRawShape> => t;

/** What an assistant may ask: each answered by the use case behind the matching API request. */
const TOOLS = [
  tool({
    name: 'environment_snapshot',
    description:
      'What runs in an environment, with its compliance and provenance: the latest snapshot, or the one an expression names (#N, ~N back from the latest, @{ISO time}, @{2.days.ago})',
    input: { org: Org, environment: Name, snapshot: z.string().max(128).optional() },
    run: (scope, a) => readSnapshot(scope, a.environment, a.snapshot ?? '-1'),
  }),
  tool({
    name: 'artifact_provenance',
    description:
      "An artifact's record in a flow: its commit, build, trail, evidence (attestations), compliance, where it runs and ran, and its lead times",
    input: { org: Org, flow: Name, fingerprint: z.string().regex(/^[a-f0-9]{5,64}$/) },
    run: (scope, a) => readArtifactByFingerprint(scope, { flow: a.flow, fingerprint: a.fingerprint }, {}),
  }),
  tool({
    name: 'environment_compliance_history',
    description:
      "An environment's snapshots, newest first, each with its time span and compliance (COMPLIANT, NON-COMPLIANT or UNKNOWN)",
    input: {
      org: Org,
      environment: Name,
      page: z.number().int().min(1).max(100_000).optional(),
      per_page: z.number().int().min(1).max(100).optional(),
    },
    run: (scope, a) => listSnapshots(scope, a.environment, { page: a.page ?? 1, per_page: a.per_page ?? 20 }),
  }),
  tool({
    name: 'deployments',
    description:
      'Deployments, newest first: a new fingerprint starting to run in an environment (rollbacks marked), what it replaced, the commits it brought, its lead times and compliance',
    input: {
      org: Org,
      environment: Name.optional(),
      flow: Name.optional(),
      repo: Name.optional(),
      from: Time.optional(),
      to: Time.optional(),
      per_page: z.number().int().min(1).max(100).optional(),
    },
    run: (scope, a) =>
      listDeployments(scope, {
        environment: a.environment,
        flow: a.flow,
        repo: a.repo,
        from: parseTime(a.from, 'from'),
        to: parseTime(a.to, 'to'),
        perPage: a.per_page ?? 20,
      }),
  }),
  tool({
    name: 'dora',
    description:
      'The four DORA keys (deployment frequency, lead time for changes p50/p90, change failure rate, time to restore p50/p90) for a range (30 days by default) and per day or week',
    input: {
      org: Org,
      environment: Name.optional(),
      repo: Name.optional(),
      from: Time.optional(),
      to: Time.optional(),
      bucket: z.enum(DORA_BUCKETS).optional(),
    },
    run: (scope, a) =>
      doraFigures(scope, {
        environment: a.environment,
        repo: a.repo,
        from: parseTime(a.from, 'from'),
        to: parseTime(a.to, 'to'),
        bucket: a.bucket ?? 'week',
        failureWindow: 86_400,
      }),
  }),
  tool({
    name: 'exposure',
    description:
      'Which artifacts contained a package (by package URL, from indexed SBOMs; without a version: every version), and where and when they ran',
    input: { org: Org, purl: z.string().min(1).max(2048), from: Time.optional(), to: Time.optional() },
    run: (scope, a) =>
      exposure(scope, {
        selector: { purl: a.purl },
        from: parseTime(a.from, 'from'),
        to: parseTime(a.to, 'to'),
        limit: EXPOSURE_PER_PAGE,
        page: 1,
        perPage: EXPOSURE_PER_PAGE,
      }),
  }),
];

/** The tools, answering for one authenticated request. */
function toolsFor(app: FastifyInstance, request: FastifyRequest): McpServer {
  const principal = requirePrincipal(request);
  const server = new McpServer({ name: 'verity', version: '1' }, { capabilities: { tools: {} } });

  /** Runs a tool in the organization it names, when the caller may read there. */
  const inOrg = async (t: Tool<z.ZodRawShape>, args: Record<string, unknown>): Promise<CallToolResult> => {
    const orgName = typeof args.org === 'string' ? args.org : principal.homeOrg?.name;
    if (!orgName) {
      return refused('Name the organization (org)');
    }
    const access = await orgAccess(app, principal, orgName);
    if (!access || !roleAllows(access.role, 'read')) {
      return refused(`Access denied to organization '${orgName}'`);
    }
    const scope = scopeFor(
      { db: app.db, publicUrl: app.config.publicUrl, events: app.domainEvents, services: app.services },
      { id: access.org.id, name: access.org.name },
      app.clock(),
      principal.name,
    );
    try {
      return json(await t.run(scope, args));
    } catch (err) {
      if (err instanceof ApiError || err instanceof ToolInputError) {
        return refused(err.message);
      }
      throw err;
    }
  };
  for (const t of TOOLS) {
    server.registerTool(
      t.name,
      {
        description: t.description,
        inputSchema: t.input,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      (args: Record<string, unknown>) => inOrg(t, args),
    );
  }
  return server;
}

export default fp(
  async (app) => {
    app.post(
      '/mcp',
      { config: { auth: { permission: 'authenticated' } }, schema: { hide: true } },
      async (request, reply) => {
        const server = toolsFor(app, request);
        // Stateless: a server and transport per request, JSON answers, no session to keep.
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        reply.raw.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        reply.hijack();
        await transport.handleRequest(request.raw, reply.raw, request.body);
      },
    );
    // No server-initiated stream and no session to end.
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: '/mcp',
        config: { auth: 'public' },
        schema: { hide: true },
        handler: async (_request, reply) =>
          reply
            .code(405)
            .header('allow', 'POST')
            .send({
              jsonrpc: '2.0',
              error: { code: -32000, message: 'Method not allowed: POST only' },
              id: null,
            }),
      });
    }
  },
  { name: 'mcp', dependencies: ['auth'] },
);
