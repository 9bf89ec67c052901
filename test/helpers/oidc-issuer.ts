/**
 * A CI OIDC issuer on a free 127.0.0.1 port, as GitHub Actions publishes one: a discovery
 * document at `/.well-known/openid-configuration` naming a JWKS, and ID tokens signed with its
 * keys. Keys can be added (rotation), faults switched on; every request is recorded so tests see
 * what was fetched.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** How the issuer misbehaves, when it does. */
export type IssuerFault =
  | 'down'
  | 'not-json'
  | 'other-issuer'
  | 'ftp-jwks'
  | 'jwks-elsewhere'
  | 'no-keys'
  | 'bad-key'
  | 'huge'
  | 'hang';

export interface TestIssuer {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens. */
  url: string;
  /** Set to make every answer from now on fail this way; undefined answers properly. */
  fault: IssuerFault | undefined;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Generates a key under `kid`; published from now on unless `publish` is false. */
  addKey(kid: string, options?: { publish?: boolean }): Promise<void>;
  /** A token signed with the key `kid` (the first key by default). */
  sign(claims: JWTPayload, options?: { kid?: string; iss?: string }): Promise<string>;
  close(): Promise<void>;
}

type Key = { privateKey: CryptoKey; jwk: JWK; published: boolean };

/** The discovery document, as the fault has it. */
function discovery(url: string, fault: IssuerFault | undefined): unknown {
  const jwks: Partial<Record<IssuerFault, string>> = {
    'ftp-jwks': 'ftp://127.0.0.1/jwks',
    // Another host than the listed issuer's own: the guard applies to it.
    'jwks-elsewhere': `${url.replace('127.0.0.1', 'localhost')}/.well-known/jwks`,
  };
  return {
    issuer: fault === 'other-issuer' ? 'https://token.actions.githubusercontent.com' : url,
    jwks_uri: (fault && jwks[fault]) ?? `${url}/.well-known/jwks`,
    id_token_signing_alg_values_supported: ['RS256'],
  };
}

/** Starts an issuer with one published RS256 key, `key-1`. */
export async function startIssuer(): Promise<TestIssuer> {
  const requests: string[] = [];
  const keys = new Map<string, Key>();
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const fault = issuer.fault;
    if (fault === 'hang') {
      return;
    } else if (fault === 'down') {
      res.writeHead(503).end();
    } else if (fault === 'not-json') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
    } else if (fault === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"pad":"${'x'.repeat(200 * 1024)}"}`);
    } else if (req.url === '/.well-known/openid-configuration') {
      send(discovery(issuer.url, fault));
    } else if (req.url === '/.well-known/jwks') {
      const published = [...keys.values()].filter((k) => k.published).map((k) => k.jwk);
      // 'AQAB' is no RSA modulus WebCrypto imports.
      const broken = published.map((jwk) => ({ ...jwk, n: 'AQAB' }));
      send(fault === 'no-keys' ? {} : { keys: fault === 'bad-key' ? broken : published });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const issuer: TestIssuer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fault: undefined,
    requests,
    async addKey(kid, options = {}) {
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
      keys.set(kid, { privateKey, jwk, published: options.publish !== false });
    },
    async sign(claims, options = {}) {
      const kid = options.kid ?? keys.keys().next().value!;
      const key = keys.get(kid);
      if (!key) {
        throw new Error(`no key ${kid}`);
      }
      return new SignJWT({ iss: options.iss ?? issuer.url, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        // A hanging answer holds its connection: close it with the server.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  await issuer.addKey('key-1');
  return issuer;
}
