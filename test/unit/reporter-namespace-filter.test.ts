/** Namespace selection as `kosli snapshot k8s` applies it: exclusions win, then inclusions, else all. */
import { describe, expect, it } from 'vitest';
import { compileNamespaceFilter } from '../../services/reporter/src/namespace-filter.js';

const none = { namespaces: [], namespacesRegex: [], excludeNamespaces: [], excludeNamespacesRegex: [] };
const NAMESPACES = ['default', 'prod-ns1', 'prod-ns2', 'staging-a', 'my-staging-b', 'kube-system'];

describe('compileNamespaceFilter', () => {
  it.each([
    ['no selection: every namespace', none, NAMESPACES, undefined],
    [
      'literal namespaces: those, watched one by one',
      { ...none, namespaces: ['prod-ns2', 'prod-ns1'] },
      ['prod-ns1', 'prod-ns2'],
      ['prod-ns1', 'prod-ns2'],
    ],
    [
      'a regular expression matches anywhere unless anchored',
      { ...none, namespacesRegex: ['staging-'] },
      ['staging-a', 'my-staging-b'],
      undefined,
    ],
    ['an anchored expression', { ...none, namespacesRegex: ['^staging-.*'] }, ['staging-a'], undefined],
    [
      'names and expressions together',
      { ...none, namespaces: ['default'], namespacesRegex: ['^prod-'] },
      ['default', 'prod-ns1', 'prod-ns2'],
      undefined,
    ],
    [
      'exclusions by name',
      { ...none, excludeNamespaces: ['prod-ns1', 'prod-ns2', 'default'] },
      ['staging-a', 'my-staging-b', 'kube-system'],
      undefined,
    ],
    [
      'exclusions by expression',
      { ...none, excludeNamespacesRegex: ['^kube-', 'staging'] },
      ['default', 'prod-ns1', 'prod-ns2'],
      undefined,
    ],
  ])('%s', (_rule, selection, expected, literal) => {
    const filter = compileNamespaceFilter(selection);
    expect(NAMESPACES.filter((ns) => filter.matches(ns))).toEqual(expected);
    expect(filter.literalNamespaces).toEqual(literal);
  });
});
