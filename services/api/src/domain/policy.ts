/**
 * Environment policy files (semantics.md section 6): YAML, validated against the published JSON
 * Schema, with every `${{ ... }}` condition parsed by the expression grammar. Errors name the
 * line and the reason. The parsed form is what evaluation uses and what snapshots freeze.
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import { parseExpression, unwrapExpression, ExpressionError } from './policy-expression.js';
import { ENVIRONMENT_POLICY_SCHEMA_V1 } from './policy-schema-v1.js';
import { compileUserPattern, UserPatternError } from './user-pattern.js';

/** A condition as stored: its text, without the `${{ }}` wrapper. */
export interface Condition {
  text: string;
}

export interface BooleanRule {
  required: boolean;
  exceptions: Condition[];
}

export interface AttestationRule {
  name: string;
  type: string;
  if: Condition | null;
  mustBeCompliant: boolean;
  forControl: string | null;
}

/** Who may have signed: a certificate's issuer (exact) and identity (RE2 pattern), or a configured key's id. */
export type Signer = { issuer: string; identity: string } | { key: string };

/** The artifact must carry a verified signature by one of `signers`, unless an exception holds. */
export interface SignatureRule {
  signers: Signer[];
  exceptions: Condition[];
}

/** A validated policy. */
export interface ParsedPolicy {
  schemaVersion: '1';
  provenance: BooleanRule;
  trailCompliance: BooleanRule;
  attestations: AttestationRule[];
  /** Absent: no signature is required (and in policies saved before the rule existed). */
  signature?: SignatureRule;
}

export interface PolicyProblem {
  /** 1-based line in the file, when known. */
  line: number | null;
  /** Where in the document, e.g. `artifacts.attestations[0].type`. */
  path: string;
  message: string;
}

export type PolicyParseResult = { ok: true; policy: ParsedPolicy } | { ok: false; problems: PolicyProblem[] };

/** The `_schema` URLs of version 1 that published material uses. */
export const POLICY_SCHEMA_URLS = [
  'https://docs.kosli.com/schemas/policy/v1',
  'https://kosli.com/schemas/policy/environment/v1',
] as const;

const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: false });
addFormats.default(ajv);
const validateSchema = ajv.compile(ENVIRONMENT_POLICY_SCHEMA_V1);

type PathPart = string | number;

function renderPath(path: PathPart[]): string {
  let out = '';
  for (const p of path) {
    out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  }
  return out || '(document)';
}

function lineOf(doc: Document, counter: LineCounter, path: PathPart[]): number | null {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) {
      return counter.linePos(node.range[0]).line;
    }
  }
  return null;
}

function pointerToPath(pointer: string): PathPart[] {
  if (pointer === '') {
    return [];
  }
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function describeSchemaError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown key '${String((e.params as { additionalProperty: string }).additionalProperty)}'`;
    case 'required':
      return `missing required key '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    case 'anyOf':
      return 'is not one of the allowed values';
    default:
      return e.message ?? 'is invalid';
  }
}

/** Turns YAML `if: ${{ ... }}` strings into the schema's `{text}` form. */
function normaliseConditions(value: unknown): void {
  if (typeof value !== 'object' || value === null) {
    return;
  }
  const artifacts = (value as Record<string, unknown>).artifacts;
  if (typeof artifacts !== 'object' || artifacts === null) {
    return;
  }
  const fix = (holder: unknown) => {
    if (typeof holder !== 'object' || holder === null) {
      return;
    }
    const h = holder as Record<string, unknown>;
    if (typeof h.if === 'string') {
      h.if = { text: unwrapExpression(h.if) };
    }
  };
  const a = artifacts as Record<string, unknown>;
  for (const key of ['provenance', 'trail-compliance', 'signature']) {
    const rule = a[key];
    if (typeof rule === 'object' && rule !== null) {
      const exceptions = (rule as Record<string, unknown>).exceptions;
      if (Array.isArray(exceptions)) {
        exceptions.forEach(fix);
      }
    }
  }
  if (Array.isArray(a.attestations)) {
    a.attestations.forEach(fix);
  }
}

/** The longest policy file accepted. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/** The stored policy file as the schema accepts it, before its conditions are parsed. */
interface RawPolicy {
  _schema: string;
  artifacts?: {
    provenance?: { required?: boolean; exceptions?: Array<{ if?: Condition | null }> };
    'trail-compliance'?: { required?: boolean; exceptions?: Array<{ if?: Condition | null }> };
    attestations?: Array<{
      name?: string;
      type: string;
      if?: Condition | null;
      must_be_compliant?: boolean;
      for_control?: string | null;
    }>;
    signature?: { signers: Signer[]; exceptions?: Array<{ if?: Condition | null }> };
  };
}

/** Records a problem at a path of the document. */
type ReportAt = (path: PathPart[], message: string) => void;

/** The YAML document and its value when the text is a YAML mapping; the problems otherwise. */
function readMapping(
  text: string,
): { doc: Document; counter: LineCounter; value: object } | { problems: PolicyProblem[] } {
  if (text.length > MAX_POLICY_BYTES) {
    return {
      problems: [{ line: null, path: '(document)', message: 'the policy file is larger than 1 MiB' }],
    };
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((e) => ({
        line: e.linePos?.[0]?.line ?? null,
        path: '(document)',
        message: `invalid YAML: ${e.message.split('\n')[0]}`,
      })),
    };
  }
  const value: unknown = doc.toJS({ maxAliasCount: 50 });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problems: [{ line: 1, path: '(document)', message: 'a policy must be a YAML mapping' }] };
  }
  return { doc, counter, value };
}

/** Reports the schema's errors, one line per place (anyOf reports every branch it tried there). */
function reportSchemaErrors(errors: ErrorObject[], at: ReportAt): void {
  const anyOfAt = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const seen = new Set<string>();
  for (const e of errors) {
    if (anyOfAt.has(e.instancePath) && e.keyword !== 'anyOf') {
      continue;
    }
    const message = describeSchemaError(e);
    const key = `${e.instancePath}|${message}`;
    if (seen.has(key)) {
      continue;
    }
    seen.add(key);
    at(pointerToPath(e.instancePath), message);
  }
}

/** The parsed rules of a schema-valid policy; problems in its conditions and rules go to `at`. */
function buildPolicy(raw: RawPolicy, at: ReportAt): ParsedPolicy {
  const version = /\/v(\d+)\/?$/.exec(raw._schema);
  if (!version) {
    at(['_schema'], `'${raw._schema}' must end with /v1 (e.g. ${POLICY_SCHEMA_URLS[0]})`);
  } else if (version[1] !== '1') {
    at(['_schema'], `schema version v${version[1]} is not supported; use v1`);
  }
  const condition = (c: Condition | null | undefined, path: PathPart[]): Condition | null => {
    if (c === null || c === undefined) {
      return null;
    }
    try {
      parseExpression(c.text);
    } catch (err) {
      at(path, err instanceof ExpressionError ? `invalid condition: ${err.message}` : String(err));
    }
    return { text: c.text };
  };
  const booleanRule = (key: 'provenance' | 'trail-compliance'): BooleanRule => {
    const rule = raw.artifacts?.[key];
    const exceptions: Condition[] = [];
    (rule?.exceptions ?? []).forEach((e, i) => {
      const c = condition(e.if, ['artifacts', key, 'exceptions', i, 'if']);
      if (c) {
        exceptions.push(c);
      }
    });
    return { required: rule?.required ?? false, exceptions };
  };
  const provenance = booleanRule('provenance');
  const trailCompliance = booleanRule('trail-compliance');
  const attestations = (raw.artifacts?.attestations ?? []).map((a, i): AttestationRule => {
    const name = a.name ?? '*';
    if (name === '*' && a.type === '*') {
      at(['artifacts', 'attestations', i], "name and type cannot both be '*'");
    }
    if (a.for_control !== undefined && a.for_control !== null && a.type !== 'decision') {
      at(['artifacts', 'attestations', i, 'for_control'], "for_control is only valid with type 'decision'");
    }
    return {
      name,
      type: a.type,
      if: condition(a.if, ['artifacts', 'attestations', i, 'if']),
      mustBeCompliant: a.must_be_compliant ?? true,
      forControl: a.for_control ?? null,
    };
  });
  const signature = signatureRule(raw.artifacts?.signature, condition, at);
  return {
    schemaVersion: '1',
    provenance,
    trailCompliance,
    attestations,
    ...(signature ? { signature } : {}),
  };
}

/** The signature rule, its identity patterns compiled (RE2) so that a bad one is reported where it is. */
function signatureRule(
  raw: NonNullable<RawPolicy['artifacts']>['signature'],
  condition: (c: Condition | null | undefined, path: PathPart[]) => Condition | null,
  at: ReportAt,
): SignatureRule | null {
  if (!raw) {
    return null;
  }
  raw.signers.forEach((s, i) => {
    if ('identity' in s) {
      try {
        compileUserPattern(s.identity);
      } catch (err) {
        if (!(err instanceof UserPatternError)) {
          throw err;
        }
        at(['artifacts', 'signature', 'signers', i, 'identity'], `invalid pattern: ${err.message}`);
      }
    }
  });
  const exceptions: Condition[] = [];
  (raw.exceptions ?? []).forEach((e, i) => {
    const c = condition(e.if, ['artifacts', 'signature', 'exceptions', i, 'if']);
    if (c) {
      exceptions.push(c);
    }
  });
  const signers = raw.signers.map((s): Signer =>
    'key' in s ? { key: s.key } : { issuer: s.issuer, identity: s.identity },
  );
  return { signers, exceptions };
}

/** Parses and validates a policy file (section 6); every problem is reported with its line. */
export function parsePolicyYaml(text: string): PolicyParseResult {
  const read = readMapping(text);
  if ('problems' in read) {
    return { ok: false, problems: read.problems };
  }
  const { doc, counter, value } = read;
  normaliseConditions(value);
  const problems: PolicyProblem[] = [];
  const at: ReportAt = (path, message) =>
    problems.push({ line: lineOf(doc, counter, path), path: renderPath(path), message });
  if (!validateSchema(value)) {
    reportSchemaErrors(validateSchema.errors ?? [], at);
    return { ok: false, problems };
  }
  const policy = buildPolicy(value, at);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, policy };
}

/** One-line text of a problem, e.g. `line 7: artifacts.attestations[0].type: is not one of the allowed values`. */
export function formatPolicyProblem(p: PolicyProblem): string {
  return `${p.line !== null ? `line ${p.line}: ` : ''}${p.path}: ${p.message}`;
}

/** The stored form the interface shows as `policy_dump` (reference: live snapshot). */
export function policyDump(policy: ParsedPolicy): Record<string, unknown> {
  const exceptions = (r: BooleanRule) => r.exceptions.map((e) => ({ if_condition: { text: e.text } }));
  return {
    schema_version: policy.schemaVersion,
    artifacts: {
      provenance: { required: policy.provenance.required, exceptions: exceptions(policy.provenance) },
      trail_compliance: {
        required: policy.trailCompliance.required,
        exceptions: exceptions(policy.trailCompliance),
      },
      attestations: policy.attestations.map((a) => ({
        if_condition: a.if ? { text: a.if.text } : null,
        name: a.name,
        type: a.type,
        must_be_compliant: a.mustBeCompliant,
        ...(a.forControl ? { for_control: a.forControl } : {}),
      })),
      ...(policy.signature
        ? {
            signature: {
              signers: policy.signature.signers,
              exceptions: policy.signature.exceptions.map((e) => ({ if_condition: { text: e.text } })),
            },
          }
        : {}),
    },
  };
}
