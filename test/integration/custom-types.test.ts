/**
 * Custom attestation types: JSON Schema (ajv) and jq rules (WebAssembly jq) evaluated per
 * attestation against the version in force, with a time bound per evaluation; versions and
 * archiving; invalid definitions refused with the reason.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { changeElsewhere } from '../helpers/elsewhere.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;
const base = '/api/v2/custom-attestation-types/acme';

const createType = (data: Record<string, unknown>, schema?: string) =>
  cli.multipart('POST', base, [
    { name: 'data_json', value: JSON.stringify(data) },
    ...(schema !== undefined ? [{ name: 'type_schema', filename: 'schema.json', content: schema }] : []),
  ]);
const attestCustom = (typeName: string, data: unknown, name = 'metrics') =>
  cli.multipart('POST', '/api/v2/attestations/acme/f/trail/t/custom', [
    {
      name: 'data_json',
      value: JSON.stringify({ attestation_name: name, type_name: typeName, attestation_data: data }),
    },
  ]);
const latest = async (name = 'metrics') =>
  (await cli.get(`/api/v2/attestations/acme/f/trail/t/${name}`)).json[0];

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_JQ_TIMEOUT_MS: '3000' } });
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  reader = cliClient(t.app, await t.seedKey('acme', 'reader'));
  const person = JSON.stringify({
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' } },
    required: ['age'],
  });
  const created = await createType(
    {
      name: 'person',
      description: 'A person',
      evaluator: { content_type: 'jq', rules: ['.age >= 18', '.name | length > 0'] },
      summary: [{ name: 'Age', expression: '.age' }],
    },
    person,
  );
  expect(created.status, created.body).toBe(201);
});
afterAll(async () => t?.close());

describe('evaluation', () => {
  it('is compliant when the schema validates and every rule is true, with the summary', async () => {
    expect((await attestCustom('person', { name: 'Jane', age: 34 })).status).toBe(201);
    const a = await latest();
    expect(a).toMatchObject({ attestation_type: 'custom:person', is_compliant: true, type_name: 'person' });
    expect(a.evaluation).toEqual({
      type_version: 1,
      schema_errors: [],
      rule_results: [
        { rule: '.age >= 18', result: true, error: null },
        { rule: '.name | length > 0', result: true, error: null },
      ],
      summary: [{ name: 'Age', value: 34, error: null }],
    });
  });

  it.each([
    ['a rule is false', { name: 'Tim', age: 12 }, /^$/],
    ['the schema fails', { name: 'Tim', age: 'old' }, /\/age must be integer/],
    ['a rule errors', { name: 5, age: 40 }, /\/name must be string/],
  ])('is non-compliant when %s', async (_label, data, schemaError) => {
    expect((await attestCustom('person', data)).status).toBe(201);
    const a = await latest();
    expect(a.is_compliant).toBe(false);
    expect(a.evaluation.schema_errors.join()).toMatch(schemaError);
  });

  it('bounds each evaluation in time: a runaway rule fails the check, and the next evaluation works', async () => {
    expect(
      (await createType({ name: 'runaway', evaluator: { content_type: 'jq', rules: ['def f: f; f'] } }))
        .status,
    ).toBe(201);
    expect((await attestCustom('runaway', {}, 'loop')).status).toBe(201);
    const a = await latest('loop');
    expect(a.is_compliant).toBe(false);
    expect(a.evaluation.rule_results[0].error).toBe('evaluation exceeded its time bound of 3000 ms');
    expect((await attestCustom('person', { name: 'Ann', age: 50 })).status).toBe(201);
    expect((await latest()).is_compliant).toBe(true);
  });

  it('evaluates against the version in force when the attestation arrives', async () => {
    expect(
      (await createType({ name: 'person', evaluator: { content_type: 'jq', rules: ['.age >= 65'] } })).status,
    ).toBe(201);
    await attestCustom('person', { name: 'Ann', age: 50 });
    const a = await latest();
    expect(a.is_compliant).toBe(false);
    expect(a.evaluation.type_version).toBe(2);
    const types = await cli.get(`${base}/person`);
    expect(types.json.versions.map((v: any) => v.version)).toEqual([2, 1]);
    expect((await cli.get(`${base}/person?version=2`)).json.versions[0].evaluator.rules).toEqual([
      '.age >= 65',
    ]);
    expect((await cli.get(`${base}/person?version=9`)).status).toBe(404);
  });

  it('evaluates a version added elsewhere (another replica) once its change is heard', async () => {
    const adult = { content_type: 'jq', rules: ['.age >= 18'] };
    expect((await createType({ name: 'grown', evaluator: adult })).status).toBe(201);
    expect((await attestCustom('grown', { age: 40 }, 'grown')).status).toBe(201);
    expect((await latest('grown')).evaluation.type_version).toBe(1);
    await changeElsewhere(t, 'acme', () =>
      sql`
        insert into custom_attestation_type_versions
          (org_id, type_id, version, description, comment, type_schema, evaluator, summary, created_by, created_at)
        select org_id, type_id, 2, description, comment, type_schema,
               ${JSON.stringify({ content_type: 'jq', rules: ['.age >= 65'] })}::jsonb, summary, created_by, created_at
        from custom_attestation_type_versions v
        where v.type_id = (select id from custom_attestation_types where name = 'grown') and v.version = 1`.execute(
        t.db.db,
      ),
    );
    expect((await attestCustom('grown', { age: 40 }, 'grown')).status).toBe(201);
    const a = await latest('grown');
    expect(a.evaluation.type_version).toBe(2);
    expect(a.is_compliant).toBe(false);
  });

  it('refuses an attestation of an unknown or archived type with 400', async () => {
    const unknown = await attestCustom('nobody', {});
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors['data_json.type_name']).toMatch(/no custom attestation type named 'nobody'/);
    expect((await cli.json('PUT', `${base}/runaway/archive`)).status).toBe(200);
    expect((await cli.get(`${base}/runaway`)).json.archived).toBe(true);
    expect((await attestCustom('runaway', {}, 'loop')).status).toBe(400);
  });
});

describe('definitions', () => {
  it.each([
    [
      'a jq rule that does not parse',
      { name: 'bad1', evaluator: { content_type: 'jq', rules: ['.a |||'] } },
      undefined,
      'data_json.evaluator.rules[0]',
    ],
    [
      'a summary that does not parse',
      { name: 'bad2', summary: [{ name: 'x', expression: '.[' }] },
      undefined,
      'data_json.summary[0].expression',
    ],
    ['a schema that is not JSON', { name: 'bad3' }, '{nope', 'type_schema'],
    ['a schema that is not a schema', { name: 'bad4' }, '{"type": "nope"}', 'type_schema'],
    ['a bad name', { name: '-bad' }, undefined, 'data_json.name'],
    [
      'an unknown evaluator',
      { name: 'bad5', evaluator: { content_type: 'rego', rules: [] } },
      undefined,
      'data_json.evaluator.content_type',
    ],
  ])('refuses %s with 400 and creates nothing', async (_label, data, schema, field) => {
    const r = await createType(data, schema);
    expect(r.status, r.body).toBe(400);
    expect(Object.keys(r.json.errors)).toContain(field);
    expect((await cli.get(`${base}/${String(data.name)}`)).status).toBe(404);
  });

  it('lets readers read and not write', async () => {
    expect((await reader.get(base)).status).toBe(200);
    const r = await reader.multipart('POST', base, [
      { name: 'data_json', value: JSON.stringify({ name: 'r' }) },
    ]);
    expect(r.status).toBe(403);
  });
});
