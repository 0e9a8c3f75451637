/** The Russian messages of single sign-on, in one place so that tests and callers quote them exactly. */
export const SSO_MESSAGES = {
  providerNotFound: (id: number) => `Провайдер SSO не найден (id ${id})`,
  providerDisabled: 'Провайдер SSO отключён',
  duplicateName: (name: string) => `Провайдер SSO с именем «${name}» уже существует`,
  noBaseUrl: 'Не задан адрес установки (base_url в настройках): вход через SSO невозможен',
  foreignRedirect: 'Адрес возврата должен находиться на адресе установки',
  badState: 'Недействительный или просроченный параметр state: начните вход заново',
  idpRefused: (reason: string) => `Провайдер удостоверений отклонил вход: ${reason}`,
  idpAnswerInvalid: (reason: string) => `Ответ провайдера удостоверений не принят: ${reason}`,
  idpUnreachable: (reason: string) => `Провайдер удостоверений недоступен: ${reason}`,
  // The reasons of idpAnswerInvalid for a signed OIDC answer: `of` is 'ID-токена' or 'ответа userinfo'.
  unsignedAnswer: (of: string) => `подпись ${of}: её нет (alg «none»), такой ответ не принимается`,
  algNotAllowed: (of: string, alg: string, field: string, allowed: string[]) =>
    `подпись ${of}: алгоритм «${alg}» не из объявленных провайдером (${field}: ${allowed.join(', ') || 'ни одного допустимого'})`,
  unknownSigningKey: (of: string, kid: string | undefined) =>
    `подпись ${of}: ключа ${kid === undefined ? 'без kid' : `«${kid}»`} нет в наборе ключей провайдера (jwks_uri), загруженном заново`,
  signatureMismatch: (of: string, kid: string | undefined) =>
    `подпись ${of}: не совпадает с ключом ${kid === undefined ? '' : `«${kid}» `}из набора ключей провайдера (jwks_uri)`,
  secretMismatch: (of: string) => `подпись ${of}: не совпадает с секретом клиента (client_secret)`,
  signatureUnchecked: (of: string, reason: string) => `подпись ${of} не проверена: ${reason}`,
  insecureIdpUrl:
    'Адрес провайдера удостоверений должен быть https: http допустим только на локальном адресе (127.0.0.1, [::1], localhost)',
  noUsername: (claim: string) => `Ответ провайдера не содержит имя пользователя (${claim})`,
  badUsername: (claim: string) =>
    `Имя пользователя в ответе провайдера (${claim}) недопустимо: не более 100 символов, только буквы, цифры и . _ @ -`,
  noAccount: (username: string) =>
    `Учётная запись «${username}» не найдена, а автоматическое создание пользователей для этого провайдера выключено`,
  notSsoAccount: (username: string) =>
    `Учётная запись «${username}» не является учётной записью SSO: вход через провайдера для неё не разрешён`,
  accountDisabled: 'Учётная запись отключена',
  replayedAssertion: 'Утверждение SAML уже было использовано',
  badCode: 'Недействительный или просроченный одноразовый код входа',
  otherBrowser: 'Вход через SSO нужно завершить в том же браузере, в котором он был начат: начните вход заново',
  samlOnly: 'Метаданные поставщика услуг есть только у SAML-провайдера',
  kindChange: 'Тип провайдера изменить нельзя',
  groupNotFound: (id: number) => `Группа не найдена (id ${id})`,
  testOk: 'Провайдер доступен, настройки корректны',
} as const;
