import { notFound } from '../kernel/errors';

/** Messages of the dataset area. Those the specification lists are kept word for word. */
export const MSG = {
  idRequired: 'Object id is required (use a negative temp id for new objects)',
  derivedFormula: 'formula у производного поля генерируется из derivation и не принимается',
  kindChange: 'Field kind cannot change (calculated ↔ physical)',
  fieldNotFound: (id: number) => `Поле датасета не найдено (id ${id})`,
  objectNotFound: (id: number) => `Объект датасета не найден (id ${id})`,
  relationNotFound: (id: number) => `Связь датасета не найдена (id ${id})`,
  hierarchyNotFound: (id: number) => `Иерархия датасета не найдена (id ${id})`,
  filterNotFound: (id: number) => `Фильтр датасета не найден (id ${id})`,
  parameterNotFound: (id: number) => `Параметр датасета не найден (id ${id})`,
  datasetNotFound: (id: number) => `Датасет не найден (id ${id})`,
  sourceNotFound: (id: number) => `Источник данных не найден (id ${id})`,
  sourceNotInDataset: (id: number) => `Источник данных не подключён к датасету (id ${id})`,
  sourceInUse: (id: number) => `Источник данных используется объектами датасета (id ${id})`,
  duplicateId: (id: number) => `Повторяющийся id ${id}`,
  duplicateName: 'Имя уже используется в датасете',
  nameWithDot: 'Имя не может содержать точку: она отделяет объект от поля в ссылке [объект.поле]',
  nameWithLineBreak: 'Имя не может содержать перевод строки',
  parameterNameTaken: 'Имя уже используется вычисляемым полем',
  notForPhysical: (key: string) => `У физического поля ${key} не задаётся`,
  notForCalculated: (key: string) => `У вычисляемого поля ${key} не задаётся`,
  fieldNotOfObject: (id: number) => `Поле не принадлежит объекту этой стороны связи (id ${id})`,
  sameObjects: 'Связь должна соединять два разных объекта',
  duplicateLevel: (id: number) => `Поле повторяется в иерархии (id ${id})`,
  unknownFunction: (name: string) => `Неизвестная функция ${name}`,
  aggregateDerivation: (name: string) => `Агрегатная функция ${name} не подходит для производного поля`,
  sqlObject: 'Допускается один запрос SELECT (или WITH ... SELECT) без точки с запятой внутри',
  sqlObjectOwner: 'SQL-запрос в датасете может задать только владелец источника',
  rangeType: (type: string) => `Диапазон не задаётся для типа ${type}`,
  usedByWidgets: (count: number) => `Датасет используется виджетами (${count}): сначала удалите или перенастройте их`,
} as const;

export const datasetNotFound = (id: number) => notFound(MSG.datasetNotFound(id));
