import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseIdpMetadata } from '../../../server/sso/idp-metadata';
import { createSelfSignedCertificate } from '../../../server/sso/self-signed-cert';
import { idpMetadataXml } from '../../routers/sso/saml-idp';

describe('IdP metadata', () => {
  it('reads the entity id, the HTTP-Redirect SSO location and the signing certificate', () => {
    const meta = parseIdpMetadata(idpMetadataXml());
    expect(meta).toMatchObject({ entityId: 'https://idp.test/saml', ssoUrl: 'https://idp.test/saml/sso' });
    expect('certificates' in meta && meta.certificates).toHaveLength(1);
  });

  it('ignores encryption keys and names what is missing', () => {
    const xml = idpMetadataXml();
    expect(parseIdpMetadata(xml.replace('use="signing"', 'use="encryption"'))).toEqual({
      error: 'в метаданных IdP нет сертификата подписи',
    });
    expect(parseIdpMetadata(xml.replace(/HTTP-Redirect/, 'SOAP'))).toHaveProperty('error');
    expect(parseIdpMetadata(xml.replace(/entityID="[^"]+"/, ''))).toHaveProperty('error');
    expect(parseIdpMetadata(xml.replace(/<ds:X509Certificate>[A-Za-z0-9+/]{10}/, '<ds:X509Certificate>'))).toEqual({
      error: 'сертификат подписи в метаданных IdP не читается',
    });
    expect(parseIdpMetadata('not xml')).toHaveProperty('error');
  });
});

describe('IdP metadata read as XML', () => {
  const xml = idpMetadataXml();
  const notXml = { error: 'метаданные IdP не читаются как XML' };

  it('reads unprefixed (default namespace) and differently prefixed metadata alike', () => {
    const unprefixed = xml
      .replace('xmlns:md=', 'xmlns=')
      .replace(/<(\/?)md:/g, '<$1')
      .replace('xmlns:ds=', 'xmlns:sig=')
      .replace(/<(\/?)ds:/g, '<$1sig:');
    expect(unprefixed).not.toMatch(/md:|ds:/);
    const meta = parseIdpMetadata(unprefixed);
    expect(meta).toMatchObject({ entityId: 'https://idp.test/saml', ssoUrl: 'https://idp.test/saml/sso' });
    expect('certificates' in meta && meta.certificates).toHaveLength(1);
  });

  it('ignores elements of the right name in another namespace', () => {
    expect(
      parseIdpMetadata(xml.replace('xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"', 'xmlns:md="urn:x"')),
    ).toEqual({
      error: 'в метаданных IdP нет EntityDescriptor с entityID',
    });
    expect(parseIdpMetadata(xml.replace('http://www.w3.org/2000/09/xmldsig#', 'urn:x'))).toEqual({
      error: 'в метаданных IdP нет сертификата подписи',
    });
  });

  it('refuses metadata whose only key is an encryption key', () => {
    expect(parseIdpMetadata(xml.replace('use="signing"', 'use="encryption"'))).toEqual({
      error: 'в метаданных IdP нет сертификата подписи',
    });
  });

  it('names an entity without IDPSSODescriptor (an SP entity)', () => {
    expect(parseIdpMetadata(xml.replace(/IDPSSODescriptor/g, 'SPSSODescriptor'))).toEqual({
      error: 'в метаданных IdP нет IDPSSODescriptor',
    });
  });

  it('gives a message, never a throw, for malformed XML', () => {
    for (const bad of [
      '',
      'not xml',
      xml.replace('</md:IDPSSODescriptor>', ''),
      xml.replace('<md:', '<zz:'),
      '<a b="1" b="2"/>',
    ]) {
      expect(parseIdpMetadata(bad)).toEqual(notXml);
    }
  });

  it('refuses a DOCTYPE with entities (billion laughs) quickly, expanding nothing', () => {
    const lol = (n: number) => (n === 0 ? 'lol' : Array.from({ length: 10 }, () => `&lol${n - 1};`).join(''));
    const entities = Array.from({ length: 10 }, (_, i) => `<!ENTITY lol${i} "${lol(i)}">`).join('');
    const bomb = `<?xml version="1.0"?><!DOCTYPE md:EntityDescriptor [${entities}]>${xml
      .replace(/^<\?xml[^>]*>/, '')
      .replace('entityID="https://idp.test/saml"', 'entityID="&lol9;"')}`;
    const started = Date.now();
    expect(parseIdpMetadata(bomb)).toEqual(notXml);
    expect(Date.now() - started).toBeLessThan(1000);
    // A DOCTYPE without entities is refused as well: metadata never needs one.
    expect(
      parseIdpMetadata(xml.replace('<md:EntityDescriptor', '<!DOCTYPE md:EntityDescriptor>\n<md:EntityDescriptor')),
    ).toEqual(notXml);
    const external = `<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]>${xml.replace(/^<\?xml[^>]*>/, '').replace('entityID="https://idp.test/saml"', 'entityID="&ext;"')}`;
    expect(parseIdpMetadata(external)).toEqual(notXml);
  });
});

describe('SP signing certificate', () => {
  it('is a self-signed X.509 certificate of the key it comes with, valid for years', async () => {
    const pair = await createSelfSignedCertificate('sp.test SAML SP');
    const cert = new crypto.X509Certificate(pair.certificatePem);
    expect(cert.subject).toBe('CN=sp.test SAML SP');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(crypto.createPrivateKey(pair.privateKeyPem))).toBe(true);
    expect(new Date(cert.validTo).getTime() - Date.now()).toBeGreaterThan(9 * 365 * 86_400_000);
    expect(new Date(cert.validFrom).getTime()).toBeLessThan(Date.now());
  });

  it('is RSA 2048 signed with SHA-256 and keeps a provider name with commas as one common name', async () => {
    const pair = await createSelfSignedCertificate('#Acme, "Inc" = SSO');
    const cert = new crypto.X509Certificate(pair.certificatePem);
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(cert.subject).toBe(cert.issuer);
    expect(cert.subject).toBe('CN=\\#Acme\\, \\"Inc\\" = SSO'); // node escapes the one value as RFC 2253 says
    expect(cert.toLegacyObject().raw.toString('hex')).toContain('2a864886f70d01010b'); // sha256WithRSAEncryption
  });
});
