/**
 * A real OpenID Connect provider (the `oidc-provider` package) on loopback, standing in for Google, and a tiny
 * cookie-keeping browser that walks its sign-in (login form, consent) over HTTP as a person would.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { Provider } from 'oidc-provider';

export interface ProviderAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface LocalOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** accounts by subject: the login typed at the provider is the subject */
  accounts: Map<string, ProviderAccount>;
  stop(): Promise<void>;
}

export async function startOidcProvider(redirectUris: string[]): Promise<LocalOidcProvider> {
  let handler: http.RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-signing-key' };
  const clientId = 'data-service-test';
  const clientSecret = randomBytes(24).toString('hex');
  const accounts = new Map<string, ProviderAccount>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    // like Google: the ID token itself carries email and email_verified
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(16).toString('hex')] },
    jwks: { keys: [signingKey] },
    features: { devInteractions: { enabled: true } },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
  });
  handler = provider.callback();

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Just enough of a browser: manual redirects and a cookie jar (one host, paths ignored). */
export class Browser {
  private readonly cookies = new Map<string, string>();

  async request(url: string | URL, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {};
    if (this.cookies.size) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) <= Date.now(),
      );
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

/**
 * Follows the provider address as a person would: types `login` into the login form (the subject of the
 * account), grants consent, and stops at the redirect to `callbackPrefix`, which it answers without
 * following. `abort` presses "cancel" on the login form instead.
 */
export async function walkProvider(
  startUrl: string,
  login: string,
  callbackPrefix: string,
  options: { abort?: boolean; browser?: Browser } = {},
): Promise<URL> {
  const browser = options.browser ?? new Browser();
  let res = await browser.request(startUrl);
  let current = new URL(startUrl);
  for (let step = 0; step < 12; step += 1) {
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location') ?? '', current);
      if (next.toString().startsWith(callbackPrefix)) return next;
      current = next;
      res = await browser.request(current);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status}: ${html.slice(0, 500)}`);
    if (html.includes('name="prompt" value="login"')) {
      res = options.abort
        ? await browser.request(`${current.toString()}/abort`)
        : await browser.request(current, {
            method: 'POST',
            form: { prompt: 'login', login, password: 'anything' },
          });
    } else if (html.includes('name="prompt" value="consent"')) {
      res = await browser.request(current, { method: 'POST', form: { prompt: 'consent' } });
    } else {
      throw new Error(`unexpected provider page: ${html.slice(0, 500)}`);
    }
  }
  throw new Error('the provider did not send the browser back within 12 steps');
}
