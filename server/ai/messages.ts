/** The assistant's messages (Russian, as the envelope's). */
export const AI_MSG = {
  disabled: 'AI-ассистент отключён администратором платформы',
  notConfigured: 'AI-провайдер не настроен: укажите base_url и модель',
  notInGroup: 'AI-ассистент доступен только участникам разрешённых групп',
  timeout: (ms: number) => `AI-провайдер не ответил за ${Math.round(ms / 1000)} с`,
  connection: 'Не удалось подключиться к AI-провайдеру',
  http: (status: number | undefined) => `AI-провайдер ответил ошибкой${status ? ` ${status}` : ''}`,
  empty: 'AI-провайдер вернул пустой ответ',
  malformed: 'AI-провайдер вернул ответ не в формате chat completions (проверьте base_url)',
  checkOk: 'Подключение успешно',
  formulaFailed: (message: string) => `Не удалось сгенерировать корректную формулу: ${message}`,
  sqlFailed: (message: string) => `Не удалось сгенерировать корректный SQL-запрос: ${message}`,
  sqlNotReadOnly: 'Разрешены только запросы на чтение (SELECT)',
  widgetFailed: (message: string) => `Не удалось сгенерировать корректный виджет: ${message}`,
};
