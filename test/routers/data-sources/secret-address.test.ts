// A saved password must not follow a source to another address: whoever may edit a source could otherwise point
// it at a server of their own and read the password off the wire there.
import { beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { eq } from 'drizzle-orm';
import { dataSources } from '../../../db/schema/data-sources';
import { closedPort } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, type RestResponse } from '../../support/rest';
import { SERVERS, createSource, ok } from './helpers';
import type { z } from 'zod';
import type { checkOutput, dataSourceView } from '../../../routers/data-sources/schemas';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

const SAVED = 'Saved-pa55word-of-the-source';

type CheckBody = z.output<typeof checkOutput>;
type SourceBody = z.output<typeof dataSourceView>;

/**
 * A loopback "PostgreSQL server" that asks for the password in clear text and writes down what it receives:
 * what a server of an attacker's choosing would do.
 */
async function passwordTrap(): Promise<{ port: number; captured: string[]; close(): Promise<void> }> {
  const captured: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let started = false;
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!started) {
        if (buf.length < 8) return;
        const len = buf.readInt32BE(0);
        if (buf.readInt32BE(4) === 80877103) {
          // SSLRequest: no TLS here
          sock.write('N');
          buf = buf.subarray(8);
          return;
        }
        if (buf.length < len) return;
        buf = buf.subarray(len);
        started = true;
        const ask = Buffer.alloc(9);
        ask.write('R');
        ask.writeInt32BE(8, 1);
        ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
        sock.write(ask);
      }
      if (buf.length >= 5 && buf[0] === 0x70) {
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) return;
        captured.push(
          buf
            .subarray(5, 1 + len)
            .toString('utf8')
            .replace(/\0$/, ''),
        );
        sock.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    captured,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function expect400(res: RestResponse, message: string) {
  expect(res.status).toBe(400);
  expect(failure(res).message).toBe(message);
}

describe('POST /api/data-source/{id}/check with another address', () => {
  it('does not send the saved password to a changed host or port; a password sent again is used', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SAVED },
    });
    const trap = await passwordTrap();
    try {
      const url = `/api/data-source/${src.id}/check`;
      expect400(
        await api.post(url, { settings: { port: trap.port } }, cast.tokens.wsAdmin),
        'Адрес или защита подключения изменены: укажите пароль заново',
      );
      expect400(
        await api.post(url, { settings: { host: 'localhost', port: trap.port } }, cast.tokens.editor),
        'Адрес или защита подключения изменены: укажите пароль заново',
      );
      for (const change of [{ username: 'someone_else' }, { db: 'other_db' }]) {
        expect400(
          await api.post(url, { settings: change }, cast.tokens.editor),
          'Адрес или защита подключения изменены: укажите пароль заново',
        );
      }
      expect(trap.captured).toEqual([]);
      // the caller's own password goes where the caller says
      const own = ok<CheckBody>(
        await api.post(url, { settings: { port: trap.port, password: 'typed-again' } }, cast.tokens.wsAdmin),
      );
      expect(own.ok).toBe(false);
      expect(trap.captured).toEqual(['typed-again']);
      // the same address keeps using the saved password
      expect(ok<CheckBody>(await api.post(url, { settings: { initial_sql: 'SELECT 1' } }, cast.tokens.editor)).ok).toBe(
        true,
      );
    } finally {
      await trap.close();
    }
  });

  it('does not send the saved password over a connection whose TLS protection was weakened', async () => {
    const ssl = { enabled: true, reject_unauthorized: true, ca: 'CA-ONE' };
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SAVED, ssl },
    });
    const url = `/api/data-source/${src.id}/check`;
    for (const weaker of [
      { enabled: false },
      { ...ssl, reject_unauthorized: false },
      { ...ssl, ca: 'CA-OF-SOMEONE-ELSE' },
    ]) {
      expect400(
        await api.post(url, { settings: { ssl: weaker } }, cast.tokens.wsAdmin),
        'Адрес или защита подключения изменены: укажите пароль заново',
      );
    }
    // the same protection keeps the saved password (the local server speaks no TLS: what matters is that it went)
    const same = ok<CheckBody>(await api.post(url, { settings: { ssl } }, cast.tokens.editor));
    expect(same.message).not.toMatch(/укажите/);
    // turning checks back on is no weakening
    const plainFirst = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SAVED },
    });
    const stronger = ok<CheckBody>(
      await api.post(`/api/data-source/${plainFirst.id}/check`, { settings: { ssl } }, cast.tokens.editor),
    );
    expect(stronger.message).not.toMatch(/укажите/);
  });

  it('does not use the saved SSH password or key for a changed SSH server', async () => {
    const [sshA, sshB] = [await closedPort(), await closedPort()];
    const src = await createSource(api, cast.tokens.editor, 'mysql', {
      workspace_id: cast.workspaceId,
      settings: {
        use_ssh: true,
        ssh_tunnel: { host: '127.0.0.1', port: sshA, username: 'tunnel', private_key: 'PRIVATE-KEY-TEXT' },
      },
    });
    const url = `/api/data-source/${src.id}/check`;
    for (const tunnel of [{ port: sshB }, { username: 'other' }]) {
      const res = await api.post(
        url,
        { settings: { ssh_tunnel: { host: '127.0.0.1', port: sshA, username: 'tunnel', ...tunnel } } },
        cast.tokens.wsAdmin,
      );
      expect400(res, 'Адрес SSH-сервера изменён: укажите пароль или ключ SSH заново');
    }
    const same = ok<CheckBody>(
      await api.post(
        url,
        { settings: { ssh_tunnel: { host: '127.0.0.1', port: sshA, username: 'tunnel' } } },
        cast.tokens.editor,
      ),
    );
    expect(same.ok).toBe(false); // nobody listens there; what matters is that the saved key was allowed to go
    expect(same.message).not.toMatch(/укажите/);
  });
});

describe('PUT /api/data-source/{id} with another address', () => {
  it('clears the saved password when the address changes and no password comes with it', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SAVED },
    });
    const url = `/api/data-source/${src.id}`;
    const renamedDb = ok<SourceBody>(
      await api.put(url, { settings: { ...SERVERS.postgresql(), db: 'postgres' } }, cast.tokens.wsAdmin),
    );
    expect(renamedDb.settings.password_set).toBe(false);
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    expect(row.secrets).toBeNull();

    const withPassword = ok<SourceBody>(
      await api.put(
        url,
        { settings: { ...SERVERS.postgresql(), port: 6543, password: 'new-one' } },
        cast.tokens.editor,
      ),
    );
    expect(withPassword.settings.password_set).toBe(true);
    // same address: the password stays
    const same = ok<SourceBody>(
      await api.put(
        url,
        { settings: { ...SERVERS.postgresql(), port: 6543, initial_sql: 'SELECT 1' } },
        cast.tokens.editor,
      ),
    );
    expect(same.settings.password_set).toBe(true);
  });

  it('clears the saved SSH secrets when the SSH server changes', async () => {
    const src = await createSource(api, cast.tokens.editor, 'mysql', {
      workspace_id: cast.workspaceId,
      settings: {
        password: SAVED,
        use_ssh: true,
        ssh_tunnel: {
          host: '127.0.0.1',
          port: 2201,
          username: 'tunnel',
          password: 'ssh-pass',
          private_key: 'KEY',
          passphrase: 'PHRASE',
        },
      },
    });
    const moved = ok<SourceBody>(
      await api.put(
        `/api/data-source/${src.id}`,
        {
          settings: {
            ...SERVERS.mysql(),
            use_ssh: true,
            ssh_tunnel: { host: '127.0.0.1', port: 2202, username: 'tunnel' },
          },
        },
        cast.tokens.wsAdmin,
      ),
    );
    expect(moved.settings.ssh_tunnel).toMatchObject({
      password_set: false,
      private_key_set: false,
      passphrase_set: false,
    });
    // the database password travels through the tunnel: a new SSH server must not see it either
    expect(moved.settings.password_set).toBe(false);
  });
});
