/**
 * The MCP endpoint as an assistant sees it: an MCP client of the SDK, over Streamable HTTP on a
 * real port, with an API key; it lists the tools and calls each, over the history of
 * helpers/delivery-history.ts, and never sees another organization's data.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3, deliveryHistory, FLOW, ORG, OTHER, type DeliveryHistory } from '../helpers/delivery-history.js';

let h: DeliveryHistory;
let base: string;
const clients: Client[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'verity-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** A tool's answer: its JSON, or the message of a refusal. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ type: string; text: string }>;
    isError?: boolean;
  };
  const text = r.content[0]!.text;
  return r.isError ? { error: text } : { json: JSON.parse(text) };
}

beforeAll(async () => {
  h = await deliveryHistory();
  base = await h.t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  for (const c of clients) {
    await c.close();
  }
  await h?.t.close();
});

describe('the MCP endpoint', () => {
  it('lists its read-only tools', async () => {
    const client = await connect(await h.t.seedKey(ORG, 'reader'));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'artifact_provenance',
      'deployments',
      'dora',
      'environment_compliance_history',
      'environment_snapshot',
      'exposure',
    ]);
    for (const t of tools) {
      expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      expect(t.inputSchema.properties, t.name).toHaveProperty('org');
    }
  });

  it('answers each tool as the API does, in the caller organization', async () => {
    const client = await connect(await h.t.seedKey(ORG, 'reader'));
    const now = await call(client, 'environment_snapshot', { environment: 'prod' });
    expect(now.json).toMatchObject({ index: 7, is_latest: true });
    const then = await call(client, 'environment_snapshot', { environment: 'prod', snapshot: '#3' });
    expect(then.json.artifacts.map((a: any) => a.name).sort()).toEqual([
      'registry.example/debug:1',
      'registry.example/shop:3',
    ]);
    const record = await call(client, 'artifact_provenance', { flow: FLOW, fingerprint: A3 });
    expect(record.json).toMatchObject({
      fingerprint: A3,
      trail_name: 'b3',
      commit_lead_times: { prod: 5400, staging: 3600 },
    });
    const history = await call(client, 'environment_compliance_history', {
      environment: 'prod',
      per_page: 7,
    });
    expect(history.json.map((s: any) => [s.index, s.compliance_state])).toEqual([
      [7, 'COMPLIANT'],
      [6, 'COMPLIANT'],
      [5, 'COMPLIANT'],
      [4, 'COMPLIANT'],
      [3, 'NON-COMPLIANT'],
      [2, 'COMPLIANT'],
      [1, 'COMPLIANT'],
    ]);
    const deployed = await call(client, 'deployments', { environment: 'prod', from: String(h.at(4)) });
    expect(deployed.json.deployments.map((d: any) => d.snapshot_index)).toEqual([5, 3, 2]);
    const keys = await call(client, 'dora', {
      from: new Date(h.at(0) * 1000).toISOString(),
      to: String(h.at(24)),
      bucket: 'day',
    });
    expect(keys.json.total).toMatchObject({
      deployment_frequency: { deployments: 5 },
      change_failure_rate: { rate: 0.4 },
      time_to_restore: { p50: 3600 },
    });
    const exposed = await call(client, 'exposure', { purl: 'pkg:npm/lodash' });
    expect(exposed.json).toMatchObject({ query: { purl: 'pkg:npm/lodash' }, artifacts: [] });
  });

  it('says what is wrong with an argument instead of failing', async () => {
    const client = await connect(await h.t.seedKey(ORG, 'reader'));
    expect(await call(client, 'environment_snapshot', { environment: 'nowhere' })).toEqual({
      error: "Environment named 'nowhere' does not exist for organization 'acme'",
    });
    expect(await call(client, 'deployments', { from: 'yesterday' })).toEqual({
      error: 'from: must be epoch seconds or an ISO 8601 date-time',
    });
    expect((await call(client, 'exposure', { purl: 'lodash' })).error).toMatch(/^Malformed package URL/);
  });

  it("never shows another organization's data", async () => {
    const outsider = await connect(await h.t.seedKey(OTHER, 'admin'));
    for (const [name, args] of [
      ['environment_snapshot', { org: ORG, environment: 'prod' }],
      ['artifact_provenance', { org: ORG, flow: FLOW, fingerprint: A3 }],
      ['environment_compliance_history', { org: ORG, environment: 'prod' }],
      ['deployments', { org: ORG }],
      ['dora', { org: ORG }],
      ['exposure', { org: ORG, purl: 'pkg:npm/lodash' }],
    ] as const) {
      expect(await call(outsider, name, args), name).toEqual({
        error: "Access denied to organization 'acme'",
      });
    }
    // Its own organization: none of acme's deployments.
    expect((await call(outsider, 'deployments', {})).json).toEqual({
      deployments: [],
      next: null,
      offset: 0,
      total_count: 0,
      total_count_capped: false,
    });
  });

  it('answers 401 without a key, and only POST', async () => {
    const bare = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(bare.status).toBe(401);
    const get = await fetch(`${base}/mcp`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
