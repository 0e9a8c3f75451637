/** Messages of the public viewer of a share link. */
export const MSG = {
  deadLink: 'Ссылка не найдена или больше не действует',
  widgetNotFound: (id: number) => `Виджет не найден (id ${id})`,
  datasetNotFound: (id: number) => `Датасет не найден (id ${id})`,
  fieldNotFound: (id: number) => `Поле датасета не найдено (id ${id})`,
  notOnWidget: 'Сортировать можно только по полям виджета',
};
