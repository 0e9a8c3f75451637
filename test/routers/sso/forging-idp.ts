import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/*
 * An OpenID Connect provider on a random loopback port that signs as each test tells it to, so that a test can hand
 * the platform a forged ID token through the real protocol: a discovery document, a JWKS (fetches counted), an
 * authorize endpoint that redirects straight back with a code (no login form), a token endpoint that checks the client
 * (client_secret_basic, or a public client's client_id), the code, the redirect URI and the PKCE verifier and answers
 * an ID token with the authorize request's nonce, signed as `idToken` says; and, when `userinfo` is set, a userinfo
 * endpoint answering a signed JWT (application/jwt).
 */

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function signingKey(alg = 'RS256', kid = `kid-${crypto.randomUUID()}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** How a token is signed: with a key (its own kid in the header unless `kid` names another), an HMAC secret, or not. */
export type Signer = { key: SigningKey; kid?: string } | { secret: string; alg: 'HS256' | 'HS384' | 'HS512' } | 'none';

export interface ForgingIdp {
  issuer: string;
  clientId: string;
  /** The client secret the token endpoint checks; undefined: a public client, known by its client_id. */
  clientSecret: string | undefined;
  /** The discovery document's id_token_signing_alg_values_supported. */
  algorithms: string[];
  /** The keys the JWKS publishes. */
  published: SigningKey[];
  /** GET jwks_uri answers this status (200: the published keys). */
  jwksStatus: number;
  /** How the ID token of the next token request is signed. */
  idToken: Signer;
  /** When set: the document names a userinfo endpoint answering the user's claims as a JWT signed so. */
  userinfo?: Signer;
  /** The discovery document's userinfo_signing_alg_values_supported. */
  userinfoAlgorithms: string[];
  /** The claims of the next login's user; `userinfoOnly` names those left out of the ID token. */
  user: { sub: string; [claim: string]: unknown };
  userinfoOnly: string[];
  /** GET jwks_uri so far. */
  jwksFetches: number;
  close(): Promise<void>;
}

const b64json = (value: unknown) => base64url.encode(JSON.stringify(value));

async function sign(claims: Record<string, unknown>, signer: Signer, typ?: string): Promise<string> {
  if (signer === 'none') return `${b64json({ alg: 'none', typ })}.${b64json(claims)}.`;
  if ('secret' in signer) {
    return new SignJWT(claims).setProtectedHeader({ alg: signer.alg, typ }).sign(Buffer.from(signer.secret));
  }
  return new SignJWT(claims)
    .setProtectedHeader({ alg: signer.key.alg, kid: signer.kid ?? signer.key.kid, typ })
    .sign(signer.key.privateKey);
}

interface Grant {
  redirectUri: string;
  nonce: string;
  challenge: string;
}

async function formOf(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The client the token request authenticates as (RFC 6749 2.3.1: form-encoded id and secret in Basic). */
function clientOf(req: http.IncomingMessage, form: URLSearchParams): { id: string | null; secret?: string } {
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!basic) return { id: form.get('client_id') };
  const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
  return { id, secret };
}

export async function startForgingIdp(opts: { clientSecret?: string } = {}): Promise<ForgingIdp> {
  const key = await signingKey();
  const grants = new Map<string, Grant>();
  const accessTokens = new Set<string>();
  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: ForgingIdp = {
    issuer,
    clientId: 'forged-client',
    clientSecret: 'clientSecret' in opts ? opts.clientSecret : 'forging-idp-client-secret-0123456789',
    algorithms: ['RS256'],
    published: [key],
    jwksStatus: 200,
    idToken: { key },
    userinfoAlgorithms: ['RS256'],
    user: { sub: 'nobody' },
    userinfoOnly: [],
    jwksFetches: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url!, issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        ...(idp.userinfo
          ? {
              userinfo_endpoint: `${issuer}/userinfo`,
              userinfo_signing_alg_values_supported: idp.userinfoAlgorithms,
            }
          : {}),
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: idp.algorithms,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: [idp.clientSecret ? 'client_secret_basic' : 'none'],
      });
    }
    if (url.pathname === '/jwks') {
      idp.jwksFetches++;
      return json(res, idp.jwksStatus, { keys: idp.published.map((k) => k.publicJwk) });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== idp.clientId || q.get('code_challenge_method') !== 'S256') {
        return json(res, 400, { error: 'invalid_request' });
      }
      const code = crypto.randomUUID();
      grants.set(code, {
        redirectUri: q.get('redirect_uri')!,
        nonce: q.get('nonce')!,
        challenge: q.get('code_challenge')!,
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = await formOf(req);
      const client = clientOf(req, form);
      if (client.id !== idp.clientId || client.secret !== idp.clientSecret) {
        return json(res, 401, { error: 'invalid_client' });
      }
      const code = form.get('code') ?? '';
      const grant = grants.get(code);
      grants.delete(code);
      const verifier = form.get('code_verifier') ?? '';
      if (
        form.get('grant_type') !== 'authorization_code' ||
        !grant ||
        grant.redirectUri !== form.get('redirect_uri') ||
        crypto.createHash('sha256').update(verifier).digest('base64url') !== grant.challenge
      ) {
        return json(res, 400, { error: 'invalid_grant' });
      }
      const now = Math.floor(Date.now() / 1000);
      const inToken = Object.fromEntries(Object.entries(idp.user).filter(([k]) => !idp.userinfoOnly.includes(k)));
      const idToken = await sign(
        { ...inToken, iss: issuer, aud: idp.clientId, nonce: grant.nonce, iat: now, exp: now + 300 },
        idp.idToken,
        'JWT',
      );
      const accessToken = crypto.randomUUID();
      accessTokens.add(accessToken);
      return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    if (url.pathname === '/userinfo' && idp.userinfo) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !accessTokens.has(token)) return json(res, 401, { error: 'invalid_token' });
      const jwt = await sign({ ...idp.user, iss: issuer, aud: idp.clientId }, idp.userinfo);
      return res.writeHead(200, { 'content-type': 'application/jwt' }).end(jwt);
    }
    return json(res, 404, { error: 'not_found' });
  }

  return idp;
}

/** A browser at the IdP: its authorize endpoint redirects straight back; answers where to (the platform's callback). */
export async function idpRedirect(authorizationUrl: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  await res.arrayBuffer();
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`IdP authorize answered ${res.status}`);
  return location;
}
