import { WORKSPACE_ROLES } from '../access/roles';

/**
 * Labels the interface shows, in one place so that clients do not hard-code them. Keys are the wire values.
 */
export const WIDGET_KINDS: Record<string, string> = {
  table: 'Таблица',
  pivot: 'Сводная таблица',
  bar: 'Столбчатая диаграмма',
  line: 'Линейная диаграмма',
  area: 'Диаграмма с областями',
  pie: 'Круговая диаграмма',
  scatter: 'Точечная диаграмма',
  kpi: 'Показатель (KPI)',
};

export const SOURCE_KIND_LABELS: Record<string, string> = {
  postgresql: 'PostgreSQL',
  mysql: 'MySQL / MariaDB',
  clickhouse: 'ClickHouse',
  file: 'Файл',
};

export function dictionary() {
  return {
    statuses: { new: 'Новый', changed: 'Изменён', same: 'Без изменений', target_only: 'Только здесь' },
    stages: { '0': 'Разработка', '1': 'Тест', '2': 'Прод' },
    pipeline_binding: { none: 'Не настроен', partial: 'Привязано {n} из 3' },
    workspace_types: { personal: 'Личное', shared: 'Общее' },
    roles: Object.fromEntries(WORKSPACE_ROLES.map((r) => [r, r])),
    widget_kinds: WIDGET_KINDS,
    source_kinds: SOURCE_KIND_LABELS,
    deploy_hints: {
      stages_unbound: 'Обе стадии должны быть привязаны к пространствам',
      target_admin_required: 'Нужны права администратора в целевом пространстве',
      nothing_selected: 'Выберите объекты в левой колонке',
    },
  };
}
