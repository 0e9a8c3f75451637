import { badRequest, notFound } from '../kernel/errors';

/** Messages of extracts and ETL runs. */
export const MSG = {
  runNotFound: (id: number) => notFound(`ETL-запуск не найден (id ${id})`),
  liveDataset: (id: number) =>
    badRequest(`Датасет работает с источником напрямую (live = true): у него нет извлечения данных (id ${id})`),
  alreadyRunning: (runId: number) =>
    badRequest(`Синхронизация датасета уже выполняется: дождитесь окончания или отмените запуск ${runId}`),
  finished: (state: string) => badRequest(`Запуск уже завершён (состояние ${state}): отменять нечего`),
  noIncrementalField: 'Для инкрементального режима укажите поле (incremental_field_id)',
  fieldNotInDataset: (id: number) => `Поле не найдено в этом датасете (id ${id})`,
  fieldNotPhysical: (id: number) => `Инкрементальное поле должно быть полем таблицы, а не вычисляемым (id ${id})`,
  unknownTimezone: (tz: string) => `Неизвестный часовой пояс: ${tz}`,
  started: 'Синхронизация начата',
  succeeded: (rows: number) => `Синхронизация завершена: загружено строк ${rows}`,
  cancelled: 'Синхронизация отменена',
  cancelRequested: 'Запрошена отмена',
  cancelledLive:
    'Синхронизация отменена: датасет переключён на работу с источником напрямую (live = true), извлечение данных удалено',
  schemaChanged: (reason: string) =>
    `Структура данных в источнике изменилась (нет таблицы или столбца, которые читает датасет): ${reason}`,
  diskFull: 'На диске сервера не хватает места для файла извлечения: освободите место и повторите синхронизацию',
  lost: 'Процесс, выполнявший синхронизацию, остановился: прежнее извлечение осталось в работе',
  staleField: (datasetId: number, fields: string) =>
    `Извлечение данных устарело: в нём нет поля ${fields}. Запустите синхронизацию датасета (POST /api/datasets/${datasetId}/extracts)`,
  staleObject: (datasetId: number, object: string) =>
    `Извлечение данных устарело: в нём нет объекта ${object}. Запустите синхронизацию датасета (POST /api/datasets/${datasetId}/extracts)`,
  queuedLost:
    'Запуск так и не начался: его задание в очереди потеряно (процесс остановился до начала синхронизации). Прежнее извлечение осталось в работе; запустите синхронизацию снова',
  queuedTooLong: (hours: number) =>
    `Запуск так и не начался за ${hours} ч и снят с очереди. Прежнее извлечение осталось в работе; запустите синхронизацию снова`,
  loadMissing: (datasetId: number) =>
    badRequest(
      `Файл извлечения данных не найден в хранилище: запустите синхронизацию датасета (POST /api/datasets/${datasetId}/extracts)`,
    ),
  storageUnavailable: 'Хранилище извлечений данных недоступно, повторите запрос позже',
  storeFailed: (reason: string) => `Не удалось сохранить извлечение в хранилище: ${reason}`,
  failed: (reason: string) => `Синхронизация не удалась: ${reason}. Прежнее извлечение осталось в работе`,
};
