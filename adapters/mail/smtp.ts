import nodemailer from 'nodemailer';

/*
 * The SMTP side of mail channels and mailings (nodemailer). Knows nothing of channels or mailings: it takes a server's
 * settings and a letter, and answers the server's own reply when it refuses.
 */

export interface SmtpSettings {
  host: string;
  port: number;
  security: 'none' | 'starttls' | 'ssl';
  username: string;
  password: string | null;
  fromAddress: string;
  fromName: string;
}

export interface Attachment {
  filename: string;
  /** The bytes, or a file to read them from (an exported file). */
  content?: Buffer | string;
  path?: string;
  contentType?: string;
  /** Set for an image shown in the HTML body (<img src="cid:...">). */
  cid?: string;
}

export interface Letter {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  attachments?: Attachment[];
}

/** A refusal or failure of the server, with its reply ("535 5.7.8 Authentication failed") when it gave one. */
export class SmtpError extends Error {}

export interface SmtpSender {
  send(letter: Letter): Promise<void>;
  close(): void;
}

const TIMEOUT_MS = 15_000;

/** One pooled connection per sender: a run reuses it for its letters, a channel test makes one and closes it. */
export function smtpSender(s: SmtpSettings): SmtpSender {
  const transport = nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.security === 'ssl',
    requireTLS: s.security === 'starttls',
    ignoreTLS: s.security === 'none',
    auth: s.username ? { user: s.username, pass: s.password ?? '' } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    pool: true,
    maxConnections: 1,
  });
  return {
    async send(letter) {
      try {
        await transport.sendMail({
          from: s.fromName ? { name: s.fromName, address: s.fromAddress } : s.fromAddress,
          to: letter.to,
          subject: letter.subject,
          text: letter.text,
          html: letter.html,
          attachments: letter.attachments,
        });
      } catch (e) {
        throw new SmtpError(smtpReply(e));
      }
    },
    close: () => transport.close(),
  };
}

/** The server's reply when there is one, else the transport's message (connection refused, timeout ...). */
function smtpReply(e: unknown): string {
  const err = e as { response?: string; message?: string; code?: string };
  const text = err.response || err.message || String(e);
  return text.slice(0, 1000);
}
