import type { SourceKindInfo } from '../../adapters/sources';

/**
 * The settings form of a source kind, as data: the interface draws it, and the field names are exactly the keys of
 * `settings` in POST /api/data-source. Secret fields are write-only: reads answer `<name>_set` instead.
 */
export interface SettingsField {
  name: string;
  /** string | integer | boolean | password (secret string) | text (multi-line) | object | file */
  type: 'string' | 'integer' | 'boolean' | 'password' | 'text' | 'object' | 'file';
  label: string;
  required: boolean;
  default: string | number | boolean | null;
  secret: boolean;
  /** For objects (ssl, ssh_tunnel): their own fields. */
  fields?: SettingsField[];
}

const field = (
  name: string,
  type: SettingsField['type'],
  label: string,
  opts: { required?: boolean; default?: SettingsField['default']; fields?: SettingsField[] } = {},
): SettingsField => ({
  name,
  type,
  label,
  required: opts.required ?? false,
  default: opts.default ?? null,
  secret: type === 'password',
  ...(opts.fields ? { fields: opts.fields } : {}),
});

const SSL_FIELDS: SettingsField[] = [
  field('enabled', 'boolean', 'Использовать SSL/TLS', { required: true, default: false }),
  field('reject_unauthorized', 'boolean', 'Проверять сертификат сервера', { default: true }),
  field('ca', 'text', 'Сертификат центра сертификации (PEM)'),
  field('cert', 'text', 'Клиентский сертификат (PEM)'),
  field('key', 'password', 'Закрытый ключ клиента (PEM)'),
];

const SSH_FIELDS: SettingsField[] = [
  field('host', 'string', 'SSH-сервер', { required: true }),
  field('port', 'integer', 'Порт SSH', { default: 22 }),
  field('username', 'string', 'Пользователь SSH', { required: true }),
  field('password', 'password', 'Пароль SSH'),
  field('private_key', 'password', 'Закрытый ключ SSH (PEM или OpenSSH)'),
  field('passphrase', 'password', 'Пароль закрытого ключа'),
];

export function settingsFormOf(info: SourceKindInfo): SettingsField[] {
  if (info.type === 'file') {
    // File sources are created by an upload (POST /api/files, multipart); these are its form fields.
    return [
      field('file', 'file', 'Файл CSV, XLSX или Parquet', { required: true }),
      field('sheet', 'string', 'Лист книги XLSX (по умолчанию все непустые листы)'),
      field('has_header', 'boolean', 'Первая строка содержит заголовки (по умолчанию определяется)'),
      field('delimiter', 'string', 'Разделитель CSV (по умолчанию определяется)'),
    ];
  }
  const fields: SettingsField[] = [
    field('host', 'string', 'Адрес сервера', { required: true }),
    field('port', 'integer', 'Порт', { default: info.default_port }),
  ];
  if (info.default_http_port !== null)
    fields.push(field('http_port', 'integer', 'HTTP-порт', { default: info.default_http_port }));
  fields.push(
    field('username', 'string', 'Пользователь'),
    field('password', 'password', 'Пароль'),
    field('db', 'string', info.type === 'postgresql' ? 'База данных' : 'База данных (схема по умолчанию)'),
  );
  if (info.supports.ssl) fields.push(field('ssl', 'object', 'SSL/TLS', { fields: SSL_FIELDS }));
  if (info.supports.ssh) {
    fields.push(field('use_ssh', 'boolean', 'Подключаться через SSH-туннель', { default: false }));
    fields.push(field('ssh_tunnel', 'object', 'SSH-туннель', { fields: SSH_FIELDS }));
  }
  if (info.supports.initial_sql)
    fields.push(field('initial_sql', 'text', 'Начальный SQL (выполняется при каждом подключении)'));
  return fields;
}
