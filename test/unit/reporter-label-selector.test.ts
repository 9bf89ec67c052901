/** Label selectors are checked at start with the grammar of the Kubernetes API server. */
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../services/reporter/src/label-selector.js';

describe('parseLabelSelector', () => {
  it.each([
    ['app=web', [{ key: 'app', operator: '=', values: ['web'] }]],
    ['app==web', [{ key: 'app', operator: '=', values: ['web'] }]],
    ['app != web', [{ key: 'app', operator: '!=', values: ['web'] }]],
    ['tier=', [{ key: 'tier', operator: '=', values: [''] }]],
    ['canary', [{ key: 'canary', operator: 'exists', values: [] }]],
    ['!canary', [{ key: 'canary', operator: '!', values: [] }]],
    [
      'env in (prod, staging),app.kubernetes.io/name notin (db)',
      [
        { key: 'env', operator: 'in', values: ['prod', 'staging'] },
        { key: 'app.kubernetes.io/name', operator: 'notin', values: ['db'] },
      ],
    ],
    ['replicas>2', [{ key: 'replicas', operator: '>', values: ['2'] }]],
    ['', []],
  ])('accepts %j', (text, requirements) => {
    expect(parseLabelSelector(text)).toEqual({ ok: true, requirements });
  });

  it.each([
    ['app in (web', "expected ',' or ')' in the values of 'app in'"],
    ['app in web', "expected '(' after 'app in'"],
    ['app=web,', 'trailing comma'],
    ['=web', "expected a label key, got '='"],
    ['a b', "unexpected 'b' after label key 'a'"],
    ['!a=b', "unexpected '=' after '!a'"],
    ['app=we b', "expected ',' after the requirement on 'app'"],
    ['-app=web', "invalid label key '-app'"],
    ['Bad_Prefix/app=web', "invalid label key prefix 'Bad_Prefix'"],
    ['app=' + 'x'.repeat(64), `invalid label value '${'x'.repeat(64)}'`],
    ['replicas>two', "'replicas>two': '>' needs an integer"],
  ])('rejects %j: %s', (text, error) => {
    expect(parseLabelSelector(text)).toEqual({ ok: false, error });
  });
});
