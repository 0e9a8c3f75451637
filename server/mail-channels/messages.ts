import { SMTP_TIMEOUT_MS, type SmtpFailure } from '../../adapters/mail/smtp';
import { badRequest, notFound } from '../kernel/errors';

/** Messages of mail channels (/api/mail-channels). */
export const MSG = {
  notFound: (id: number) => notFound(`Почтовый канал не найден (id ${id})`),
  inUse: (count: number) =>
    badRequest(`Канал используется рассылками (${count}): сначала переведите их на другой канал или удалите`),
  testSubject: 'Проверка почтового канала',
  testBody: 'Это проверочное письмо: канал настроен верно.',
  testOk: 'Письмо отправлено',
};

/**
 * POST /api/mail-channels/{id}/test that failed: what happened in Russian (the words of a data source's connection
 * check), then the server's reply or the transport's text as the detail an administrator needs to fix it.
 */
export function testFailed(failure: SmtpFailure, server: string, detail: string): string {
  return `${FAILURE[failure](server)}: ${detail}`;
}

const FAILURE: Record<SmtpFailure, (server: string) => string> = {
  refused: (server) => `Сервер ${server} отклонил подключение`,
  'not-found': (server) => `Адрес сервера ${server} не найден`,
  timeout: (server) => `Сервер ${server} не ответил за ${SMTP_TIMEOUT_MS / 1000} с`,
  auth: (server) => `Ошибка аутентификации на сервере ${server}`,
  tls: (server) => `Ошибка TLS при подключении к ${server}`,
  recipient: (server) => `Сервер ${server} не принял адрес получателя`,
  other: (server) => `Не удалось отправить письмо через ${server}`,
};
