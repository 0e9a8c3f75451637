import { notFound, unauthorized, AppError } from '../kernel/errors';

/** Messages of share links and their public viewer. */
export const MSG = {
  linkNotFound: (id: number) => `Ссылка не найдена (id ${id})`,
  expiryInPast: 'Срок действия должен быть в будущем',
  /** The one answer for an unknown, rotated, revoked token and a deleted dashboard: nothing tells them apart. */
  publicLinkNotFound: 'Ссылка не найдена или больше не действует',
  suspended: 'Ссылка приостановлена владельцем',
  expired: 'Срок действия ссылки истёк',
  grantRequired: 'Ссылка защищена паролем: откройте её паролем (/unlock) и передайте X-Share-Grant',
  wrongPassword: 'Неверный пароль',
  noPassword: 'Ссылка не защищена паролем',
  tooManyUnlocks: 'Слишком много неверных паролей, повторите через минуту',
  notOnDashboard: 'Объект не найден на этом дашборде',
};

export const linkNotFound = (id: number) => notFound(MSG.linkNotFound(id));
export const publicLinkNotFound = () => notFound(MSG.publicLinkNotFound);
export const linkSuspended = () => new AppError('forbidden', MSG.suspended);
export const linkExpired = () => new AppError('forbidden', MSG.expired);
export const grantRequired = () => unauthorized(MSG.grantRequired);
