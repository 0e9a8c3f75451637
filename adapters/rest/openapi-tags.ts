/**
 * The root `tags` of the OpenAPI document: one per path group of the catalogue, under its Russian name (what the
 * docs page shows as a section heading). Procedures and raw routes tag themselves with the catalogue group name;
 * the document renames them here, so a group without a row is caught by the completeness check.
 */
export interface GroupTag {
  name: string;
  description: string;
}

export const GROUP_TAGS: Record<string, GroupTag> = {
  Sources: {
    name: 'Источники',
    description:
      'Подключения к базам данных, проверка подключения, метаданные, объекты на источнике, чтение данных, SQL-консоль, журнал доступа.',
  },
  Datasets: {
    name: 'Датасеты',
    description: 'Состав датасета, схема, связи, значения полей, зависимости, настройки извлечения, RLS и CLS.',
  },
  'Users and groups': {
    name: 'Пользователи и группы',
    description: 'Учётные записи, членство в группах, атрибуты пользователей для RLS, пароли.',
  },
  'Login and providers': {
    name: 'Вход и провайдеры',
    description: 'Вход по логину и паролю, обновление и завершение сессии, SSO, настройка внешних провайдеров.',
  },
  Pipelines: {
    name: 'Конвейеры публикации',
    description: 'Перенос содержимого между рабочими пространствами: Разработка, Тест, Прод.',
  },
  Administration: { name: 'Администрирование', description: 'Виды источников и их драйверы, провайдер ИИ.' },
  'Public links': {
    name: 'Публичные ссылки',
    description: 'Выпуск и отзыв ссылок на дашборды, страница просмотра по ссылке.',
  },
  Dashboards: { name: 'Дашборды', description: 'Список, свойства, схема и данные дашбордов.' },
  'Workspaces and transfer': {
    name: 'Рабочие пространства и перенос',
    description: 'Рабочие пространства, участники и роли, перенос объектов из личного пространства в общее.',
  },
  'API tokens': {
    name: 'API-токены',
    description: 'Выпуск, приостановка, возобновление и отзыв API-токенов; настройки их выпуска.',
  },
  Widgets: { name: 'Виджеты', description: 'Список, свойства, предпросмотр и данные виджетов.' },
  Notifications: { name: 'Уведомления', description: 'Список уведомлений, число непрочитанных, отметка о прочтении.' },
  Access: { name: 'Доступ', description: 'Права пользователей и групп на объекты.' },
  'ETL runs': { name: 'ETL-запуски', description: 'Состояние запуска, история, отмена.' },
  Rollups: {
    name: 'Агрегаты',
    description: 'Предварительные агрегаты датасета: определение, сборка, история сборок, предложения по виджетам.',
  },
  'AI assistant': { name: 'ИИ-ассистент', description: 'Проверка доступа, генерация формул, SQL и кода виджетов.' },
  'File export': { name: 'Экспорт в файл', description: 'Задание экспорта, его состояние, файл, ограничения.' },
  Mailings: { name: 'Рассылки', description: 'Рассылки, пауза и запуск, оценка среза, история запусков и писем.' },
  'Mail channels': { name: 'Почтовые каналы', description: 'SMTP-каналы и тестовая отправка.' },
  Render: { name: 'Рендеринг', description: 'Внутренние страницы для экспорта; не для клиентов.' },
  Files: { name: 'Файлы', description: 'Загрузка, замена и удаление файлового источника.' },
  Service: { name: 'Сервис', description: 'Настройки установки и словарь интерфейса.' },
};
