/**
 * The operator's pure decisions: when policy content is the same document, which tags change,
 * when an action in Verity already matches, and which failures stall and which retry.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VerityApiError } from '../../services/shared/client/index.js';
import { actionMatches } from '../../services/operator/src/action-reconciler.js';
import type { ActionWrite } from '../../services/operator/src/api-client.js';
import { tagChange } from '../../services/operator/src/environment-reconciler.js';
import { SecretMissingError } from '../../services/operator/src/kube.js';
import { policyContent, sameContent } from '../../services/operator/src/policy-content.js';
import { classify, sameStatus, StalledError } from '../../services/operator/src/reconcile.js';
import type { Action } from '../../services/shared/contract/actions.js';

describe('policy content', () => {
  const text =
    '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n';

  it('is the same document whatever the formatting, comments or key order', () => {
    const content = policyContent(text);
    expect(content.yaml).toBe(text);
    expect(
      sameContent(
        '# note\nartifacts: {provenance: {required: true}}\n_schema: https://kosli.com/schemas/policy/environment/v1',
        content,
      ),
    ).toBe(true);
    expect(
      policyContent({
        artifacts: { provenance: { required: true } },
        _schema: 'https://kosli.com/schemas/policy/environment/v1',
      }).hash,
    ).toBe(content.hash);
  });

  it('differs when a value differs, and when the stored text is not YAML', () => {
    const content = policyContent(text);
    expect(sameContent(text.replace('true', 'false'), content)).toBe(false);
    expect(sameContent('a: [unclosed', content)).toBe(false);
  });

  it('writes an object as YAML that reads back as the same document', () => {
    const content = policyContent({
      artifacts: { attestations: [{ name: 'scan', if: '${{ flow.tags.x == "y" }}' }] },
    });
    expect(sameContent(content.yaml, content)).toBe(true);
  });

  it('refuses YAML text that does not parse', () => {
    expect(() => policyContent('a: [unclosed')).toThrow();
  });
});

describe('environment tags', () => {
  it('sets what is new or different and removes what the spec does not name', () => {
    expect(tagChange({ team: 'a', tier: '1', old: 'x' }, { team: 'a', tier: '2', new: 'y' })).toEqual({
      set: { tier: '2', new: 'y' },
      remove: ['old'],
    });
    expect(tagChange({ a: '1' }, { a: '1' })).toEqual({ set: {}, remove: [] });
  });
});

describe('action comparison', () => {
  const current: Action = {
    name: 'a',
    type: 'env',
    number: 3,
    environments: ['prod', 'dev'],
    flows: null,
    triggers: ['ON_EXITED_ARTIFACT', 'ON_STARTED_ARTIFACT'],
    targets: [
      {
        type: 'EMAIL',
        emails: ['b@x.io', 'a@x.io'],
        last_success_at: null,
        last_failure_at: null,
        last_error: null,
      },
      {
        type: 'WEBHOOK',
        webhook: 'https://h.io/1',
        payload_version: '1.0',
        last_success_at: 1,
        last_failure_at: null,
        last_error: null,
      },
    ],
    created_by: 'op',
    is_created_from_slack_app: false,
    is_failing: false,
    last_success_timestamp: null,
    last_failure_timestamp: null,
    created_at: 1,
    last_modified_at: 1,
  };
  const wanted: ActionWrite = {
    name: 'a',
    type: 'env',
    environments: ['dev', 'prod'],
    triggers: ['ON_STARTED_ARTIFACT', 'ON_EXITED_ARTIFACT'],
    targets: [
      { type: 'WEBHOOK', webhook: 'https://h.io/1', payload_version: '1.0' },
      { type: 'EMAIL', emails: ['a@x.io', 'b@x.io'] },
    ],
  };

  it('matches regardless of order and delivery records', () => {
    expect(actionMatches(current, wanted)).toBe(true);
  });

  it.each([
    ['a trigger', { triggers: ['ON_STARTED_ARTIFACT'] }],
    ['an environment', { environments: ['prod'] }],
    [
      'a webhook URL (a rotated Secret)',
      {
        targets: [{ type: 'WEBHOOK', webhook: 'https://h.io/2', payload_version: '1.0' }, wanted.targets[1]],
      },
    ],
    ['the type', { type: 'flow' }],
  ] as const)('differs when %s differs', (_what, change) => {
    expect(actionMatches(current, { ...wanted, ...change } as ActionWrite)).toBe(false);
  });
});

describe('failure classes', () => {
  it.each([
    [new VerityApiError(0, 'GET /x: fetch failed'), true, 'ApiUnreachable'],
    [new VerityApiError(503, 'down'), true, 'ApiError'],
    [new VerityApiError(429, 'slow down'), true, 'RateLimited'],
    [new VerityApiError(409, 'concurrent'), true, 'Conflict'],
    [new VerityApiError(401, 'no key'), true, 'Unauthorized'],
    [
      new VerityApiError(400, "Policy 'p' does not exist", { 'body.policies': 'unknown policies: p' }),
      true,
      'DependencyNotReady',
    ],
    [new VerityApiError(400, 'type cannot change', { 'body.type': 'must be lambda' }), false, 'Rejected'],
    [new VerityApiError(422, 'invalid'), false, 'Rejected'],
    [new SecretMissingError('Secret ns/s not found'), true, 'SecretNotFound'],
    [new StalledError('InvalidSpec', 'bad'), false, 'InvalidSpec'],
    [Object.assign(new Error('HTTP-Code: 500'), { code: 500 }), true, 'KubernetesError'],
    [new z.ZodError([]), true, 'UnexpectedResponse'],
  ])('%s -> retry %s, reason %s', (err, retry, reason) => {
    expect(classify(err)).toMatchObject({ retry, reason });
  });

  it("keeps the server's message and field errors", () => {
    expect(classify(new VerityApiError(400, 'Invalid policy file', { 'policy_file.x': 'bad' })).message).toBe(
      'Verity API: Invalid policy file (policy_file.x: bad)',
    );
  });
});

describe('status comparison', () => {
  it('ignores key order and undefined fields', () => {
    expect(sameStatus({ a: 1, b: { c: 2, d: undefined } }, { b: { c: 2 }, a: 1 })).toBe(true);
    expect(sameStatus({ a: 1 }, { a: 2 })).toBe(false);
  });
});
