/**
 * The custom resources the operator reconciles (verity.dev/v1alpha1), as zod schemas: the same
 * rules as the CRDs in crds/ (test/unit/crds.test.ts holds the two to the same samples).
 */
import { z } from 'zod';
import { ACTION_NAME_PATTERN, ENV_TRIGGERS, FLOW_TRIGGERS } from '../../shared/contract/actions.js';
import { ENVIRONMENT_TYPE_VALUES } from '../../shared/contract/environments.js';

export const GROUP = 'verity.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

const ENV_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
const RESOURCE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._~-]*$/;

export const ENVIRONMENT_TYPES = ENVIRONMENT_TYPE_VALUES;
export { ENV_TRIGGERS, FLOW_TRIGGERS };

/** The metadata the operator reads. */
export const ObjectMeta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  resourceVersion: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  finalizers: z.array(z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** A metav1.Condition. */
export const Condition = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.number().int().optional(),
  lastTransitionTime: z.string(),
  reason: z.string().regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
  message: z.string(),
});
export type Condition = z.infer<typeof Condition>;

const CommonStatus = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(Condition).optional(),
  lastReconciledAt: z.string().optional(),
  lastHandledReconcileAt: z.string().optional(),
});

const stringSet = (max: number) =>
  z
    .array(z.string().max(255))
    .max(max)
    .refine((a) => new Set(a).size === a.length, 'must not repeat a name');

/** What an in-cluster reporter following the Environment watches. */
export const ReportSelection = z
  .strictObject({
    namespaces: z.array(z.string().max(63)).max(256).optional(),
    namespacesRegex: z.array(z.string().max(512)).max(64).optional(),
    excludeNamespaces: z.array(z.string().max(63)).max(256).optional(),
    excludeNamespacesRegex: z.array(z.string().max(512)).max(64).optional(),
    labelSelector: z.string().max(1024).optional(),
  })
  .refine(
    (r) =>
      !(
        (r.namespaces?.length || r.namespacesRegex?.length) &&
        (r.excludeNamespaces?.length || r.excludeNamespacesRegex?.length)
      ),
    'include (namespaces, namespacesRegex) and exclude (excludeNamespaces, excludeNamespacesRegex) filters are mutually exclusive',
  );

/** Environment.spec */
export const EnvironmentSpec = z
  .strictObject({
    name: z.string().max(255).regex(ENV_NAME).optional(),
    type: z.enum(ENVIRONMENT_TYPES).default('K8S'),
    description: z.string().max(1024).default(''),
    policies: stringSet(64)
      .pipe(z.array(z.string().regex(RESOURCE_NAME)))
      .optional(),
    includedEnvironments: stringSet(256).optional(),
    tags: z.record(z.string(), z.string().max(1024)).optional(),
    report: ReportSelection.optional(),
    suspend: z.boolean().default(false),
  })
  .refine((s) => !s.includedEnvironments?.length || s.type === 'logical', {
    message: 'includedEnvironments is only for environments of type logical',
    path: ['includedEnvironments'],
  })
  .refine((s) => s.type !== 'logical' || !s.report, {
    message: 'a logical environment takes no reports',
    path: ['report'],
  });
export type EnvironmentSpec = z.infer<typeof EnvironmentSpec>;

export const EnvironmentStatus = CommonStatus.extend({
  lastSnapshot: z.number().int().optional(),
  compliant: z.boolean().nullable().optional(),
  lastReportedAt: z.string().optional(),
  policies: z.array(z.string()).optional(),
});

/** Policy.spec: `content` is the policy document as YAML text or as an object. */
export const PolicySpec = z.strictObject({
  name: z.string().max(255).regex(RESOURCE_NAME).optional(),
  description: z.string().max(1024).default(''),
  content: z.union([z.string().min(1), z.record(z.string(), z.unknown())]),
  comment: z.string().max(1024).default(''),
  suspend: z.boolean().default(false),
});
export type PolicySpec = z.infer<typeof PolicySpec>;

export const PolicyStatus = CommonStatus.extend({
  policyVersion: z.number().int().optional(),
  contentHash: z.string().optional(),
});

/** A reference to a key of a Secret in the resource's namespace. */
export const SecretKeyRef = z.strictObject({
  name: z.string().min(1).max(253),
  key: z.string().max(253).default('address'),
});

const url = z
  .string()
  .max(2048)
  .regex(/^https?:\/\//, 'must be an http(s) URL');
/** Action.spec.targets[] */
export const ActionTarget = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('SLACK'), webhookSecretRef: SecretKeyRef }),
  z
    .strictObject({
      type: z.literal('WEBHOOK'),
      webhook: url.optional(),
      webhookSecretRef: SecretKeyRef.optional(),
      payloadVersion: z.literal('1.0').default('1.0'),
    })
    .refine((t) => (t.webhook === undefined) !== (t.webhookSecretRef === undefined), {
      message: 'a WEBHOOK target needs exactly one of webhook and webhookSecretRef',
    }),
  z.strictObject({
    type: z.literal('EMAIL'),
    emails: z
      .array(
        z
          .string()
          .max(320)
          .regex(/^[^@\s]+@[^@\s]+$/),
      )
      .min(1)
      .max(50),
  }),
]);
export type ActionTarget = z.infer<typeof ActionTarget>;

const actionCommon = {
  name: z.string().max(255).regex(ACTION_NAME_PATTERN).optional(),
  targets: z.array(ActionTarget).min(1).max(20),
  suspend: z.boolean().default(false),
};
/** Action.spec: triggers must be those of its type; environments only for env, flows only for flow. */
export const ActionSpec = z.discriminatedUnion('type', [
  z.strictObject({
    ...actionCommon,
    type: z.literal('env'),
    environments: stringSet(256).optional(),
    triggers: z.array(z.enum(ENV_TRIGGERS)).min(1).max(11),
  }),
  z.strictObject({
    ...actionCommon,
    type: z.literal('flow'),
    flows: stringSet(256).optional(),
    triggers: z.array(z.enum(FLOW_TRIGGERS)).min(1).max(11),
  }),
]);
export type ActionSpec = z.infer<typeof ActionSpec>;

export const ActionStatus = CommonStatus.extend({ actionNumber: z.number().int().optional() });

const resource = <K extends string, S extends z.ZodType, T extends z.ZodType>(kind: K, spec: S, status: T) =>
  z.looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(kind),
    metadata: ObjectMeta,
    spec,
    status: status.optional(),
  });

export const EnvironmentResource = resource('Environment', EnvironmentSpec, EnvironmentStatus);
export const PolicyResource = resource('Policy', PolicySpec, PolicyStatus);
export const ActionResource = resource('Action', ActionSpec, ActionStatus);
export type EnvironmentResource = z.infer<typeof EnvironmentResource>;
export type PolicyResource = z.infer<typeof PolicyResource>;
export type ActionResource = z.infer<typeof ActionResource>;

/** The three kinds with their plural (the REST resource name) and schema. */
export const KINDS = {
  Environment: { plural: 'environments', schema: EnvironmentResource },
  Policy: { plural: 'policies', schema: PolicyResource },
  Action: { plural: 'actions', schema: ActionResource },
} as const;
export type KindName = keyof typeof KINDS;
