/**
 * Flow templates (semantics.md section 3): YAML validated against the flow-template v1 JSON
 * Schema, with the line of each problem, and the parsed form compliance evaluates against.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LineCounter, isNode, parseDocument } from 'yaml';
import schema from './schemas/flow-template-v1.schema.json' with { type: 'json' };

export interface TemplateAttestation {
  name: string;
  type: string;
}
export interface TemplateArtifact {
  name: string;
  attestations: TemplateAttestation[];
}
/** A parsed template; an absent template behaves as the empty one (nothing can be MISSING). */
export interface FlowTemplate {
  version: 1;
  trail: { attestations: TemplateAttestation[]; artifacts: TemplateArtifact[] };
}

export const EMPTY_TEMPLATE: FlowTemplate = { version: 1, trail: { attestations: [], artifacts: [] } };

/** The YAML `--use-empty-template` uploads. */
export const EMPTY_TEMPLATE_YAML = 'version: 1\n';

export type TemplateParseResult = { ok: true; template: FlowTemplate } | { ok: false; problems: string[] };

const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: true });
const validate = ajv.compile(schema);

const TYPE_CHOICES = 'generic, junit, snyk, pull_request, jira, sonar, decision, custom:<name>, *';

function pathToString(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>(
    (out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part),
    '',
  );
}

/** Parses and validates template YAML; every problem names its line. */
export function parseFlowTemplate(yamlText: string): TemplateParseResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const lineOf = (offset: number | undefined) =>
    offset === undefined ? 1 : lineCounter.linePos(offset).line;
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => `line ${lineOf(e.pos[0])}: ${e.message.split('\n')[0] ?? e.message}`),
    };
  }
  const value: unknown = doc.toJS({ maxAliasCount: 50 });
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problems: ['line 1: the template must be a YAML mapping with `version: 1`'] };
  }
  const data = structuredClone(value) as Record<string, unknown>;
  const nodeLine = (path: Array<string | number>) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true);
      if (isNode(node)) {
        return lineOf(node.range?.[0]);
      }
    }
    return 1;
  };
  if (!validate(data)) {
    const problems = new Map<string, string>();
    for (const err of validate.errors ?? []) {
      const path = err.instancePath
        .split('/')
        .slice(1)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
      let reason: string;
      if (
        path[path.length - 1] === 'type' &&
        (err.keyword === 'anyOf' ||
          err.keyword === 'enum' ||
          err.keyword === 'const' ||
          err.keyword === 'pattern')
      ) {
        const got: unknown = doc.getIn(path);
        reason = `attestation type '${String(got)}' is not supported; use one of ${TYPE_CHOICES}`;
      } else if (err.keyword === 'additionalProperties') {
        reason = `unknown field '${String((err.params as { additionalProperty?: string }).additionalProperty)}'`;
      } else {
        reason = err.message ?? 'is invalid';
      }
      const where = pathToString(path) || '(template)';
      const key = `${nodeLine(path)}:${where}`;
      // anyOf reports every branch; keep the first, most readable reason per place.
      if (!problems.has(key)) {
        problems.set(key, `line ${nodeLine(path)}: ${where}: ${reason}`);
      }
    }
    return { ok: false, problems: [...problems.values()] };
  }
  const template = normalise(data);
  const duplicates = findDuplicateNames(template);
  if (duplicates.length > 0) {
    return {
      ok: false,
      problems: duplicates.map(({ path, name }) => `line ${nodeLine(path)}: duplicate name '${name}'`),
    };
  }
  const empty = findEmptyNames(template);
  if (empty.length > 0) {
    return { ok: false, problems: empty.map((path) => `line ${nodeLine(path)}: a name may not be empty`) };
  }
  return { ok: true, template };
}

function normalise(data: Record<string, unknown>): FlowTemplate {
  interface RawTrail {
    attestations?: TemplateAttestation[];
    artifacts?: Array<{ name: string; attestations?: TemplateAttestation[] }>;
  }
  const raw: unknown = data.trail;
  const trail = raw ? (raw as RawTrail) : null;
  return {
    version: 1,
    trail: {
      attestations: (trail?.attestations ?? []).map((a) => ({ name: a.name, type: a.type })),
      artifacts: (trail?.artifacts ?? []).map((a) => ({
        name: a.name,
        attestations: (a.attestations ?? []).map((x) => ({ name: x.name, type: x.type })),
      })),
    },
  };
}

function findDuplicateNames(t: FlowTemplate): Array<{ path: Array<string | number>; name: string }> {
  const out: Array<{ path: Array<string | number>; name: string }> = [];
  const check = (names: string[], base: Array<string | number>) => {
    const seen = new Set<string>();
    names.forEach((name, i) => {
      if (seen.has(name)) {
        out.push({ path: [...base, i, 'name'], name });
      }
      seen.add(name);
    });
  };
  check(
    t.trail.attestations.map((a) => a.name),
    ['trail', 'attestations'],
  );
  check(
    t.trail.artifacts.map((a) => a.name),
    ['trail', 'artifacts'],
  );
  t.trail.artifacts.forEach((a, i) =>
    check(
      a.attestations.map((x) => x.name),
      ['trail', 'artifacts', i, 'attestations'],
    ),
  );
  return out;
}

function findEmptyNames(t: FlowTemplate): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  t.trail.attestations.forEach((a, i) => {
    if (a.name.trim() === '') {
      out.push(['trail', 'attestations', i, 'name']);
    }
  });
  t.trail.artifacts.forEach((a, i) => {
    if (a.name.trim() === '') {
      out.push(['trail', 'artifacts', i, 'name']);
    }
    a.attestations.forEach((x, j) => {
      if (x.name.trim() === '') {
        out.push(['trail', 'artifacts', i, 'attestations', j, 'name']);
      }
    });
  });
  return out;
}

/** Reads a stored template back; anything malformed behaves as no template. */
export function templateOrEmpty(stored: unknown): FlowTemplate {
  if (stored && typeof stored === 'object' && 'trail' in stored) {
    return stored as FlowTemplate;
  }
  return EMPTY_TEMPLATE;
}
