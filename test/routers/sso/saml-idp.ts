import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { SignedXml } from 'xml-crypto';

/*
 * A test SAML IdP: its metadata, and responses with assertions signed by its key through xml-crypto, with every
 * part a test may want wrong (signing key, audience, destination, time window, InResponseTo, assertion id).
 */

const fixtures = path.resolve(import.meta.dirname, '../../fixtures/sso');
const read = (name: string) => fs.readFileSync(path.join(fixtures, name), 'utf8');

const IDP_KEY = read('idp-key.pem');
export const IDP_CERT = read('idp-cert.pem');
export const OTHER_KEY = read('other-idp-key.pem');
export const OTHER_CERT = read('other-idp-cert.pem');
const IDP_ENTITY_ID = 'https://idp.test/saml';
const IDP_SSO_URL = 'https://idp.test/saml/sso';

const certBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

export function idpMetadataXml(cert = IDP_CERT): string {
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${IDP_ENTITY_ID}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${IDP_SSO_URL}/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${IDP_SSO_URL}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}

/** The AuthnRequest the platform sent (HTTP-Redirect binding: deflated, base64) and its RelayState. */
export function readAuthnRequest(idpUrl: string): { requestId: string; relayState: string; xml: string } {
  const url = new URL(idpUrl);
  const xml = zlib.inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  const requestId = /\sID="([^"]+)"/.exec(xml)![1];
  return { requestId, relayState: url.searchParams.get('RelayState')!, xml };
}

export interface AssertionOptions {
  nameId: string;
  inResponseTo: string;
  audience: string;
  destination: string;
  attributes?: Record<string, string[]>;
  assertionId?: string;
  /** Validity window relative to now, in seconds. */
  notBefore?: number;
  notOnOrAfter?: number;
  signWith?: { key: string; cert: string } | null;
}

const iso = (offsetSeconds: number) => new Date(Date.now() + offsetSeconds * 1000).toISOString();

/** A SAMLResponse (base64) whose assertion is signed by the IdP key (or another one, or not at all). */
export function samlResponse(o: AssertionOptions): string {
  const assertionId = o.assertionId ?? `_a${crypto.randomBytes(16).toString('hex')}`;
  const notBefore = iso(o.notBefore ?? -60);
  const notOnOrAfter = iso(o.notOnOrAfter ?? 300);
  const attributes = Object.entries(o.attributes ?? {})
    .map(
      ([name, values]) =>
        `<saml:Attribute Name="${name}">${values.map((v) => `<saml:AttributeValue>${v}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
    )
    .join('');
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${iso(0)}">` +
    `<saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">${o.nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${o.inResponseTo}" NotOnOrAfter="${notOnOrAfter}" Recipient="${o.destination}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}">` +
    `<saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="_s1"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>`;
  const signer = o.signWith === undefined ? { key: IDP_KEY, cert: IDP_CERT } : o.signWith;
  let signedAssertion = assertion;
  if (signer) {
    const sig = new SignedXml({
      privateKey: signer.key,
      publicCert: signer.cert,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    sig.addReference({
      xpath: "//*[local-name(.)='Assertion']",
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    });
    sig.computeSignature(assertion, {
      location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' },
    });
    signedAssertion = sig.getSignedXml();
  }
  const response =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="_r${crypto.randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${iso(0)}" Destination="${o.destination}" InResponseTo="${o.inResponseTo}">` +
    `<saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    signedAssertion +
    `</samlp:Response>`;
  return Buffer.from(response, 'utf8').toString('base64');
}
