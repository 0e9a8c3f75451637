import { badRequest, notFound } from '../kernel/errors';

/** Messages of mailings (/api/mailings). */
export const MSG = {
  notFound: (id: number) => notFound(`Рассылка не найдена (id ${id})`),
  runNotFound: (id: number) => notFound(`Запуск рассылки не найден (id ${id})`),
  channelNotFound: (id: number) => `Почтовый канал не найден (id ${id})`,
  objectRequired: 'Укажите дашборд (dashboard_id) или виджеты (widget_ids)',
  objectBoth: 'Укажите либо дашборд, либо виджеты, но не оба сразу',
  objectUnreadable: (kind: string, id: number) => `Объект недоступен владельцу рассылки (${kind} id ${id})`,
  unknownTimezone: (tz: string) => `Неизвестный часовой пояс: ${tz}`,
  userNotFound: (id: number) => `Пользователь не найден (id ${id})`,
  groupNotFound: (id: number) => `Группа не найдена (id ${id})`,
  fieldNotInDataset: (id: number) => `Поле не найдено в датасете среза (id ${id})`,
  noRecipients: 'Укажите получателей: пользователей, группы или адреса',
  formatNeedsWidgets: (format: string) =>
    `Формат ${format} выгружает виджеты: для дашборда выберите pdf, png или inline`,
  alreadyPaused: badRequest('Рассылка уже приостановлена'),
  notPaused: badRequest('Рассылка не приостановлена'),
  noSchedule: badRequest('У рассылки нет расписания'),
  noTestAddress: badRequest('Укажите адреса (emails): у вашей учётной записи нет адреса электронной почты'),
  testFailed: (reason: string) => badRequest(`Тестовое письмо не отправлено: ${reason}`),
  interrupted: 'Отправка прервана остановкой узла: письмо могло уйти, повторно не отправляется',
  unconfirmed: (total: number, recipients: string[]) =>
    `Доставка не подтверждена писем: ${total} (узел остановился во время отправки; письмо могло уйти и повторно не ` +
    `отправлялось): ${recipients.join(', ')}${total > recipients.length ? ` и ещё ${total - recipients.length}` : ''}`,
  lost: 'Рассылка прервана: узел, выполнявший её, остановился, повторные попытки исчерпаны. Запустите рассылку ещё раз',
  neverStarted: 'Рассылка не началась: её задание потеряно. Запустите рассылку ещё раз',
  notBuilt: (reason: string) => `Письмо не собрано с правами владельца рассылки: ${reason}`,
  runFailed: (name: string) => `Рассылка «${name}» завершилась с ошибками`,
  lettersFailed: (failed: number, total: number) => `Не отправлено писем: ${failed} из ${total}`,
  testPrefix: '[Тест] ',
};
