/**
 * Every chart with every value set of its ci/ folder: `helm lint --strict` passes, `helm template`
 * renders, and every rendered object is valid against the Kubernetes schemas (built-in kinds and
 * the prometheus-operator CRDs), carries the chart's labels and stays in the release namespace.
 * Also: every value is documented where it is declared, and the values schema covers it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument, isMap, type Node } from 'yaml';
import { Ajv } from 'ajv';
import { RELEASE, chartDir, helm, render } from './helm.js';
import { schemaProblems } from './k8s-schemas.js';

const CHARTS = ['verity', 'verity-agent'] as const;
const ciFiles = (chart: string) =>
  readdirSync(join(chartDir(chart), 'ci'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();

/** Kinds that exist once per cluster: no namespace. */
const CLUSTER_SCOPED = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'Namespace',
]);

describe.each(CHARTS)('chart %s', (chart) => {
  it('has ci/ value sets', () => {
    expect(ciFiles(chart).length).toBeGreaterThanOrEqual(3);
  });

  describe.each(ciFiles(chart))('with ci/%s', (file) => {
    const values = join(chartDir(chart), 'ci', file);

    it('passes helm lint --strict', async () => {
      const result = await helm(['lint', chartDir(chart), '--strict', '-f', values]);
      expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
      expect(result.code).toBe(0);
    });

    it('renders objects valid against the Kubernetes schemas, labelled and namespaced', async () => {
      const objects = await render(chart, { files: [values] });
      expect(objects.length).toBeGreaterThan(3);
      const problems: string[] = [];
      for (const o of objects) {
        const where = `${o.kind}/${o.metadata?.name}`;
        for (const p of await schemaProblems(o)) {
          problems.push(`${where} ${p}`);
        }
        if (
          o.metadata.labels?.['app.kubernetes.io/managed-by'] !== 'Helm' &&
          o.kind !== 'CustomResourceDefinition'
        ) {
          problems.push(`${where} lacks the chart labels`);
        }
        if (CLUSTER_SCOPED.has(o.kind)) {
          if (o.metadata.namespace) {
            problems.push(`${where} is cluster-scoped but names a namespace`);
          }
        } else if (
          o.kind !== 'Role' &&
          o.kind !== 'RoleBinding' &&
          o.metadata.namespace !== RELEASE.namespace
        ) {
          problems.push(`${where} is not in the release namespace`);
        }
      }
      expect(problems).toEqual([]);
      const names = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
      expect(new Set(names).size, 'two objects share a kind, namespace and name').toBe(names.length);
    });
  });

  it('refuses an object the schema check must catch (the check can fail)', async () => {
    const [deployment] = (
      await render(chart, { files: [join(chartDir(chart), 'ci', ciFiles(chart)[0]!)] })
    ).filter((o) => o.kind === 'Deployment');
    deployment!.spec.replicas = 'one';
    deployment!.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    const problems = await schemaProblems(deployment!);
    expect(problems.join('\n')).toMatch(/\/spec\/replicas/);
    expect(problems.join('\n')).toMatch(/containerPort/);
  });
});

/** Leaf paths of a values document: scalars, lists and empty maps are leaves. */
function valuePaths(node: Node | null, prefix: string[] = []): string[] {
  if (isMap(node) && node.items.length > 0) {
    return node.items.flatMap((pair) =>
      valuePaths(pair.value as Node | null, [...prefix, String((pair.key as { value: unknown }).value)]),
    );
  }
  return [prefix.join('.')];
}

describe.each(CHARTS)('values of %s', (chart) => {
  const text = readFileSync(join(chartDir(chart), 'values.yaml'), 'utf8');
  const params = [...text.matchAll(/^\s*## @param (\S+)(?: \[(\w+)\])? (.+)$/gm)].map((m) => ({
    path: m[1]!,
    wholeObject: m[2] === 'object',
    text: m[3]!,
  }));
  const leaves = valuePaths(parseDocument(text).contents);

  it('documents every value where it is declared (## @param)', () => {
    const documented = (leaf: string) =>
      params.some((p) => p.path === leaf || (p.wholeObject && leaf.startsWith(`${p.path}.`)));
    expect(leaves.filter((l) => !documented(l))).toEqual([]);
  });

  it('documents no value that does not exist', () => {
    const exists = (path: string) => leaves.some((l) => l === path || l.startsWith(`${path}.`));
    expect(params.map((p) => p.path).filter((p) => !exists(p))).toEqual([]);
    expect(params.filter((p) => p.text.trim().length < 10)).toEqual([]);
  });

  it('has a values.schema.json that accepts the defaults and names every top-level value', () => {
    const schema = JSON.parse(readFileSync(join(chartDir(chart), 'values.schema.json'), 'utf8'));
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const defaults = parseDocument(text).toJS();
    // null in values.yaml means "unset": helm drops those keys before validating.
    const dropNulls = (v: any): any =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== null)
              .map(([k, x]) => [k, dropNulls(x)]),
          )
        : v;
    expect(validate(dropNulls(defaults)), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(defaults).sort());
    expect(schema.additionalProperties).toBe(false);
  });
});
