import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Xmldom from '@xmldom/xmldom';
import type { Element } from '@xmldom/xmldom';

/*
 * What the platform needs of a SAML IdP's metadata (EntityDescriptor): its entity id, the SingleSignOnService
 * location of the HTTP-Redirect binding, and its signing certificates. Read as XML with @xmldom/xmldom, elements
 * looked up by namespace (any prefix, or none): the metadata only configures where to send the user and which keys
 * to trust; the assertions themselves are parsed and verified by @node-saml/node-saml. Every certificate found is
 * parsed by node:crypto, so a mangled one is refused here rather than at the first login.
 */

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER bodies, as node-saml's idpCert takes them. */
  certificates: string[];
}

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const NOT_XML = 'метаданные IdP не читаются как XML';

/*
 * The document, or null when it is not well-formed XML. xmldom reports problems to onError and throws ParseError
 * on fatal ones; an error-level report (an undefined entity, a bad attribute) stops parsing too. A DOCTYPE is
 * refused: metadata never needs one, and xmldom would not expand its entities anyway (no entity-expansion bombs).
 */
function parseXml(xml: string) {
  try {
    const doc = new (loadXmldom().DOMParser)({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
    return doc.doctype ? null : doc;
  } catch {
    return null;
  }
}

/**
 * @xmldom/xmldom (CommonJS, so a synchronous require), loaded on the first metadata read, not with the server: an idle
 * node never parses IdP metadata.
 */
let xmldom: typeof Xmldom | undefined;
const loadXmldom = () => (xmldom ??= createRequire(import.meta.url)('@xmldom/xmldom') as typeof Xmldom);

const children = (parent: Element, ns: string, name: string): Element[] =>
  Array.from(parent.getElementsByTagNameNS(ns, name));

/** The parsed metadata, or a message (Russian) saying what is missing. */
export function parseIdpMetadata(xml: string): IdpMetadata | { error: string } {
  const doc = parseXml(xml);
  if (!doc?.documentElement) return { error: NOT_XML };
  const entity = children(doc.documentElement, MD, 'EntityDescriptor')[0] ?? doc.documentElement;
  const entityId =
    entity.namespaceURI === MD && entity.localName === 'EntityDescriptor' && entity.getAttribute('entityID');
  if (!entityId) return { error: 'в метаданных IdP нет EntityDescriptor с entityID' };
  const idp = children(entity, MD, 'IDPSSODescriptor')[0];
  if (!idp) return { error: 'в метаданных IdP нет IDPSSODescriptor' };
  const redirect = children(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === REDIRECT_BINDING);
  const ssoUrl = redirect?.getAttribute('Location');
  if (!ssoUrl || !/^https?:\/\//i.test(ssoUrl)) {
    return { error: 'в метаданных IdP нет SingleSignOnService с привязкой HTTP-Redirect' };
  }
  const certificates: string[] = [];
  for (const key of children(idp, MD, 'KeyDescriptor')) {
    if (key.getAttribute('use') === 'encryption') continue;
    for (const cert of children(key, DSIG, 'X509Certificate')) {
      const base64 = (cert.textContent ?? '').replace(/\s+/g, '');
      try {
        new crypto.X509Certificate(Buffer.from(base64, 'base64'));
      } catch {
        return { error: 'сертификат подписи в метаданных IdP не читается' };
      }
      certificates.push(base64);
    }
  }
  if (certificates.length === 0) return { error: 'в метаданных IdP нет сертификата подписи' };
  return { entityId, ssoUrl, certificates };
}
