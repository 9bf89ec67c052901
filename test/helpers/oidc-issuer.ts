/**
 * A CI OIDC issuer on a free 127.0.0.1 port, as GitHub Actions publishes one: a discovery
 * document at `/.well-known/openid-configuration` naming a JWKS, and ID tokens signed with its
 * keys. Keys can be added (rotation); every request is recorded so tests see what was fetched.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface TestIssuer {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens. */
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Generates a key under `kid`; published from now on unless `publish` is false. */
  addKey(kid: string, options?: { publish?: boolean }): Promise<void>;
  /** A token signed with the key `kid` (the first key by default). */
  sign(claims: JWTPayload, options?: { kid?: string; iss?: string }): Promise<string>;
  close(): Promise<void>;
}

/** Starts an issuer with one published RS256 key, `key-1`. */
export async function startIssuer(): Promise<TestIssuer> {
  const requests: string[] = [];
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK; published: boolean }>();
  let url = '';
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') {
      send({
        issuer: url,
        jwks_uri: `${url}/.well-known/jwks`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    } else if (req.url === '/.well-known/jwks') {
      send({ keys: [...keys.values()].filter((k) => k.published).map((k) => k.jwk) });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const issuer: TestIssuer = {
    url,
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
      return new SignJWT({ iss: options.iss ?? url, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  await issuer.addKey('key-1');
  return issuer;
}
