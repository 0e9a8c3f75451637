import { describe, expect, it } from 'vitest';
import { AppError } from '../../../server/kernel/errors';
import {
  nextSecrets,
  normalizeSettings,
  overrideSettings,
  secretChanges,
  settingsView,
} from '../../../server/data-sources/settings';

const fieldErrors = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, errors: e.fieldErrors };
    throw e;
  }
  throw new Error('did not throw');
};

describe('normalizeSettings', () => {
  it('fills the kind defaults and keeps no secret', () => {
    expect(normalizeSettings('postgresql', { host: ' db ', password: 'x' })).toEqual({
      host: 'db',
      port: 5432,
      username: '',
      db: '',
      use_ssh: false,
    });
    expect(normalizeSettings('clickhouse', { host: 'ch' })).toMatchObject({ port: 9000, http_port: 8123 });
    const full = normalizeSettings('mysql', {
      host: 'h',
      port: 3307,
      use_ssh: true,
      ssh_tunnel: { host: 'b', username: 'u', private_key: 'K' },
      ssl: { enabled: true, key: 'SSLKEY', ca: 'CA' },
      initial_sql: 'SET NAMES utf8mb4',
    });
    expect(full).toEqual({
      host: 'h',
      port: 3307,
      username: '',
      db: '',
      use_ssh: true,
      ssh_tunnel: { host: 'b', port: 22, username: 'u' },
      ssl: { enabled: true, reject_unauthorized: true, ca: 'CA' },
      initial_sql: 'SET NAMES utf8mb4',
    });
    expect(JSON.stringify(full)).not.toMatch(/SSLKEY|"K"/);
  });

  it('answers 422 with field paths for what the kind cannot take', () => {
    expect(fieldErrors(() => normalizeSettings('postgresql', { host: ' ', http_port: 1, use_ssh: true }))).toEqual({
      status: 422,
      errors: {
        'settings.host': 'must not be blank',
        'settings.httpPort': 'is not used by postgresql sources',
        'settings.sshTunnel': 'must not be null when useSsh is true',
      },
    });
    expect(
      fieldErrors(() => normalizeSettings('mysql', { host: 'h', ssh_tunnel: { host: '', username: '' } })).errors,
    ).toEqual({
      'settings.sshTunnel.host': 'must not be blank',
      'settings.sshTunnel.username': 'must not be blank',
    });
    expect(fieldErrors(() => normalizeSettings('file', {})).errors).toEqual({
      type: 'file sources are created by uploading a file: POST /api/files',
    });
  });
});

describe('secrets', () => {
  it('reads omitted and "" as unchanged, null as removed', () => {
    expect(
      secretChanges({
        password: '',
        ssh_tunnel: { host: 'h', username: 'u', password: null, private_key: 'PK' },
        ssl: { enabled: true, key: undefined },
      }),
    ).toEqual({
      set: { ssh_private_key: 'PK' },
      cleared: ['ssh_password'],
    });
  });

  it('keeps omitted secrets and drops those whose block is gone', () => {
    const stored = { password: 'p', ssh_password: 's', ssh_private_key: 'k', ssl_key: 'sk' };
    const keepAll = { host: 'h', ssh_tunnel: { host: 'b', username: 'u' }, ssl: { enabled: true } };
    expect(nextSecrets(stored, keepAll, normalizeSettings('mysql', keepAll))).toEqual(stored);
    const noBlocks = { host: 'h', password: 'new' };
    expect(nextSecrets(stored, noBlocks, normalizeSettings('mysql', noBlocks))).toEqual({ password: 'new' });
    const cleared = { host: 'h', password: null };
    expect(nextSecrets(stored, cleared, normalizeSettings('mysql', cleared))).toEqual({});
  });

  it('shows only whether each secret is stored', () => {
    const plain = normalizeSettings('mysql', {
      host: 'h',
      ssh_tunnel: { host: 'b', username: 'u' },
      ssl: { enabled: true },
    });
    const view = settingsView('mysql', { ...plain, password: 'LEAK' } as never, {
      password: 'p',
      ssh_private_key: 'k',
    });
    expect(view).toEqual({
      host: 'h',
      port: 3306,
      username: '',
      db: '',
      use_ssh: false,
      password_set: true,
      ssh_tunnel: {
        host: 'b',
        port: 22,
        username: 'u',
        password_set: false,
        private_key_set: true,
        passphrase_set: false,
      },
      ssl: { enabled: true, reject_unauthorized: true, key_set: false },
    });
    expect(
      settingsView(
        'file',
        {
          file: { duckdb_path: '/x.duckdb', tables: ['t'] },
          upload: { stored_file: 'files/x', format: 'csv' },
        } as never,
        {},
      ),
    ).toEqual({
      file: { tables: ['t'], format: 'csv' },
    });
  });

  it('applies check overrides over the saved settings', () => {
    const saved = normalizeSettings('postgresql', { host: 'h', db: 'a', username: 'u' });
    expect(overrideSettings(saved, { db: 'b', port: undefined })).toMatchObject({
      host: 'h',
      db: 'b',
      username: 'u',
      port: 5432,
    });
  });
});
