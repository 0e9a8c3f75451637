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
