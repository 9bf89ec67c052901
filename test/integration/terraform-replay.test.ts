/**
 * The Kosli Terraform provider against Verity: what its client (`pkg/client` of
 * kosli-dev/terraform-provider-kosli) sends through the create, read, update, import and destroy of
 * flows, custom attestation types, service accounts and environments, and what it reads back into
 * state, as its acceptance tests (which run against the real server) check it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { terraformClient } from '../helpers/terraform.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../../services/api/src/storage/repositories/service-accounts.js';

const ORG = 'acme';
let t: TestApp;
let tf: ReturnType<typeof terraformClient>;
let cli: ReturnType<typeof cliClient>;

beforeAll(async () => {
  t = await createTestApp();
  // The first seeded account of the org: `seed-admin-1`, whose id is the creator's id below.
  tf = terraformClient(t.app, await t.seedKey(ORG, 'admin'));
  cli = cliClient(t.app, await t.seedKey(ORG, 'member'));
});
afterAll(async () => t?.close());

/** `CreateFlow`: multipart `data_json` (a Go map: keys sorted) and `template_file` when one is set. */
const createFlow = (name: string, description = '', template?: string) =>
  tf.multipart('PUT', `/flows/${ORG}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ description, name, visibility: 'private' }) },
    ...(template ? [{ name: 'template_file', filename: 'template.yml', content: template }] : []),
  ]);

const TEMPLATE = `version: 1
trail:
  attestations:
  - name: unit-tests
    type: generic
`;

describe('kosli_flow', () => {
  it('reads back the minimal template for a flow created without one, with compliance unchanged', async () => {
    // TestAccFlowResource_basic: name only; the server sets the template.
    const created = await createFlow('tf-basic');
    expect(created.status).toBe(201);
    expect(created.json).toBe('OK');
    const read = await tf.get(`/flows/${ORG}/tf-basic`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({
      name: 'tf-basic',
      description: '',
      template: 'version: 1\n',
      tags: {},
    });
    const listed = (await tf.get(`/flows/${ORG}`)).json.find((f: any) => f.name === 'tf-basic');
    expect(listed.template).toBe('version: 1\n');

    // Nothing is expected, exactly as without a template: what is reported decides.
    expect((await cli.json('PUT', `/api/v2/trails/${ORG}/tf-basic`, { name: 't1' })).status).toBe(201);
    const attest = (isCompliant: boolean) =>
      cli.multipart('POST', `/api/v2/attestations/${ORG}/tf-basic/trail/t1/generic`, [
        { name: 'data_json', value: JSON.stringify({ attestation_name: 'lint', is_compliant: isCompliant }) },
      ]);
    expect((await attest(true)).status).toBe(201);
    let trail = (await cli.get(`/api/v2/trails/${ORG}/tf-basic/t1`)).json;
    expect(trail.compliance_state).toBe('COMPLIANT');
    expect(trail.compliance_status.flow_template_id).toBeNull();
    expect(trail.compliance_status.attestations_statuses).toEqual([
      expect.objectContaining({ attestation_name: 'lint', status: 'COMPLETE', unexpected: true }),
    ]);
    expect((await attest(false)).status).toBe(201);
    trail = (await cli.get(`/api/v2/trails/${ORG}/tf-basic/t1`)).json;
    expect(trail.compliance_state).toBe('NON-COMPLIANT');

    // TestAccFlowResource_update: a description, then a template; each PUT is an update (200).
    expect((await createFlow('tf-basic', 'Updated description')).status).toBe(200);
    expect((await tf.get(`/flows/${ORG}/tf-basic`)).json).toMatchObject({
      description: 'Updated description',
      template: 'version: 1\n',
    });
    expect((await createFlow('tf-basic', 'Updated description', TEMPLATE)).status).toBe(200);
    expect((await tf.get(`/flows/${ORG}/tf-basic`)).json.template).toBe(TEMPLATE);

    // Destroy archives; the read still answers (flows, unlike environments, stay readable).
    expect((await tf.put(`/flows/${ORG}/tf-basic/archive`)).status).toBe(200);
    expect((await tf.get(`/flows/${ORG}/tf-basic`)).json.archived).toBe(true);
  });

  it('creates a new flow under the old name of a renamed flow', async () => {
    expect((await createFlow('payments', 'first', TEMPLATE)).status).toBe(201);
    expect(
      (await cli.json('PUT', `/api/v2/flows/${ORG}/payments/rename`, { new_name: 'payments-v2' })).status,
    ).toBe(200);
    // The old name answers for the renamed flow until a flow takes it...
    expect((await tf.get(`/flows/${ORG}/payments`)).json.name).toBe('payments-v2');
    // ...as Terraform's create of `payments` does.
    expect((await createFlow('payments', 'second')).status).toBe(201);
    expect((await tf.get(`/flows/${ORG}/payments`)).json).toMatchObject({
      name: 'payments',
      description: 'second',
      template: 'version: 1\n',
    });
    expect((await tf.get(`/flows/${ORG}/payments-v2`)).json).toMatchObject({
      name: 'payments-v2',
      description: 'first',
      template: TEMPLATE,
    });
  });
});

describe('kosli_custom_attestation_type', () => {
  /** `CreateCustomAttestationType`: `data_json` with `evaluator` only when there are jq rules. */
  const createType = (name: string, description: string, rules: string[], schema?: object) =>
    tf.multipart('POST', `/custom-attestation-types/${ORG}`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          description,
          ...(rules.length > 0 ? { evaluator: { content_type: 'jq', rules } } : {}),
          name,
        }),
      },
      ...(schema ? [{ name: 'type_schema', filename: 'schema.json', content: JSON.stringify(schema) }] : []),
    ]);
  const schema1 = { type: 'object', properties: { coverage: { type: 'number' } } };
  const schema2 = {
    type: 'object',
    properties: { coverage: { type: 'number' }, vulnerabilities: { type: 'integer' } },
  };

  it('answers 201 to the create and to every update, each a new version', async () => {
    const created = await createType('tf-coverage', 'Coverage v1', ['.coverage >= 80'], schema1);
    expect(created.status, created.body).toBe(201);
    expect(created.json).toBe('OK');
    // TestAccCustomAttestationTypeResource_update, steps 2 and 3.
    const updated = await createType(
      'tf-coverage',
      'Coverage v2',
      ['.coverage >= 90', '.branch == "main"'],
      schema1,
    );
    expect(updated.status, updated.body).toBe(201);
    const again = await createType(
      'tf-coverage',
      'Coverage v2',
      ['.coverage >= 90', '.vulnerabilities == 0'],
      schema2,
    );
    expect(again.status, again.body).toBe(201);
    expect((await tf.get(`/custom-attestation-types/${ORG}/tf-coverage`)).json.versions).toHaveLength(3);
  });

  it('lists versions newest first, so versions[0] holds the latest schema and rules', async () => {
    const read = await tf.get(`/custom-attestation-types/${ORG}/tf-coverage`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({
      name: 'tf-coverage',
      description: 'Coverage v2',
      archived: false,
      org: ORG,
    });
    expect(read.json.versions.map((v: any) => v.version)).toEqual([3, 2, 1]);
    expect(read.json.versions[0].evaluator).toEqual({
      content_type: 'jq',
      rules: ['.coverage >= 90', '.vulnerabilities == 0'],
    });
    expect(read.json.versions[0].type_schema).toEqual(schema2);
    // The data source's list reads the same way.
    const listed = (await tf.get(`/custom-attestation-types/${ORG}`)).json.find(
      (x: any) => x.name === 'tf-coverage',
    );
    expect(listed.versions.map((v: any) => v.version)).toEqual([3, 2, 1]);
    expect(listed.versions[0].evaluator.rules).toEqual(['.coverage >= 90', '.vulnerabilities == 0']);
    // `?version=` still picks one.
    const v1 = await tf.get(`/custom-attestation-types/${ORG}/tf-coverage?version=1`);
    expect(v1.json.versions).toHaveLength(1);
    expect(v1.json.versions[0].evaluator.rules).toEqual(['.coverage >= 80']);

    // Destroy archives; the data source still reads it, archived.
    expect((await tf.put(`/custom-attestation-types/${ORG}/tf-coverage/archive`)).status).toBe(200);
    expect((await tf.get(`/custom-attestation-types/${ORG}/tf-coverage`)).json.archived).toBe(true);
    // A type with jq rules only (no schema part).
    expect((await createType('tf-rules-only', 'Attestation type with only jq rules', ['.ok'])).status).toBe(
      201,
    );
    const rulesOnly = (await tf.get(`/custom-attestation-types/${ORG}/tf-rules-only`)).json;
    expect(rulesOnly.versions[0]).toMatchObject({
      type_schema: null,
      evaluator: { content_type: 'jq', rules: ['.ok'] },
    });
  });
});

describe('kosli_service_account', () => {
  it('returns display_name and creating_user_id on create, get, list and update', async () => {
    const org = (await orgsRepository.findByName(t.db.db, ORG))!;
    const creator = (await serviceAccountsRepository.findByName(t.db.db, org.id, 'seed-admin-1'))!;
    const created = await tf.post(`/service-accounts/${ORG}`, {
      name: 'tf-sa',
      description: 'Initial description',
      privilege: 'reader',
    });
    expect(created.status).toBe(201);
    const expected = { name: 'tf-sa', display_name: 'tf-sa', creating_user_id: creator.id };
    expect(created.json).toMatchObject({
      ...expected,
      description: 'Initial description',
      privilege: 'reader',
    });
    expect(typeof created.json.created_at).toBe('number');

    // Read and import (by name), and the data source.
    expect((await tf.get(`/service-accounts/${ORG}/tf-sa`)).json).toEqual(created.json);
    const listed = (await tf.get(`/service-accounts/${ORG}`)).json.find((a: any) => a.name === 'tf-sa');
    expect(listed).toEqual(created.json);

    // Update: the description cleared with JSON null, the privilege always sent.
    const updated = await tf.patch(`/service-accounts/${ORG}/tf-sa`, {
      description: null,
      privilege: 'member',
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ ...expected, description: '', privilege: 'member' });

    // Destroy.
    expect((await tf.delete(`/service-accounts/${ORG}/tf-sa`)).json).toBe('OK');
    expect((await tf.get(`/service-accounts/${ORG}/tf-sa`)).status).toBe(404);
  });
});

describe('kosli_environment', () => {
  /** `CreateEnvironment`: a Go map, keys sorted, nil slices as null. */
  const put = (description: string) =>
    tf.put(`/environments/${ORG}`, {
      description,
      include_scaling: false,
      included_environments: null,
      name: 'tf-env',
      policies: null,
      type: 'K8S',
    });

  it('reads an archived environment as 404 saying so, and re-creates it under the same name', async () => {
    expect((await put('first')).status).toBe(201);
    const read = await tf.get(`/environments/${ORG}/tf-env`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ name: 'tf-env', type: 'K8S', description: 'first', archived: false });

    // Destroy archives (a PUT with no body); the read then answers 404, which drops it from state.
    expect((await tf.put(`/environments/${ORG}/tf-env/archive`)).status).toBe(200);
    const gone = await tf.get(`/environments/${ORG}/tf-env`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({
      message: "Environment named 'tf-env' has been archived for organization 'acme'",
    });
    expect((await tf.get(`/environments/${ORG}`)).json.map((e: any) => e.name)).not.toContain('tf-env');

    // Re-creating the name works as before: the environment is back, no longer archived.
    const again = await put('second');
    expect([200, 201]).toContain(again.status);
    const back = await tf.get(`/environments/${ORG}/tf-env`);
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ name: 'tf-env', description: 'second', archived: false });
  });
});
