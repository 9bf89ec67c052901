/**
 * The organization-wide setup, before any history: custom attestation types, the four flows
 * with their templates and tags, the environment policies, and the three K8S environments.
 */
import { basename } from 'node:path';
import { fixture } from './evidence.js';
import type { Wire } from './wire.js';

/** The names of the flows and policies the setup creates, as the summary lists them. */
export const DEMO_FLOWS = ['payments', 'frontend', 'cli', 'cli-release'];
export const DEMO_POLICIES = ['build-provenance', 'tested-code'];

export async function seedSetup(w: Wire): Promise<void> {
  await seedCustomTypes(w);
  await seedFlows(w);
  await seedPolicies(w);
  await seedEnvironments(w);
}

async function seedCustomTypes({ org, form }: Wire): Promise<void> {
  await form('POST', `/custom-attestation-types/${org}`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        name: 'person',
        description: 'The person accountable for a release',
        summary: [
          { name: 'Name', expression: '.name' },
          { name: 'Age', expression: '.age' },
        ],
      }),
    },
    { name: 'type_schema', filename: 'person-schema.json', content: fixture('person-schema.json') },
  ]);
  await form('POST', `/custom-attestation-types/${org}`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        name: 'four-eyes-result',
        description: 'A second person reviewed every change',
        evaluator: { content_type: 'jq', rules: ['.approved == true', '.author != .reviewer'] },
        summary: [
          { name: 'Author', expression: '.author' },
          { name: 'Reviewer', expression: '.reviewer' },
          { name: 'Approved', expression: '.approved' },
        ],
      }),
    },
    { name: 'type_schema', filename: 'four-eyes-schema.json', content: fixture('four-eyes-schema.json') },
  ]);
}

async function seedFlows({ org, form, json }: Wire): Promise<void> {
  const createFlow = async (
    name: string,
    description: string,
    templateFile: string,
    tags: Record<string, string>,
  ) => {
    await form('PUT', `/flows/${org}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name, description }) },
      { name: 'template_file', filename: basename(templateFile), content: fixture(templateFile) },
    ]);
    await json('PATCH', `/tags/${org}/flow/${name}`, { set_tags: tags, remove_tags: [] });
  };
  await createFlow('payments', 'Payments API: build, test, scan and ship', 'payments-template.yml', {
    team: 'payments',
    'risk-level': 'high',
  });
  await createFlow('frontend', 'The customer web app', 'frontend-template.yml', {
    team: 'web',
    'risk-level': 'medium',
  });
  await createFlow('cli', 'The command-line client, built on every merge', 'main-flow-template.yml', {
    team: 'platform',
  });
  await createFlow(
    'cli-release',
    'Released binaries and packages of the command-line client',
    'release-flow-template.yml',
    {
      team: 'platform',
    },
  );
}

async function seedPolicies({ org, form }: Wire): Promise<void> {
  const policyPut = (name: string, description: string, file: string) =>
    form('PUT', `/policies/${org}`, [
      { name: 'payload', value: JSON.stringify({ name, description, comment: '', type: 'env' }) },
      { name: 'policy_file', filename: file, content: fixture(file) },
    ]);
  await policyPut(
    'build-provenance',
    'Everything running was built by a known pipeline whose trail is compliant',
    'test-policy.yml',
  );
  await policyPut('tested-code', 'Everything running has unit-test evidence', 'tested-code-policy.yml');
}

async function seedEnvironments({ org, json }: Wire): Promise<void> {
  const envs = [
    {
      name: 'dev',
      description: 'Development cluster: every build of main',
      tags: { tier: 'development', region: 'eu-north-1' },
    },
    {
      name: 'staging',
      description: 'Pre-production: release candidates',
      tags: { tier: 'staging', region: 'eu-north-1' },
    },
    {
      name: 'prod',
      description: 'Production cluster serving customers',
      tags: { tier: 'production', region: 'eu-west-1', 'on-call': 'sre' },
    },
  ] as const;
  for (const env of envs) {
    await json('PUT', `/environments/${org}`, { name: env.name, type: 'K8S', description: env.description });
    await json('PATCH', `/tags/${org}/env/${env.name}`, { set_tags: env.tags, remove_tags: [] });
  }
  await json('POST', `/environments/${org}/staging/policies`, { policy_names: ['build-provenance'] });
  await json('POST', `/environments/${org}/prod/policies`, {
    policy_names: ['build-provenance', 'tested-code'],
  });
}
