import crypto from 'node:crypto';

/*
 * The SAML service provider signs its AuthnRequests and publishes the certificate in its metadata
 * (GET /api/sso-providers/{id}/sp-metadata). node:crypto makes keys but cannot issue a certificate: @peculiar/x509
 * issues the self-signed X.509 v3 certificate (RSA 2048, SHA-256) over node's WebCrypto. The IdP only pins the key
 * it carries.
 */

const RSA_SHA256: crypto.webcrypto.RsaHashedKeyGenParams = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};
const DAY_MS = 86_400_000;

export interface SigningPair {
  certificatePem: string;
  privateKeyPem: string;
}

/** A new RSA-2048 key and a self-signed certificate for it, valid from yesterday for ten years. */
export async function createSelfSignedCertificate(cn: string, now = new Date()): Promise<SigningPair> {
  // Loaded on the first certificate, not with the server. The Reflect polyfill @peculiar/x509's dependency injection
  // (tsyringe) needs comes first.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const { webcrypto } = crypto;
  const keys = await webcrypto.subtle.generateKey(RSA_SHA256, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      // An explicit UTF8String value, neither a "CN=..." string nor a plain JSON value (both are unescaped by the
      // library): a provider name with commas, quotes or a leading # stays one common name, as typed.
      name: new x509.Name([{ CN: [{ utf8String: cn.slice(0, 64) }] }]),
      notBefore: new Date(now.getTime() - DAY_MS),
      notAfter: new Date(now.getTime() + 3650 * DAY_MS),
      signingAlgorithm: RSA_SHA256,
      keys,
    },
    webcrypto,
  );
  return {
    certificatePem: certificate.toString('pem'),
    privateKeyPem: crypto.KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
