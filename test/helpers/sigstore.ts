/**
 * Sigstore bundles and DSSE envelopes built the way Fulcio, Rekor and cosign build them, over the
 * private trust material of test/fixtures/sigstore (make.sh): a root CA and intermediate, a leaf
 * certificate for a GitHub Actions workflow identity, a Rekor-like log key that signs each entry's
 * inclusion promise (SET), a second CA nobody trusts, and a key for keyed signatures. Written
 * here from the Sigstore specifications (bundle v0.3, Rekor `dsse` v0.0.1 entries, DSSE PAE),
 * not with the server's code.
 */
import { createHash, createPrivateKey, createPublicKey, sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(import.meta.dirname, '../fixtures/sigstore');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const der = (pem: string) => new X509Certificate(pem).raw;
const spki = (pem: string) => createPublicKey(pem).export({ format: 'der', type: 'spki' });

export const IDENTITY = 'https://github.com/acme/shop/.github/workflows/release.yml@refs/heads/main';
export const ISSUER = 'https://token.actions.githubusercontent.com';
export const KEY_ID = 'release-key';
export const IN_TOTO = 'application/vnd.in-toto+json';

const rekorPub = read('rekor.pub');
const logId = createHash('sha256').update(spki(rekorPub)).digest();

/** The trusted root (protobuf-specs JSON) of the private CA and log. */
export function trustedRoot(): string {
  return JSON.stringify({
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [
      {
        baseUrl: 'https://rekor.test',
        hashAlgorithm: 'SHA2_256',
        publicKey: {
          rawBytes: spki(rekorPub).toString('base64'),
          keyDetails: 'PKIX_ECDSA_P256_SHA_256',
          validFor: { start: '2020-01-01T00:00:00Z' },
        },
        logId: { keyId: logId.toString('base64') },
      },
    ],
    certificateAuthorities: [
      {
        subject: { organization: 'Test Sigstore Root', commonName: 'Test Sigstore Root' },
        uri: 'https://fulcio.test',
        certChain: {
          certificates: [
            { rawBytes: der(read('intermediate.crt')).toString('base64') },
            { rawBytes: der(read('root.crt')).toString('base64') },
          ],
        },
        validFor: { start: '2020-01-01T00:00:00Z' },
      },
    ],
    ctlogs: [],
    timestampAuthorities: [],
  });
}

/** The keys file of keyed signatures. */
export function publicKeys(): string {
  return JSON.stringify({ [KEY_ID]: read('signing.pub') });
}

/** An in-toto v1 statement about artifacts with these SHA-256 digests. */
export function statement(...digests: string[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      _type: 'https://in-toto.io/Statement/v1',
      subject: digests.map((d, i) => ({ name: `artifact-${i}`, digest: { sha256: d } })),
      predicateType: 'https://slsa.dev/provenance/v1',
      predicate: { buildDefinition: { buildType: 'https://actions.github.io/buildtypes/workflow/v1' } },
    }),
  );
}

/** DSSE pre-authentication encoding (DSSE v1 protocol). */
function pae(type: string, body: Buffer): Buffer {
  const t = Buffer.from(type);
  return Buffer.concat([Buffer.from(`DSSEv1 ${t.length} `), t, Buffer.from(` ${body.length} `), body]);
}

function signWith(keyFile: string, data: Buffer): Buffer {
  return sign('sha256', data, createPrivateKey(read(keyFile)));
}

export interface BundleOptions {
  /** Sign with the untrusted CA's leaf. */
  untrusted?: boolean;
  /** Replace the payload after signing (and after logging). */
  tamperedPayload?: Buffer;
  payloadType?: string;
}

/** A Sigstore bundle v0.3 (DSSE, certificate, one Rekor entry with its SET) over `payload`. */
export function bundle(payload: Buffer, options: BundleOptions = {}): Record<string, unknown> {
  const type = options.payloadType ?? IN_TOTO;
  const leaf = options.untrusted ? 'other-leaf' : 'leaf';
  const signature = signWith(`${leaf}.key`, pae(type, payload));
  const certPem = read(`${leaf}.crt`);
  const body = Buffer.from(
    JSON.stringify({
      apiVersion: '0.0.1',
      kind: 'dsse',
      spec: {
        envelopeHash: { algorithm: 'sha256', value: createHash('sha256').update(signature).digest('hex') },
        payloadHash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') },
        signatures: [
          { signature: signature.toString('base64'), verifier: Buffer.from(certPem).toString('base64') },
        ],
      },
    }),
  );
  // Now: the certificates of make.sh are valid from when they were made.
  const integratedTime = Math.floor(Date.now() / 1000);
  const logIndex = 4242;
  // The SET: the log's signature over the canonical JSON of the entry (keys in sorted order).
  const set = signWith(
    'rekor.key',
    Buffer.from(
      JSON.stringify({
        body: body.toString('base64'),
        integratedTime,
        logID: logId.toString('hex'),
        logIndex,
      }),
    ),
  );
  // The inclusion proof: the entry is the second leaf of a two-leaf tree (RFC 6962 hashing),
  // whose root a checkpoint signed by the log (a C2SP signed note) commits to.
  const sibling = createHash('sha256')
    .update(Buffer.from([0]))
    .update('an earlier entry')
    .digest();
  const leafHash = createHash('sha256')
    .update(Buffer.from([0]))
    .update(body)
    .digest();
  const root = createHash('sha256')
    .update(Buffer.from([1]))
    .update(sibling)
    .update(leafHash)
    .digest();
  const note = `rekor.test - 1\n2\n${root.toString('base64')}\n`;
  const noteSig = Buffer.concat([logId.subarray(0, 4), signWith('rekor.key', Buffer.from(note))]);
  const checkpoint = `${note}\n\u2014 rekor.test ${noteSig.toString('base64')}\n`;
  return {
    mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
    verificationMaterial: {
      certificate: { rawBytes: der(certPem).toString('base64') },
      tlogEntries: [
        {
          logIndex: String(logIndex),
          logId: { keyId: logId.toString('base64') },
          kindVersion: { kind: 'dsse', version: '0.0.1' },
          integratedTime: String(integratedTime),
          inclusionPromise: { signedEntryTimestamp: set.toString('base64') },
          inclusionProof: {
            logIndex: '1',
            rootHash: root.toString('base64'),
            treeSize: '2',
            hashes: [sibling.toString('base64')],
            checkpoint: { envelope: checkpoint },
          },
          canonicalizedBody: body.toString('base64'),
        },
      ],
    },
    dsseEnvelope: {
      payload: (options.tamperedPayload ?? payload).toString('base64'),
      payloadType: type,
      signatures: [{ sig: signature.toString('base64'), keyid: '' }],
    },
  };
}

/** A bare DSSE envelope signed with the keyed-signature key (or an untrusted key). */
export function envelope(
  payload: Buffer,
  options: { keyid?: string; tamperedPayload?: Buffer; otherKey?: boolean } = {},
): Record<string, unknown> {
  const signature = signWith(options.otherKey ? 'other-leaf.key' : 'signing.key', pae(IN_TOTO, payload));
  return {
    payloadType: IN_TOTO,
    payload: (options.tamperedPayload ?? payload).toString('base64'),
    signatures: [{ keyid: options.keyid ?? KEY_ID, sig: signature.toString('base64') }],
  };
}
