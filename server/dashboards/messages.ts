import { notFound } from '../kernel/errors';

/** Messages of the dashboard area (404s in the specification's form «… не найден (id …)»). */
export const MSG = {
  widgetNotFound: (id: number) => `Виджет не найден (id ${id})`,
  fieldNotFound: (id: number) => `Поле датасета не найдено (id ${id})`,
  tabNotFound: (id: string) => `Вкладка дашборда не найдена (id ${id})`,
  tabRequired: 'Укажите вкладку: у дашборда есть вкладки',
  noTabs: 'У дашборда нет вкладок',
  widgetNotPlaced: (id: number) => `Виджет не размещён на дашборде (id ${id})`,
  otherDataset: (id: number) => `Виджет построен на другом датасете (id ${id})`,
  duplicateId: (id: string) => `Повторяющийся id ${id}`,
  selectorNotFound: (id: string) => `Селектор дашборда не найден (id ${id})`,
  parameterNotFound: (name: string) => `Параметр дашборда не найден: ${name}`,
  duplicateName: (name: string) => `Повторяющееся имя ${name}`,
};

export const dashboardNotFound = (id: number) => notFound(`Дашборд не найден (id ${id})`);
