import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll } from 'vitest';
import type { z } from 'zod';
import type { channelOutput } from '../../../routers/mail-channels/schemas';
import type { letterPage, mailingOutput, runOutput } from '../../../routers/mailings/schemas';
import type { AppDeps } from '../../../server/app/deps';
import { useTestApp, type TestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok, type Rest } from '../../support/rest';
import { createPgSource, sourceDb } from '../widgets/world';

/*
 * The world of mailing tests: a real SMTP server on loopback (smtp-server, STARTTLS with the fixed test certificate
 * of test/fixtures/mail, AUTH on) whose letters are parsed with mailparser, and a small orders table to slice.
 */

export type MailingView = z.output<typeof mailingOutput>;
export type RunView = z.output<typeof runOutput>;
export type LetterPage = z.output<typeof letterPage>;
export type ChannelView = z.output<typeof channelOutput>;

// The test certificate is self-signed: this test process trusts it.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

const FIXTURES = path.join(import.meta.dirname, '../../fixtures/mail');
const SMTP_USER = 'mailer';
const SMTP_PASSWORD = 'секрет-42';

export interface Inbox {
  port: number;
  letters: ParsedMail[];
  /** Addresses the server refuses (RCPT TO answered 550). */
  refuse: Set<string>;
  /** Milliseconds the server takes to accept each letter. */
  delayMs: number;
  /**
   * Addresses whose letter the server takes in full (recorded in `letters`) but never answers: the sender waits for
   * the reply, so the letter is surely in flight while the test stops the sending node.
   */
  hold: Set<string>;
  /** Resolves once a letter to this held address has arrived (and is waiting for its answer). */
  held(address: string): Promise<void>;
  close(): Promise<void>;
}

export async function startInbox(): Promise<Inbox> {
  const letters: ParsedMail[] = [];
  const refuse = new Set<string>();
  const arrived = new Map<string, () => void>();
  const arrivals = new Map<string, Promise<void>>();
  const arrival = (address: string) => {
    let p = arrivals.get(address);
    if (!p) arrivals.set(address, (p = new Promise<void>((r) => arrived.set(address, r))));
    return p;
  };
  const inbox: Inbox = {
    port: 0,
    letters,
    refuse,
    delayMs: 0,
    hold: new Set(),
    held: arrival,
    close: async () => undefined,
  };
  const server = new SMTPServer({
    key: readFileSync(path.join(FIXTURES, 'key.pem')),
    cert: readFileSync(path.join(FIXTURES, 'cert.pem')),
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return cb(null, { user: auth.username });
      return cb(Object.assign(new Error('Authentication failed: bad credentials'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      if (refuse.has(address.address.toLowerCase()))
        return cb(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream, { keepCidLinks: true })
        .then(async (mail) => {
          if (inbox.delayMs) await new Promise((r) => setTimeout(r, inbox.delayMs));
          letters.push(mail);
          const held = session.envelope.rcptTo.map((a) => a.address.toLowerCase()).find((a) => inbox.hold.has(a));
          if (held) {
            void arrival(held);
            arrived.get(held)!();
            return; // never answered: the connection stays open until the sender goes away
          }
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  inbox.port = (server.server.address() as AddressInfo).port;
  inbox.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return inbox;
}

export const toOf = (m: ParsedMail) =>
  (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).flatMap((a) => a.value.map((v) => v.address?.toLowerCase()));

export async function createChannel(api: Rest, sysadmin: string, port: number, password = SMTP_PASSWORD) {
  return ok<ChannelView>(
    await api.post(
      '/api/mail-channels',
      {
        name: uniq('smtp'),
        host: '127.0.0.1',
        port,
        security: 'starttls',
        username: SMTP_USER,
        password,
        from_address: 'reports@example.test',
        from_name: 'Отчёты',
      },
      sysadmin,
    ),
  );
}

const ORDERS: [string, string, number][] = [
  ['north', 'boss-n@example.test, deputy-n@example.test', 10],
  ['north', 'boss-n@example.test', 5],
  ['south', 'boss-s@example.test', 7],
  ['east', 'boss-e@example.test', 3],
];

async function createOrdersTable(c: pg.Client): Promise<string> {
  const name = uniq('m_orders');
  await c.query(`CREATE TABLE ${name} (region text, manager_email text, amount int)`);
  for (const o of ORDERS) await c.query(`INSERT INTO ${name} VALUES ($1, $2, $3)`, o);
  return name;
}

/** A dataset over the orders table, saved through REST. */
export async function createOrdersDataset(
  api: Rest,
  token: string,
  opts: { workspaceId: number; sourceId: number; table: string },
) {
  const id = ok<{ id: number }>(
    await api.post(
      '/api/dataset',
      { name: uniq('ds'), workspace_id: opts.workspaceId, live: true, data_source_ids: [opts.sourceId] },
      token,
    ),
  ).id;
  const f = (fid: number, name: string, primitive_type: string) => ({
    id: fid,
    object_id: -1,
    name,
    column: name,
    primitive_type,
  });
  ok(
    await api.put(
      `/api/dataset/${id}/schema`,
      {
        objects: [{ id: -1, data_source_id: opts.sourceId, name: 'orders', schema: 'public', table: opts.table }],
        fields: [f(-11, 'region', 'string'), f(-12, 'manager_email', 'string'), f(-13, 'amount', 'integer')],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      token,
    ),
  );
  const details = ok<{ fields: { id: number; name: string }[] }>(await api.get(`/api/dataset/${id}`, token));
  const fieldId = (name: string) => details.fields.find((x) => x.name === name)!.id;
  return { id, fieldId };
}

/** A table widget: amount by region. */
export async function ordersWidget(api: Rest, token: string, datasetId: number): Promise<number> {
  return ok<{ id: number }>(
    await api.post(
      '/api/widget',
      {
        name: 'Продажи',
        dataset_id: datasetId,
        type: 'table',
        rows: [{ id: 'r', sql: '[orders.region]', alias: 'Регион' }],
        columns: [{ id: 's', sql: 'SUM([orders.amount])', alias: 'Сумма' }],
        sorts: [{ field_id: 'r', direction: 'asc' }],
      },
      token,
    ),
  ).id;
}

export async function waitRun(api: Rest, token: string, mailingId: number, runId: number, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const run = ok<RunView>(await api.get(`/api/mailings/${mailingId}/runs/${runId}`, token));
    if (run.state === 'succeeded' || run.state === 'failed') return run;
    if (Date.now() > until) throw new Error(`run ${runId} still ${run.state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A handle a fixture's beforeAll fills: reaching it earlier is a clear error, not an undefined deep in a test. */
function filled<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is used before its beforeAll has run`);
  return value;
}

/**
 * The inbox and an orders table for one test file, started by a beforeAll and removed by an afterAll registered here.
 * afterAll hooks run in reverse order, so a file's own afterAll registered after this call runs first (a node still
 * talking to the inbox is stopped before the inbox closes).
 */
export function useOrdersInbox(): { readonly inbox: Inbox; readonly table: string } {
  let inbox: Inbox | undefined;
  let db: pg.Client | undefined;
  let table: string | undefined;
  beforeAll(async () => {
    inbox = await startInbox();
    db = await sourceDb();
    table = await createOrdersTable(db);
  });
  afterAll(async () => {
    await inbox?.close();
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.end();
  });
  return {
    get inbox() {
      return filled(inbox, 'the inbox');
    },
    get table() {
      return filled(table, 'the orders table');
    },
  };
}

export interface MailingWorld {
  t: TestApp;
  api: Rest;
  readonly cast: RoleCast;
  readonly inbox: Inbox;
  readonly table: string;
  /** A channel that sends to the inbox. */
  readonly channelId: number;
  /** The token of the mailings' owner, the editor. */
  owner(): string;
  /** A dataset over the orders table in a workspace (the cast's by default), saved by its Администратор (wsAdmin). */
  ordersDataset(workspaceId?: number): ReturnType<typeof createOrdersDataset>;
}

/**
 * The world of one mailing test file: its app, a role cast, the inbox, the orders table and a channel to the inbox.
 * Its handles are read inside hooks and tests (they are filled by the fixture's beforeAll); hooks a file registers
 * after this call see them ready and run their clean-up before the world is taken down.
 */
export function useMailingWorld(): MailingWorld {
  const { t, api } = useTestApp();
  const orders = useOrdersInbox();
  let cast: RoleCast | undefined;
  let channelId: number | undefined;
  beforeAll(async () => {
    cast = await createRoleCast(t.deps, api);
    channelId = (await createChannel(api, cast.tokens.sysadmin!, orders.inbox.port)).id;
  });
  const world: MailingWorld = {
    t,
    api,
    get cast() {
      return filled(cast, 'the role cast');
    },
    get inbox() {
      return orders.inbox;
    },
    get table() {
      return orders.table;
    },
    get channelId() {
      return filled(channelId, 'the channel');
    },
    owner: () => world.cast.tokens.editor!,
    async ordersDataset(workspaceId = world.cast.workspaceId) {
      const sourceId = await createPgSource(t.deps, workspaceId, world.cast.users.wsAdmin.id);
      return createOrdersDataset(api, world.cast.tokens.wsAdmin!, { workspaceId, sourceId, table: orders.table });
    },
  };
  return world;
}

/**
 * A CSV mailing of the orders widget to `emails` through a channel to the inbox on `inboxPort`, in the cast's
 * workspace, owned by its Администратор (wsAdmin): the source row, dataset, widget and channel made for it.
 */
export async function createOrdersMailing(
  deps: AppDeps,
  api: Rest,
  o: { cast: RoleCast; inboxPort: number; table: string; name: string; emails: string[] },
): Promise<MailingView> {
  const { cast } = o;
  const token = cast.tokens.wsAdmin!;
  const channelId = (await createChannel(api, cast.tokens.sysadmin!, o.inboxPort)).id;
  const sourceId = await createPgSource(deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createOrdersDataset(api, token, { workspaceId: cast.workspaceId, sourceId, table: o.table });
  const widgetId = await ordersWidget(api, token, ds.id);
  return ok<MailingView>(
    await api.post(
      '/api/mailings',
      {
        name: o.name,
        workspace_id: cast.workspaceId,
        widget_ids: [widgetId],
        format: 'csv',
        channel_id: channelId,
        recipients: { emails: o.emails },
      },
      token,
    ),
  );
}
