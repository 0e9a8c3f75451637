import type { DeployKind } from './map';

/** The kinds as the deploy's messages and warning lines name them. */
export const OBJECT_LABEL: Record<DeployKind, string> = {
  data_source: 'Источник данных',
  dataset: 'Датасет',
  widget: 'Виджет',
  dashboard: 'Дашборд',
};

/** Warning lines of a deploy result (spec rules 5 and 6). */
export const WARN = {
  sameName: (type: DeployKind, name: string) =>
    `${OBJECT_LABEL[type]} «${name}»: в целевом пространстве уже есть объект с таким именем, создан второй`,
  noRule: (name: string) =>
    `Источник данных «${name}»: нет правила подстановки, копия использует подключение исходной стадии`,
  materialised: (name: string) =>
    `Датасет «${name}» материализован: данные экстракта не переносятся, копии нужна первая синхронизация`,
};
