/**
 * The CRDs of crds/: structural schemas, their samples and invalid examples, checked three ways
 * — ajv over openAPIV3Schema, the CEL rules (x-kubernetes-validations) evaluated for real, and
 * the operator's zod schemas — so the API server and the operator accept and refuse the same
 * resources.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { parseAllDocuments } from 'yaml';
import { run as runCel } from '@bufbuild/cel';
import { API_VERSION, KINDS, type KindName } from '../../services/operator/src/crds.js';

type Schema = Record<string, any>;
const root = process.cwd();
const loadDocs = (path: string): any[] => parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJS());

const crds = Object.fromEntries(
  ['environment', 'policy', 'action'].map((f) => {
    const crd = loadDocs(join(root, 'crds', `${f}.yaml`))[0];
    return [crd.spec.names.kind as KindName, crd];
  }),
) as Record<KindName, any>;

const samples = readdirSync(join(root, 'crds', 'samples'))
  .flatMap((f) => loadDocs(join(root, 'crds', 'samples', f)).map((doc) => ({ file: f, doc })))
  .filter(({ doc }) => doc.apiVersion === API_VERSION);
const invalid = readdirSync(join(root, 'test', 'fixtures', 'crds-invalid')).map((f) => ({
  file: f,
  doc: loadDocs(join(root, 'test', 'fixtures', 'crds-invalid', f))[0],
}));

const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true });
// ajv-formats is CommonJS: its function is the default export's default under NodeNext.
formats.default(ajv);
const validators = Object.fromEntries(
  Object.entries(crds).map(([kind, crd]) => [kind, ajv.compile(crd.spec.versions[0].schema.openAPIV3Schema)]),
) as Record<KindName, ReturnType<typeof ajv.compile>>;

/** Converts JSON to CEL input: objects as maps, integers as CEL ints. */
function toCel(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(toCel);
  }
  if (value && typeof value === 'object') {
    return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    return BigInt(value);
  }
  return value;
}

/** Runs every x-kubernetes-validations rule of the schema against the value, as the API server would. */
function celViolations(schema: Schema, value: unknown, path = 'spec'): string[] {
  if (value === undefined || value === null) {
    return [];
  }
  const out: string[] = [];
  for (const v of (schema['x-kubernetes-validations'] ?? []) as Array<{ rule: string; message: string }>) {
    const result = runCel(v.rule, { self: toCel(value) } as never);
    if (result !== true) {
      out.push(`${path}: ${v.message}`);
    }
  }
  if (schema.properties && typeof value === 'object') {
    for (const [k, s] of Object.entries(schema.properties as Record<string, Schema>)) {
      out.push(...celViolations(s, (value as Record<string, unknown>)[k], `${path}.${k}`));
    }
  }
  if (schema.items && Array.isArray(value)) {
    value.forEach((item, i) => out.push(...celViolations(schema.items, item, `${path}[${i}]`)));
  }
  return out;
}

/** Structural-schema rules of apiextensions.k8s.io/v1, the ones a hand-written schema can break. */
function structuralProblems(schema: Schema, path: string, inJunctor = false): string[] {
  const out: string[] = [];
  const junctors = ['anyOf', 'oneOf', 'allOf', 'not'];
  if (inJunctor) {
    for (const k of ['type', 'description', 'default', 'additionalProperties', 'nullable']) {
      if (k in schema) {
        out.push(`${path}: '${k}' inside a junctor`);
      }
    }
  } else if (
    !schema.type &&
    !schema['x-kubernetes-preserve-unknown-fields'] &&
    !schema['x-kubernetes-int-or-string']
  ) {
    out.push(`${path}: no type`);
  }
  for (const [k, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    out.push(...structuralProblems(s, `${path}.${k}`, inJunctor));
  }
  if (schema.items) {
    out.push(...structuralProblems(schema.items, `${path}[]`, inJunctor));
  }
  if (typeof schema.additionalProperties === 'object') {
    out.push(...structuralProblems(schema.additionalProperties, `${path}{}`, inJunctor));
  }
  for (const j of junctors) {
    const branches = j === 'not' ? (schema.not ? [schema.not] : []) : ((schema[j] ?? []) as Schema[]);
    for (const b of branches) {
      out.push(...structuralProblems(b, `${path}/${j}`, true));
      // every property a junctor names must exist in the structural part
      for (const name of Object.keys(b.properties ?? {})) {
        if (!inJunctor && !(schema.properties ?? {})[name]) {
          out.push(`${path}/${j}: property ${name} not declared outside`);
        }
      }
    }
  }
  return out;
}

const clone = <T>(v: T): T => structuredClone(v);

describe('CRDs', () => {
  for (const [kind, crd] of Object.entries(crds)) {
    describe(kind, () => {
      const version = crd.spec.versions[0];
      it('is namespaced verity.dev/v1alpha1 with a status subresource, short names and printer columns', () => {
        expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.verity.dev`);
        expect(crd.spec.scope).toBe('Namespaced');
        expect(version.name).toBe('v1alpha1');
        expect(version.subresources).toEqual({ status: {} });
        expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
        expect(version.additionalPrinterColumns.map((c: any) => c.name)).toEqual(
          expect.arrayContaining(['Ready', 'Age']),
        );
        const status = version.schema.openAPIV3Schema.properties.status.properties;
        expect(Object.keys(status)).toEqual(expect.arrayContaining(['conditions', 'observedGeneration']));
      });

      it('has a structural schema', () => {
        expect(structuralProblems(version.schema.openAPIV3Schema, kind)).toEqual([]);
      });
    });
  }

  it('shows Compliant for environments', () => {
    const cols = crds.Environment.spec.versions[0].additionalPrinterColumns.map((c: any) => c.name);
    expect(cols).toEqual(expect.arrayContaining(['Ready', 'Compliant', 'Age']));
  });
});

describe('samples', () => {
  it('covers every kind', () => {
    expect(new Set(samples.map((s) => s.doc.kind))).toEqual(new Set(Object.keys(KINDS)));
  });

  for (const { file, doc } of samples) {
    it(`${file} is accepted by the CRD schema, its CEL rules and the zod schema`, () => {
      const kind = doc.kind as KindName;
      const copy = clone(doc);
      const ok = validators[kind](copy);
      expect(validators[kind].errors ?? [], file).toEqual([]);
      expect(ok).toBe(true);
      const spec = crds[kind].spec.versions[0].schema.openAPIV3Schema.properties.spec;
      expect(celViolations(spec, copy.spec)).toEqual([]);
      const parsed = KINDS[kind].schema.safeParse(doc);
      expect(parsed.error?.issues ?? [], file).toEqual([]);
    });
  }
});

describe('invalid examples', () => {
  for (const { file, doc } of invalid) {
    it(`${file} is refused by the CRD (schema or CEL) and by the zod schema`, () => {
      const kind = doc.kind as KindName;
      const copy = clone(doc);
      const schemaOk = validators[kind](copy);
      const spec = crds[kind].spec.versions[0].schema.openAPIV3Schema.properties.spec;
      const cel = schemaOk ? celViolations(spec, copy.spec) : [];
      expect(schemaOk && cel.length === 0, `${file} passed the CRD`).toBe(false);
      expect(KINDS[kind].schema.safeParse(doc).success, `${file} passed zod`).toBe(false);
    });
  }

  it('refuses a wrong trigger for the type in the schema itself, not only in CEL', () => {
    const doc = invalid.find((i) => i.file === 'action-wrong-trigger.yaml')!.doc;
    expect(validators.Action(clone(doc))).toBe(false);
  });
});
