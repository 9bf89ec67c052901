/**
 * The JSON Schema of environment policy files, version 1, as published with the interface
 * (reference/schemas/environment-policy-v1.schema.json): the same content, with the repeated
 * `if` property named once.
 */

/** An `if` property: a condition, or null for none. */
const OptionalCondition = {
  anyOf: [
    {
      $ref: '#/$defs/PolicyExpression',
    },
    {
      type: 'null',
    },
  ],
  default: null,
} as const;

export const ENVIRONMENT_POLICY_SCHEMA_V1 = {
  $defs: {
    BooleanRule: {
      additionalProperties: false,
      properties: {
        required: {
          default: false,
          title: 'Required',
          type: 'boolean',
        },
        exceptions: {
          default: [],
          items: {
            $ref: '#/$defs/ConditionalRule',
          },
          title: 'Exceptions',
          type: 'array',
        },
      },
      title: 'BooleanRule',
      type: 'object',
    },
    ConditionalRule: {
      additionalProperties: false,
      properties: {
        if: OptionalCondition,
      },
      title: 'ConditionalRule',
      type: 'object',
    },
    PolicyArtifacts: {
      additionalProperties: false,
      description:
        'Rules for artifacts in an environment snapshot. Omitted keys use server defaults (provenance/trail-compliance: required false, empty exceptions; attestations: []).',
      properties: {
        provenance: {
          $ref: '#/$defs/BooleanRule',
          default: {
            required: false,
            exceptions: [],
          },
        },
        'trail-compliance': {
          $ref: '#/$defs/BooleanRule',
          default: {
            required: false,
            exceptions: [],
          },
        },
        attestations: {
          default: [],
          items: {
            $ref: '#/$defs/RequiredAttestationRule',
          },
          title: 'Attestations',
          type: 'array',
        },
        signature: {
          $ref: '#/$defs/SignatureRule',
        },
      },
      title: 'PolicyArtifacts',
      type: 'object',
    },
    SignatureRule: {
      additionalProperties: false,
      description:
        'Verity: the artifact must carry an attestation whose signed evidence (Sigstore bundle or DSSE envelope) verified, signed by one of the signers.',
      properties: {
        signers: {
          items: {
            $ref: '#/$defs/Signer',
          },
          minItems: 1,
          maxItems: 50,
          title: 'Signers',
          type: 'array',
        },
        exceptions: {
          default: [],
          items: {
            $ref: '#/$defs/ConditionalRule',
          },
          title: 'Exceptions',
          type: 'array',
        },
      },
      required: ['signers'],
      title: 'SignatureRule',
      type: 'object',
    },
    Signer: {
      anyOf: [
        {
          additionalProperties: false,
          description:
            'A certificate signer: the OIDC issuer the certificate records (exact) and its identity (RE2 pattern over the subject alternative name; anchor it with ^ and $).',
          properties: {
            issuer: { type: 'string', minLength: 1, maxLength: 1024 },
            identity: { type: 'string', minLength: 1, maxLength: 512 },
          },
          required: ['issuer', 'identity'],
          type: 'object',
        },
        {
          additionalProperties: false,
          description: 'A keyed signer: the id of a configured public key (exact).',
          properties: {
            key: { type: 'string', minLength: 1, maxLength: 256 },
          },
          required: ['key'],
          type: 'object',
        },
      ],
      title: 'Signer',
    },
    PolicyExpression: {
      description:
        'Boolean expression evaluated against flow/artifact context. In YAML this is often written as a string wrapped in ${{ ... }}.',
      properties: {
        text: {
          title: 'Text',
          type: 'string',
        },
      },
      required: ['text'],
      title: 'PolicyExpression',
      type: 'object',
    },
    RequiredAttestationRule: {
      additionalProperties: false,
      properties: {
        if: OptionalCondition,
        name: {
          default: '*',
          description: 'Attestation name; default * matches any.',
          title: 'Name',
          type: 'string',
        },
        type: {
          anyOf: [
            {
              enum: ['generic', 'junit', 'snyk', 'pull_request', 'jira', 'sonar'],
              type: 'string',
            },
            {
              pattern: '^custom:.*$',
              type: 'string',
            },
            {
              const: 'decision',
              type: 'string',
            },
            {
              const: '*',
              type: 'string',
            },
          ],
          description: 'Built-in attestation type, custom:... reference, or wildcard *.',
          title: 'Type',
        },
        must_be_compliant: {
          default: true,
          title: 'Must Be Compliant',
          type: 'boolean',
        },
        for_control: {
          anyOf: [
            {
              type: 'string',
            },
            {
              type: 'null',
            },
          ],
          default: null,
          description:
            "Control identifier this decision attestation must satisfy. Only valid when type is 'decision'.",
          title: 'For Control',
        },
      },
      required: ['type'],
      title: 'RequiredAttestationRule',
      type: 'object',
    },
  },
  additionalProperties: false,
  properties: {
    artifacts: {
      $ref: '#/$defs/PolicyArtifacts',
      default: {
        provenance: {
          exceptions: [],
          required: false,
        },
        'trail-compliance': {
          exceptions: [],
          required: false,
        },
        attestations: [],
      },
    },
    _schema: {
      type: 'string',
      format: 'uri',
      description:
        'URL of this schema. The path must end with /v{n} where n is the major version (e.g. .../v1). Example: https://docs.kosli.com/schemas/policy/v1',
    },
  },
  required: ['_schema'],
  title: 'Kosli Environment Policy',
  type: 'object',
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://docs.kosli.com/schemas/policy/v1',
  description: 'Schema for Kosli environment policy YAML files used with `kosli create policy`.',
} as const;
