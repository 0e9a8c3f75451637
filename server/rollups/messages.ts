import { badRequest, notFound } from '../kernel/errors';

/** Messages of rollups (definitions, builds, suggestions). */
export const MSG = {
  rollupNotFound: (id: number) => notFound(`Агрегат не найден (id ${id})`),
  buildNotFound: (id: number) => notFound(`Сборка агрегата не найдена (id ${id})`),
  nameTaken: (name: string) => `Агрегат с именем «${name}» в этом датасете уже есть`,
  unknownField: (id: number) => `Поле не найдено (id ${id})`,
  otherDatasetField: (id: number, datasetId: number) =>
    `Поле id ${id} принадлежит другому датасету (id ${datasetId}): агрегат строится только из полей своего датасета`,
  unknownGranularity: (g: string) => `Неизвестная детализация даты «${g}»: допустимы day, week, month, quarter, year`,
  granularityNotDate: (field: string) =>
    `Детализация по дате применима только к полю даты или даты и времени, а поле «${field}» не такое`,
  duplicateDimension: (field: string) => `Измерение «${field}» с этой детализацией уже есть в агрегате`,
  duplicateMeasure: (field: string, agg: string) => `Мера ${agg}(«${field}») уже есть в агрегате`,
  aggregatingDimension: (field: string) => `Поле «${field}» само агрегирует данные и не может быть измерением агрегата`,
  noMeasures: 'Укажите хотя бы одно измерение или одну меру',
  unknownAggregation: (a: string) => `Неизвестная агрегация «${a}»: допустимы SUM, COUNT, MIN, MAX, AVG`,
  notAdditive: (field: string, why: string) => `Мера «${field}» не складывается: ${why}`,
  distinctWhy: 'число различных значений (COUNT DISTINCT) нельзя собрать из итогов групп; храните поле измерением',
  medianWhy: (fn: string) => `${fn} нельзя собрать из итогов групп`,
  formulaAggregates: (fns: string) =>
    `формула поля уже агрегирует (${fns}); укажите в мере поле, которое она агрегирует, и нужную агрегацию`,
  formulaParameter: (field: string) =>
    `Поле «${field}» зависит от параметра датасета: агрегат хранит одно значение, а параметр меняется в запросе`,
  notNumeric: (field: string, agg: string) => `${agg} применима только к числовым полям, а поле «${field}» не числовое`,
  liveWithExtract:
    'Датасет работает с источником напрямую (live): у него нет синхронизаций, задайте обновление по расписанию (refresh.mode = schedule)',
  cronNeeded: 'Укажите расписание (cron) для обновления по расписанию',
  unknownTimezone: (tz: string) => `Неизвестный часовой пояс: ${tz}`,
  alreadyBuilding: (buildId: number) =>
    badRequest(`Агрегат уже собирается: дождитесь окончания или отмените сборку ${buildId}`),
  finished: (state: string) => badRequest(`Сборка уже завершена (состояние ${state}): отменять нечего`),
  notSynchronised: (datasetId: number) =>
    badRequest(
      `Датасет материализован, а его данные ещё не загружены: агрегат строится из извлечения, нужна первая синхронизация (POST /api/datasets/${datasetId}/extracts)`,
    ),
  queued: 'Сборка поставлена в очередь',
  queuedSchedule: 'Сборка по расписанию',
  queuedExtract: 'Сборка после синхронизации датасета',
  started: 'Сборка начата',
  grouping: (where: string) => `Группировка ${where}`,
  succeeded: (rows: number) => `Сборка завершена: строк в агрегате ${rows}`,
  cancelled: 'Сборка отменена',
  cancelRequested: 'Запрошена отмена',
  failed: (reason: string) => `Сборка не удалась: ${reason}. Прежняя версия агрегата осталась в работе`,
  lost: 'Процесс, выполнявший сборку, остановился: прежняя версия агрегата осталась в работе',
  queuedLost: 'Сборка так и не началась: её задание в очереди потеряно. Прежняя версия агрегата осталась в работе',
  definitionChanged: 'измерения или меры агрегата изменились во время сборки; соберите его снова',
  storageUnavailable: 'Хранилище агрегатов недоступно, повторите запрос позже',
  // suggestions
  notServedHidden: 'виджет не читает данные датасета',
  notServedMeasure: (what: string) => `мера ${what} не складывается из итогов групп`,
  notServedExpression: (what: string) =>
    `выражение ${what} не сводится к полям датасета и агрегатам SUM, COUNT, MIN, MAX, AVG`,
  notServedParameter: 'запрос зависит от параметров датасета',
};
