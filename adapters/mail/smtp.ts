import type { Transporter } from 'nodemailer';

/*
 * The SMTP side of mail channels and mailings (nodemailer). Knows nothing of channels or mailings: it takes a server's
 * settings and a letter, and answers the server's own reply when it refuses, with the kind of failure it was.
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

/**
 * What went wrong, for the caller to say in its own words: the server could not be reached (refused, not-found,
 * timeout, tls), or it answered and refused the login, a recipient, or something else.
 */
export type SmtpFailure = 'refused' | 'not-found' | 'timeout' | 'auth' | 'tls' | 'recipient' | 'other';

/**
 * A refusal or failure of the server: its message is the server's reply ("535 5.7.8 Authentication failed") when it
 * gave one, else the transport's own text ("connect ECONNREFUSED 127.0.0.1:25").
 */
export class SmtpError extends Error {
  constructor(
    message: string,
    readonly failure: SmtpFailure = 'other',
  ) {
    super(message);
  }
}

export interface SmtpSender {
  send(letter: Letter): Promise<void>;
  close(): void;
}

/** How long the server has to connect, greet and answer each command. */
export const SMTP_TIMEOUT_MS = 15_000;

/** One pooled connection per sender: a run reuses it for its letters, a channel test makes one and closes it. */
export function smtpSender(s: SmtpSettings): SmtpSender {
  // nodemailer loads on the first letter, not with the server: an idle server sends no mail.
  let transport: Promise<Transporter> | undefined;
  const open = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) => createTransport(nodemailer, s)));
  return {
    async send(letter) {
      try {
        await (
          await open()
        ).sendMail({
          from: s.fromName ? { name: s.fromName, address: s.fromAddress } : s.fromAddress,
          to: letter.to,
          subject: letter.subject,
          text: letter.text,
          html: letter.html,
          attachments: letter.attachments,
        });
      } catch (e) {
        throw new SmtpError(smtpReply(e), smtpFailure(e));
      }
    },
    close: () => void transport?.then((t) => t.close()).catch(() => undefined),
  };
}

function createTransport(nodemailer: typeof import('nodemailer').default, s: SmtpSettings): Transporter {
  return nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.security === 'ssl',
    requireTLS: s.security === 'starttls',
    ignoreTLS: s.security === 'none',
    auth: s.username ? { user: s.username, pass: s.password ?? '' } : undefined,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    pool: true,
    maxConnections: 1,
  });
}

/** The server's reply when there is one, else the transport's message (connection refused, timeout ...). */
function smtpReply(e: unknown): string {
  const err = e as { response?: string; message?: string; code?: string };
  const text = err.response || err.message || String(e);
  return text.trim().slice(0, 1000);
}

/**
 * nodemailer's error codes say auth, envelope, TLS (STARTTLS), DNS and timeout; a socket failure is ESOCKET or
 * ECONNECTION whatever its cause, so its text tells refused and TLS (OpenSSL's "wrong version number", a certificate
 * the server presented) apart.
 */
function smtpFailure(e: unknown): SmtpFailure {
  const { code, command, message = '' } = e as { code?: string; command?: string; message?: string };
  if (code === 'EAUTH' || code === 'ENOAUTH') return 'auth';
  if (code === 'EENVELOPE') return command === 'RCPT TO' ? 'recipient' : 'other';
  if (code === 'ETLS' || /SSL routines|certificate|\bTLS\b/i.test(message)) return 'tls';
  if (code === 'EDNS' || /\b(ENOTFOUND|EAI_AGAIN)\b/.test(message)) return 'not-found';
  if (code === 'ETIMEDOUT' || /\bETIMEDOUT\b|timed? ?out|Greeting never received/i.test(message)) return 'timeout';
  if (/\b(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH)\b/.test(message)) return 'refused';
  return 'other';
}
