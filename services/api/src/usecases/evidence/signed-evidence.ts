/**
 * Signed evidence, verified on arrival: an attestation's evidence file that is a Sigstore bundle
 * (`application/vnd.dev.sigstore.bundle*`) or a bare DSSE envelope is verified offline with
 * `@sigstore/verify`, against the trusted root the operator gives
 * (`VERITY_SIGSTORE_TRUSTED_ROOT_FILE`: the public-good root or a private one) and the public
 * keys of keyed signatures (`VERITY_SIGSTORE_PUBLIC_KEYS_FILE`). Nothing here reaches the
 * network. A signed in-toto statement binds the attestation only if one of its subjects has the
 * artifact's SHA-256. A message-signature bundle (a signed blob) is refused, saying why: it signs
 * the artifact's bytes, which do not come with the attestation.
 *
 * The result is what the attestation shows (`signature`), and a failure says why; a file that
 * is not signed evidence has no result at all. Verification is bounded: files over
 * `MAX_SIGNED_EVIDENCE_BYTES` are not parsed, at most `MAX_SIGNATURES` signatures of an envelope
 * are tried, and one verification takes about a millisecond (no worker needed).
 */
import {
  bundleFromJSON,
  envelopeFromJSON,
  type Bundle,
  type Envelope,
  BUNDLE_V03_MEDIA_TYPE,
} from '@sigstore/bundle';
import { crypto as sigCrypto } from '@sigstore/core';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import {
  toSignedEntity,
  toTrustMaterial,
  Verifier,
  type KeyFinderFunc,
  type Signer,
  type TrustMaterial,
} from '@sigstore/verify';

/** The largest evidence file read as a bundle or envelope; a larger one is kept, unverified. */
export const MAX_SIGNED_EVIDENCE_BYTES = 1024 * 1024;
/** Signatures of one DSSE envelope tried at most. */
export const MAX_SIGNATURES = 8;
/** Public keys the keys file may list at most. */
export const MAX_PUBLIC_KEYS = 256;
/** Subjects of one in-toto statement read at most. */
export const MAX_SUBJECTS = 10_000;

const BUNDLE_MEDIA_TYPE_PREFIX = 'application/vnd.dev.sigstore.bundle';
const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** File names that say "signed evidence" even when the content cannot be read. */
const SIGNED_FILE_NAME = /\.(sigstore(\.json)?|dsse(\.json)?|intoto\.jsonl?)$/i;

export type SignatureKind = 'sigstore-bundle' | 'dsse';

/** What an attestation shows of its signed evidence. */
export interface SignatureResult {
  verified: boolean;
  kind: SignatureKind;
  /** Certificate: its subject alternative name (workflow URI, e-mail); keyed: the key's id. */
  identity: string | null;
  /** Certificate: the OIDC issuer Fulcio recorded; keyed: null. */
  issuer: string | null;
  /** Why it did not verify; null when it did. */
  reason: string | null;
}

/** The trust material verification uses, built once from the settings. */
export interface SignatureTrust {
  /** From the trusted root, with the keyed-signature keys as its key finder; null without a root. */
  material: TrustMaterial | null;
  /** Keyed-signature keys by id. */
  keys: ReadonlyMap<string, sigCrypto.KeyObject>;
  /** The root lists certificate-transparency logs: certificates must carry an SCT. */
  requireSct: boolean;
  /** The root lists transparency logs: bundles must carry a verified log entry. */
  requireTlog: boolean;
}

/** Why a setting cannot be used, in words for the configuration error. */
export class SignatureTrustError extends Error {}

/**
 * Builds the trust material from the trusted root's JSON (protobuf-specs `TrustedRoot`, as
 * `cosign trusted-root create` or the public-good TUF repository's `trusted_root.json` writes
 * it) and the keys file's JSON (`{"<key id>": "<PEM SPKI public key>", ...}`).
 */
export function buildSignatureTrust(
  trustedRootJson: string | undefined,
  publicKeysJson: string | undefined,
): SignatureTrust {
  const keys = new Map<string, sigCrypto.KeyObject>();
  if (publicKeysJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(publicKeysJson);
    } catch (err) {
      throw new SignatureTrustError(`the public keys file is not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SignatureTrustError('the public keys file must be a JSON object of key id to PEM public key');
    }
    const entries = Object.entries(parsed);
    if (entries.length > MAX_PUBLIC_KEYS) {
      throw new SignatureTrustError(`the public keys file lists more than ${MAX_PUBLIC_KEYS} keys`);
    }
    for (const [id, pem] of entries) {
      if (typeof pem !== 'string' || id.trim() === '') {
        throw new SignatureTrustError(`public key '${id}' must be a PEM string under a non-empty id`);
      }
      try {
        keys.set(id, sigCrypto.createPublicKey(pem));
      } catch (err) {
        throw new SignatureTrustError(`public key '${id}' is not a PEM public key: ${(err as Error).message}`);
      }
    }
  }
  const keyFinder: KeyFinderFunc = (hint) => {
    const key = keys.get(hint);
    if (!key) {
      throw new VerifyFailure(`the public key '${hint}' is not among the trusted keys`);
    }
    return { publicKey: key, validFor: () => true };
  };
  if (trustedRootJson === undefined) {
    return { material: null, keys, requireSct: false, requireTlog: false };
  }
  let root: TrustedRoot;
  try {
    root = TrustedRoot.fromJSON(JSON.parse(trustedRootJson));
  } catch (err) {
    throw new SignatureTrustError(`the trusted root is not a Sigstore trusted root: ${(err as Error).message}`);
  }
  let material: TrustMaterial;
  try {
    material = toTrustMaterial(root, keyFinder);
  } catch (err) {
    throw new SignatureTrustError(`the trusted root cannot be used: ${(err as Error).message}`);
  }
  if (material.certificateAuthorities.length === 0 && material.tlogs.length === 0) {
    throw new SignatureTrustError('the trusted root lists no certificate authority and no transparency log');
  }
  return {
    material,
    keys,
    requireSct: material.ctlogs.length > 0,
    requireTlog: material.tlogs.length > 0,
  };
}

/** A verification failure carrying its reason. */
class VerifyFailure extends Error {}

/** An evidence file as it arrived. */
export interface EvidenceFile {
  filename: string;
  data: Buffer;
}

type Detected =
  | { kind: 'sigstore-bundle'; json: Record<string, unknown> }
  | { kind: 'dsse'; json: Record<string, unknown> }
  | { kind: SignatureKind; problem: string };

/** Signed evidence among the file's content (by its media type and fields), or null when it is none. */
function detect(file: EvidenceFile): Detected | null {
  const named = SIGNED_FILE_NAME.test(file.filename);
  const namedKind: SignatureKind = /dsse|intoto/i.test(file.filename) ? 'dsse' : 'sigstore-bundle';
  if (file.data.length > MAX_SIGNED_EVIDENCE_BYTES) {
    const head = file.data.subarray(0, 64 * 1024).toString('utf8');
    const kind: SignatureKind | null = head.includes(BUNDLE_MEDIA_TYPE_PREFIX)
      ? 'sigstore-bundle'
      : /"payloadType"\s*:/.test(head) && /^\s*\{/.test(head)
        ? 'dsse'
        : named
          ? namedKind
          : null;
    return kind
      ? {
          kind,
          problem: `the file is ${file.data.length} bytes, more than the ${MAX_SIGNED_EVIDENCE_BYTES} read as signed evidence`,
        }
      : null;
  }
  let first = 0;
  while (first < file.data.length && /\s/.test(String.fromCharCode(file.data[first]!))) {
    first++;
  }
  if (file.data[first] !== 0x7b /* { */) {
    return named ? { kind: namedKind, problem: 'the file is not a JSON object' } : null;
  }
  let json: unknown;
  try {
    json = JSON.parse(file.data.toString('utf8'));
  } catch (err) {
    return named ? { kind: namedKind, problem: `the file is not JSON: ${(err as Error).message}` } : null;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return null;
  }
  const o = json as Record<string, unknown>;
  if (typeof o.mediaType === 'string' && o.mediaType.startsWith(BUNDLE_MEDIA_TYPE_PREFIX)) {
    return { kind: 'sigstore-bundle', json: o };
  }
  if (typeof o.payloadType === 'string' && typeof o.payload === 'string' && Array.isArray(o.signatures)) {
    return { kind: 'dsse', json: o };
  }
  return named ? { kind: namedKind, problem: 'the file is neither a Sigstore bundle nor a DSSE envelope' } : null;
}

/**
 * Verifies the file when it is signed evidence; null when it is not. `fingerprint` is the
 * artifact the attestation is for (null: none named).
 */
export function verifySignedEvidence(
  trust: SignatureTrust,
  file: EvidenceFile,
  fingerprint: string | null,
): SignatureResult | null {
  const found = detect(file);
  if (!found) {
    return null;
  }
  const failed = (reason: string, who: Partial<SignatureResult> = {}): SignatureResult => ({
    verified: false,
    kind: found.kind,
    identity: who.identity ?? null,
    issuer: who.issuer ?? null,
    reason,
  });
  if ('problem' in found) {
    return failed(found.problem);
  }
  try {
    const outcome =
      found.kind === 'sigstore-bundle' ? verifyBundle(trust, found.json) : verifyEnvelope(trust, found.json);
    const bound = bindsArtifact(outcome.envelope, fingerprint);
    if (bound !== null) {
      return failed(bound, outcome.who);
    }
    return { verified: true, kind: found.kind, ...outcome.who, reason: null };
  } catch (err) {
    return failed(describe(err));
  }
}

type Who = { identity: string | null; issuer: string | null };
type Verified = { who: Who; envelope: Envelope };

function verifyBundle(trust: SignatureTrust, json: Record<string, unknown>): Verified {
  let bundle: Bundle;
  try {
    bundle = bundleFromJSON(json);
  } catch (err) {
    throw new VerifyFailure(`malformed bundle: ${(err as Error).message}`);
  }
  if (bundle.content.$case !== 'dsseEnvelope') {
    throw new VerifyFailure(
      "a message-signature bundle signs the artifact's bytes, which do not come with the attestation: sign an in-toto statement (DSSE) instead",
    );
  }
  const envelope = bundle.content.dsseEnvelope;
  const keyed = bundle.verificationMaterial.content.$case === 'publicKey';
  if (!trust.material) {
    throw new VerifyFailure(
      'no trusted root is configured (VERITY_SIGSTORE_TRUSTED_ROOT_FILE): a bundle cannot be verified',
    );
  }
  const entity = toSignedEntity(bundle);
  const verifier = new Verifier(trust.material, {
    tlogThreshold: trust.requireTlog ? 1 : 0,
    ctlogThreshold: trust.requireSct && !keyed ? 1 : 0,
    // A certificate is checked at a time a log or timestamp authority vouches for.
    timestampThreshold: keyed ? 0 : 1,
  });
  const signer = verifier.verify(entity);
  const who: Who = keyed
    ? {
        identity:
          bundle.verificationMaterial.content.$case === 'publicKey'
            ? bundle.verificationMaterial.content.publicKey.hint
            : null,
        issuer: null,
      }
    : whoSigned(signer);
  return { who, envelope };
}

function whoSigned(signer: Signer): Who {
  return {
    identity: signer.identity?.subjectAlternativeName ?? null,
    issuer: signer.identity?.extensions?.issuer ?? null,
  };
}

/** A bare DSSE envelope: keyed, verified against the configured public keys (its keyid first). */
function verifyEnvelope(trust: SignatureTrust, json: Record<string, unknown>): Verified {
  let envelope: Envelope;
  try {
    envelope = envelopeFromJSON(json);
  } catch (err) {
    throw new VerifyFailure(`malformed DSSE envelope: ${(err as Error).message}`);
  }
  if (envelope.signatures.length === 0) {
    throw new VerifyFailure('the DSSE envelope has no signature');
  }
  if (trust.keys.size === 0) {
    throw new VerifyFailure(
      'no public keys are configured (VERITY_SIGSTORE_PUBLIC_KEYS_FILE): a DSSE envelope cannot be verified',
    );
  }
  for (const signature of envelope.signatures.slice(0, MAX_SIGNATURES)) {
    // A signature naming its key is tried with that key only; one naming none, with each.
    const candidates =
      signature.keyid === '' ? [...trust.keys.keys()] : trust.keys.has(signature.keyid) ? [signature.keyid] : [];
    for (const id of candidates) {
      if (verifyKeyed(trust, envelope, signature, id)) {
        return { who: { identity: id, issuer: null }, envelope };
      }
    }
  }
  const ids = envelope.signatures.map((s) => s.keyid).filter((k) => k !== '');
  const unknown = ids.filter((k) => !trust.keys.has(k));
  throw new VerifyFailure(
    unknown.length === ids.length && ids.length > 0
      ? `the envelope's key id${ids.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')} ${ids.length > 1 ? 'are' : 'is'} not among the trusted keys`
      : 'signature verification failed: no trusted key verifies the envelope',
  );
}

function verifyKeyed(
  trust: SignatureTrust,
  envelope: Envelope,
  signature: Envelope['signatures'][number],
  keyId: string,
): boolean {
  // One signature at a time, through the library's DSSE pre-authentication encoding.
  const single: Bundle = {
    mediaType: BUNDLE_V03_MEDIA_TYPE,
    verificationMaterial: {
      content: { $case: 'publicKey', publicKey: { hint: keyId } },
      tlogEntries: [],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    content: { $case: 'dsseEnvelope', dsseEnvelope: { ...envelope, signatures: [signature] } },
  };
  const material: TrustMaterial = trust.material ?? {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: (hint) => ({ publicKey: trust.keys.get(hint)!, validFor: () => true }),
  };
  try {
    new Verifier(material, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(
      toSignedEntity(single),
    );
    return true;
  } catch {
    return false;
  }
}

/** Null when the signed content is about the artifact; else why not. */
function bindsArtifact(envelope: Envelope, fingerprint: string | null): string | null {
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    return `the signed payload is '${envelope.payloadType}', not an in-toto statement (${IN_TOTO_PAYLOAD_TYPE})`;
  }
  let statement: unknown;
  try {
    statement = JSON.parse(envelope.payload.toString('utf8'));
  } catch {
    return 'the signed in-toto statement is not JSON';
  }
  const subjects = (statement as { subject?: unknown } | null)?.subject;
  if (!Array.isArray(subjects) || subjects.length === 0) {
    return 'the signed in-toto statement has no subject';
  }
  const digests = subjects
    .slice(0, MAX_SUBJECTS)
    .map((s) => (s as { digest?: { sha256?: unknown } } | null)?.digest?.sha256)
    .filter((d): d is string => typeof d === 'string')
    .map((d) => d.toLowerCase());
  if (fingerprint === null) {
    return 'the attestation names no artifact fingerprint to match the in-toto subjects against';
  }
  if (digests.includes(fingerprint)) {
    return null;
  }
  const shown = digests.slice(0, 3).map((d) => `sha256:${d}`);
  return `no in-toto subject has the artifact's fingerprint ${fingerprint} (subjects: ${
    shown.length > 0 ? shown.join(', ') : 'none with a sha256 digest'
  }${digests.length > 3 ? ', ...' : ''})`;
}

/** The library's error in words: its code's meaning and its message, with the cause's. */
function describe(err: unknown): string {
  if (err instanceof VerifyFailure) {
    return err.message;
  }
  const e = err as { code?: string; message?: string; cause?: { message?: string } };
  const message = e.message ?? String(err);
  const cause = e.cause?.message && e.cause.message !== message ? `: ${e.cause.message}` : '';
  const prefix = e.code ? `${e.code.toLowerCase().replace(/_/g, ' ')}: ` : '';
  return `${prefix}${message}${cause}`.slice(0, 500);
}
