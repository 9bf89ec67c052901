/**
 * A real OpenID Provider for sign-in tests: `oidc-provider` (a certified implementation) on a
 * free 127.0.0.1 port, with one confidential client and people whose groups a test can change.
 * Its development login form signs in any listed person by name; consent is given up front for
 * the client, as a company's provider does for its own applications.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

export interface Person {
  name: string;
  email: string;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** People by login name; change a person's groups and the next sign-in sees them. */
  people: Map<string, Person>;
  close(): Promise<void>;
}

const SCOPES = 'openid profile email';

export async function startOidcProvider(options: {
  redirectUris: string[];
  people: Record<string, Person>;
}): Promise<TestProvider> {
  const people = new Map(Object.entries(options.people));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'verity';
  const clientSecret = 'a-client-secret-for-tests-only-0123456789';
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username', 'groups'],
      email: ['email', 'email_verified'],
    },
    // Profile claims in the ID token itself, as Keycloak, Okta and Entra ID put them there.
    conformIdTokenClaims: false,
    cookies: { keys: ['cookie-key-for-tests-only-0123456789'] },
    findAccount: (_ctx: KoaContextWithOIDC, id: string) => {
      const person = people.get(id);
      if (!person) {
        return undefined;
      }
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          name: person.name,
          preferred_username: id,
          email: person.email,
          email_verified: true,
          groups: person.groups,
        }),
      };
    },
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId || !ctx.oidc.client) {
        return undefined;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId });
      grant.addOIDCScope(SCOPES);
      grant.addOIDCClaims(['name', 'preferred_username', 'groups', 'email', 'email_verified']);
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const handle = provider.callback();
  server.on('request', (req, res) => {
    void handle(req, res);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    people,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What to give the app so that it signs people in with this provider. */
export function oidcEnv(provider: TestProvider, groupRoles: Record<string, Record<string, string>>) {
  return {
    VERITY_OIDC_ISSUER: provider.issuer,
    VERITY_OIDC_CLIENT_ID: provider.clientId,
    VERITY_OIDC_CLIENT_SECRET: provider.clientSecret,
    VERITY_OIDC_INSECURE_ISSUERS: provider.issuer,
    VERITY_OIDC_PROVIDER_NAME: 'Test IdP',
    VERITY_OIDC_GROUP_ROLES: JSON.stringify(groupRoles),
  };
}
