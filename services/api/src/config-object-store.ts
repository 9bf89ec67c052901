/**
 * The object store's settings (`VERITY_EVIDENCE_STORE`, `VERITY_S3_*`): their variables, the checks
 * between them, and the settings the S3 evidence store takes (object-store/s3-evidence-store.ts).
 */
import { z } from 'zod';
import { boolVar } from '../../shared/config.js';
import type { S3Settings } from './object-store/s3-evidence-store.js';

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const httpUrl = optionalString.refine(
  (v) => {
    if (v === undefined) {
      return true;
    }
    try {
      return ['http:', 'https:'].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  },
  { message: 'must be a URL (http:, https:)' },
);

export const OBJECT_STORE_VARIABLES = {
  VERITY_EVIDENCE_STORE: z.enum(['database', 's3']).optional().default('database'),
  VERITY_S3_BUCKET: optionalString.refine(
    (v) => v === undefined || /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(v),
    {
      message: 'must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens',
    },
  ),
  VERITY_S3_PREFIX: optionalString.refine(
    (v) => v === undefined || (v.length <= 512 && !v.startsWith('/') && !v.includes('//')),
    { message: 'must be at most 512 characters, not start with / nor hold //' },
  ),
  VERITY_S3_ENDPOINT: httpUrl,
  VERITY_S3_REGION: optionalString,
  VERITY_S3_FORCE_PATH_STYLE: boolVar(false),
  VERITY_S3_SSE: z.enum(['AES256', 'aws:kms', 'none']).optional().default('AES256'),
  VERITY_S3_KMS_KEY_ID: optionalString,
  VERITY_S3_OBJECT_LOCK: z.enum(['off', 'GOVERNANCE', 'COMPLIANCE']).optional().default('off'),
};

type ObjectStoreEnv = z.infer<z.ZodObject<typeof OBJECT_STORE_VARIABLES>>;

/** The object store's settings agree with each other. */
export function checkObjectStore(
  env: {
    VERITY_EVIDENCE_STORE: string;
    VERITY_S3_BUCKET?: string;
    VERITY_S3_SSE: string;
    VERITY_S3_KMS_KEY_ID?: string;
  },
  ctx: z.RefinementCtx,
): void {
  if (env.VERITY_EVIDENCE_STORE === 's3' && !env.VERITY_S3_BUCKET) {
    ctx.addIssue({
      code: 'custom',
      path: ['VERITY_S3_BUCKET'],
      message: 'is required when VERITY_EVIDENCE_STORE=s3 (the bucket that keeps evidence files)',
    });
  }
  if (env.VERITY_S3_KMS_KEY_ID && env.VERITY_S3_SSE !== 'aws:kms') {
    ctx.addIssue({
      code: 'custom',
      path: ['VERITY_S3_KMS_KEY_ID'],
      message: 'needs VERITY_S3_SSE=aws:kms (the key encrypts objects only under SSE-KMS)',
    });
  }
}

/** The object store's settings, when a bucket is named. */
export function s3SettingsOf(e: ObjectStoreEnv): S3Settings | undefined {
  if (!e.VERITY_S3_BUCKET) {
    return undefined;
  }
  const prefix = (e.VERITY_S3_PREFIX ?? '').replace(/\/+$/, '');
  return {
    bucket: e.VERITY_S3_BUCKET,
    prefix: prefix ? `${prefix}/` : '',
    endpoint: e.VERITY_S3_ENDPOINT,
    region: e.VERITY_S3_REGION,
    forcePathStyle: e.VERITY_S3_FORCE_PATH_STYLE,
    sse: e.VERITY_S3_SSE,
    kmsKeyId: e.VERITY_S3_KMS_KEY_ID,
    objectLock: e.VERITY_S3_OBJECT_LOCK,
  };
}
