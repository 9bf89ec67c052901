// @ts-check
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
 * and `MAX_SUBJECTS` subjects of a statement are read. A bundle costs milliseconds of CPU (the
 * certificate chain, the log's promise and checkpoint, the signature), so the API runs it in a
 * worker thread (signature-verifier.worker.mjs).
 *
 * Plain JavaScript (type-checked from JSDoc), so that the worker runs the same file from the
 * sources (tsx, vitest) and from the compiled image.
 */
import { Buffer } from 'node:buffer';
import { bundleFromJSON, envelopeFromJSON, BUNDLE_V03_MEDIA_TYPE } from '@sigstore/bundle';
import { crypto as sigCrypto } from '@sigstore/core';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';

/**
 * @typedef {import('@sigstore/bundle').Bundle} Bundle
 * @typedef {import('@sigstore/bundle').Envelope} Envelope
 * @typedef {import('@sigstore/verify').TrustMaterial} TrustMaterial
 * @typedef {import('@sigstore/verify').Signer} Signer
 * @typedef {'sigstore-bundle' | 'dsse'} SignatureKind
 * @typedef {{ verified: boolean; kind: SignatureKind; identity: string | null; issuer: string | null;
 *   reason: string | null }} SignatureResult
 *   What an attestation shows of its signed evidence. `identity`: a certificate's subject
 *   alternative name (workflow URI, e-mail), or a keyed signature's key id; `issuer`: the OIDC
 *   issuer the certificate records (null for keys); `reason`: why it did not verify.
 * @typedef {{ material: TrustMaterial | null; keys: ReadonlyMap<string, import('node:crypto').KeyObject>;
 *   requireSct: boolean; requireTlog: boolean }} SignatureTrust
 *   The trust material (null without a trusted root), the keyed-signature keys by id, and
 *   whether the root lists certificate-transparency logs (certificates must carry an SCT) and
 *   transparency logs (bundles must carry a verified log entry).
 * @typedef {{ filename: string; data: Uint8Array }} EvidenceFile
 * @typedef {{ identity: string | null; issuer: string | null }} Who
 */

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
/** How much of a file's start is looked at to tell signed evidence. */
const HEAD_BYTES = 64 * 1024;

/** Why a setting cannot be used, in words for the configuration error. */
export class SignatureTrustError extends Error {}

/** A verification failure carrying its reason. */
class VerifyFailure extends Error {}

/**
 * Builds the trust material from the trusted root's JSON (protobuf-specs `TrustedRoot`, as
 * `cosign trusted-root create` or the public-good TUF repository's `trusted_root.json` writes
 * it) and the keys file's JSON (`{"<key id>": "<PEM SPKI public key>", ...}`).
 * @param {string | undefined} trustedRootJson
 * @param {string | undefined} publicKeysJson
 * @returns {SignatureTrust}
 */
export function buildSignatureTrust(trustedRootJson, publicKeysJson) {
  /** @type {Map<string, import('node:crypto').KeyObject>} */
  const keys = new Map();
  if (publicKeysJson !== undefined) {
    /** @type {unknown} */
    let parsed;
    try {
      parsed = JSON.parse(publicKeysJson);
    } catch (err) {
      throw new SignatureTrustError(`the public keys file is not JSON: ${errMessage(err)}`);
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
        throw new SignatureTrustError(`public key '${id}' is not a PEM public key: ${errMessage(err)}`);
      }
    }
  }
  /** @type {import('@sigstore/verify').KeyFinderFunc} */
  const keyFinder = (hint) => {
    const key = keys.get(hint);
    if (!key) {
      throw new VerifyFailure(`the public key '${hint}' is not among the trusted keys`);
    }
    return { publicKey: key, validFor: () => true };
  };
  if (trustedRootJson === undefined) {
    return { material: null, keys, requireSct: false, requireTlog: false };
  }
  /** @type {TrustMaterial} */
  let material;
  try {
    material = toTrustMaterial(TrustedRoot.fromJSON(JSON.parse(trustedRootJson)), keyFinder);
  } catch (err) {
    throw new SignatureTrustError(
      `the trusted root is not a usable Sigstore trusted root: ${errMessage(err)}`,
    );
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

/**
 * The kind of signed evidence the file looks like, from its name and the start of its content
 * (a media type, DSSE fields); null when it looks like none. Cheap: no parsing.
 * @param {EvidenceFile} file
 * @returns {SignatureKind | null}
 */
export function looksSigned(file) {
  const head = Buffer.from(file.data.subarray(0, HEAD_BYTES)).toString('utf8');
  if (/^\s*\{/.test(head)) {
    if (head.includes(BUNDLE_MEDIA_TYPE_PREFIX)) {
      return 'sigstore-bundle';
    }
    if (/"payloadType"\s*:/.test(head)) {
      return 'dsse';
    }
  }
  if (SIGNED_FILE_NAME.test(file.filename)) {
    return /dsse|intoto/i.test(file.filename) ? 'dsse' : 'sigstore-bundle';
  }
  return null;
}

/**
 * Why a file of `size` bytes is not read as signed evidence.
 * @param {number} size
 */
export function oversize(size) {
  return `the file is ${size} bytes, more than the ${MAX_SIGNED_EVIDENCE_BYTES} read as signed evidence`;
}

/**
 * @typedef {{ kind: SignatureKind; json: Record<string, unknown> } | { kind: SignatureKind; problem: string }} Detected
 */

/**
 * Signed evidence among the file's content (by its media type and fields), or null when it is none.
 * @param {EvidenceFile} file
 * @returns {Detected | null}
 */
function detect(file) {
  const guess = looksSigned(file);
  if (guess === null) {
    return null;
  }
  if (file.data.length > MAX_SIGNED_EVIDENCE_BYTES) {
    return { kind: guess, problem: oversize(file.data.length) };
  }
  /** @type {unknown} */
  let json;
  try {
    json = JSON.parse(Buffer.from(file.data).toString('utf8'));
  } catch (err) {
    return { kind: guess, problem: `the file is not JSON: ${errMessage(err)}` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { kind: guess, problem: 'the file is not a JSON object' };
  }
  const o = /** @type {Record<string, unknown>} */ (json);
  if (typeof o.mediaType === 'string' && o.mediaType.startsWith(BUNDLE_MEDIA_TYPE_PREFIX)) {
    return { kind: 'sigstore-bundle', json: o };
  }
  if (typeof o.payloadType === 'string' && typeof o.payload === 'string' && Array.isArray(o.signatures)) {
    return { kind: 'dsse', json: o };
  }
  // Named like signed evidence, or mentioning a media type in passing: neither form inside.
  return SIGNED_FILE_NAME.test(file.filename)
    ? { kind: guess, problem: 'the file is neither a Sigstore bundle nor a DSSE envelope' }
    : null;
}

/**
 * Verifies the file when it is signed evidence; null when it is not. `fingerprint` is the
 * artifact the attestation is for (null: none named).
 * @param {SignatureTrust} trust
 * @param {EvidenceFile} file
 * @param {string | null} fingerprint
 * @returns {SignatureResult | null}
 */
export function verifySignedEvidence(trust, file, fingerprint) {
  const found = detect(file);
  if (!found) {
    return null;
  }
  /**
   * @param {string} reason
   * @param {Who} [who]
   * @returns {SignatureResult}
   */
  const failed = (reason, who) => ({
    verified: false,
    kind: found.kind,
    identity: who?.identity ?? null,
    issuer: who?.issuer ?? null,
    reason,
  });
  if ('problem' in found) {
    return failed(found.problem);
  }
  try {
    const outcome =
      found.kind === 'sigstore-bundle' ? verifyBundle(trust, found.json) : verifyEnvelope(trust, found.json);
    const unbound = bindsArtifact(outcome.envelope, fingerprint);
    if (unbound !== null) {
      return failed(unbound, outcome.who);
    }
    return { verified: true, kind: found.kind, ...outcome.who, reason: null };
  } catch (err) {
    return failed(describe(err));
  }
}

/**
 * @param {SignatureTrust} trust
 * @param {Record<string, unknown>} json
 * @returns {{ who: Who; envelope: Envelope }}
 */
function verifyBundle(trust, json) {
  /** @type {Bundle} */
  let bundle;
  try {
    bundle = bundleFromJSON(json);
  } catch (err) {
    const fields = /** @type {{ fields?: string[] }} */ (err).fields;
    throw new VerifyFailure(
      `malformed bundle: ${errMessage(err)}${fields?.length ? ` (${fields.join(', ')})` : ''}`,
    );
  }
  if (bundle.content.$case !== 'dsseEnvelope') {
    throw new VerifyFailure(
      "a message-signature bundle signs the artifact's bytes, which do not come with the attestation: sign an in-toto statement (DSSE) instead",
    );
  }
  const envelope = bundle.content.dsseEnvelope;
  const material = bundle.verificationMaterial.content;
  if (!trust.material) {
    throw new VerifyFailure(
      'no trusted root is configured (VERITY_SIGSTORE_TRUSTED_ROOT_FILE): a bundle cannot be verified',
    );
  }
  const keyed = material.$case === 'publicKey';
  const verifier = new Verifier(trust.material, {
    tlogThreshold: trust.requireTlog ? 1 : 0,
    ctlogThreshold: trust.requireSct && !keyed ? 1 : 0,
    // A certificate is checked at a time a log or a timestamp authority vouches for.
    timestampThreshold: keyed ? 0 : 1,
  });
  const signer = verifier.verify(toSignedEntity(bundle));
  /** @type {Who} */
  const who =
    material.$case === 'publicKey'
      ? { identity: material.publicKey.hint, issuer: null }
      : {
          identity: signer.identity?.subjectAlternativeName ?? null,
          issuer: signer.identity?.extensions?.issuer ?? null,
        };
  return { who, envelope };
}

/**
 * A bare DSSE envelope: keyed, verified against the configured public keys (the one its
 * signature names, or each when it names none).
 * @param {SignatureTrust} trust
 * @param {Record<string, unknown>} json
 * @returns {{ who: Who; envelope: Envelope }}
 */
function verifyEnvelope(trust, json) {
  /** @type {Envelope} */
  let envelope;
  try {
    envelope = envelopeFromJSON(json);
  } catch (err) {
    throw new VerifyFailure(`malformed DSSE envelope: ${errMessage(err)}`);
  }
  if (envelope.signatures.length === 0) {
    throw new VerifyFailure('the DSSE envelope has no signature');
  }
  if (trust.keys.size === 0) {
    throw new VerifyFailure(
      'no public keys are configured (VERITY_SIGSTORE_PUBLIC_KEYS_FILE): a DSSE envelope cannot be verified',
    );
  }
  const signatures = envelope.signatures.slice(0, MAX_SIGNATURES);
  for (const signature of signatures) {
    const candidates =
      signature.keyid === ''
        ? [...trust.keys.keys()]
        : trust.keys.has(signature.keyid)
          ? [signature.keyid]
          : [];
    for (const id of candidates) {
      if (verifyKeyed(trust, envelope, signature, id)) {
        return { who: { identity: id, issuer: null }, envelope };
      }
    }
  }
  const ids = signatures.map((s) => s.keyid).filter((k) => k !== '');
  if (ids.length === signatures.length && ids.every((k) => !trust.keys.has(k))) {
    const named = ids.map((k) => `'${k}'`).join(', ');
    throw new VerifyFailure(
      `the envelope's key id${ids.length > 1 ? 's' : ''} ${named} ${ids.length > 1 ? 'are' : 'is'} not among the trusted keys`,
    );
  }
  throw new VerifyFailure('signature verification failed: no trusted key verifies the envelope');
}

/**
 * One signature checked with one key, through the library's DSSE pre-authentication encoding.
 * @param {SignatureTrust} trust
 * @param {Envelope} envelope
 * @param {Envelope['signatures'][number]} signature
 * @param {string} keyId
 */
function verifyKeyed(trust, envelope, signature, keyId) {
  /** @type {Bundle} */
  const single = {
    mediaType: BUNDLE_V03_MEDIA_TYPE,
    verificationMaterial: {
      content: { $case: 'publicKey', publicKey: { hint: keyId } },
      tlogEntries: [],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    content: { $case: 'dsseEnvelope', dsseEnvelope: { ...envelope, signatures: [signature] } },
  };
  const key = /** @type {import('node:crypto').KeyObject} */ (trust.keys.get(keyId));
  /** @type {TrustMaterial} */
  const material = {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: () => ({ publicKey: key, validFor: () => true }),
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

/**
 * Null when the signed statement is about the artifact; else why not.
 * @param {Envelope} envelope
 * @param {string | null} fingerprint
 * @returns {string | null}
 */
function bindsArtifact(envelope, fingerprint) {
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    return `the signed payload is '${envelope.payloadType}', not an in-toto statement (${IN_TOTO_PAYLOAD_TYPE})`;
  }
  /** @type {unknown} */
  let statement;
  try {
    statement = JSON.parse(envelope.payload.toString('utf8'));
  } catch {
    return 'the signed in-toto statement is not JSON';
  }
  const subjects = /** @type {{ subject?: unknown } | null} */ (statement)?.subject;
  if (!Array.isArray(subjects) || subjects.length === 0) {
    return 'the signed in-toto statement has no subject';
  }
  if (fingerprint === null) {
    return 'the attestation names no artifact fingerprint to match the in-toto subjects against';
  }
  const digests = subjects
    .slice(0, MAX_SUBJECTS)
    .map(
      (/** @type {unknown} */ s) =>
        /** @type {{ digest?: { sha256?: unknown } } | null} */ (s)?.digest?.sha256,
    )
    .filter(/** @returns {d is string} */ (d) => typeof d === 'string')
    .map((d) => d.toLowerCase());
  if (digests.includes(fingerprint)) {
    return null;
  }
  const shown = digests.slice(0, 3).map((d) => `sha256:${d}`);
  return `no in-toto subject has the artifact's fingerprint ${fingerprint} (subjects: ${
    shown.length > 0 ? shown.join(', ') : 'none with a sha256 digest'
  }${digests.length > 3 ? ', ...' : ''})`;
}

/** @param {unknown} err */
function errMessage(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The library's error in words: its code, its message and its cause's.
 * @param {unknown} err
 */
function describe(err) {
  if (err instanceof VerifyFailure) {
    return err.message;
  }
  const e = /** @type {{ code?: string; cause?: unknown }} */ (err);
  const message = errMessage(err);
  const causeMessage = e.cause ? errMessage(e.cause) : '';
  const cause = causeMessage && causeMessage !== message ? `: ${causeMessage}` : '';
  const prefix = typeof e.code === 'string' ? `${e.code.toLowerCase().replace(/_/g, ' ')}: ` : '';
  return `${prefix}${message}${cause}`.slice(0, 500);
}
