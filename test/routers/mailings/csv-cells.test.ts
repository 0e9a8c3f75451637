import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniq } from '../../support/factories';
import { ok } from '../../support/rest';
import { createPgSource, sourceDb } from '../widgets/world';
import { createOrdersDataset, ordersWidget, toOf, useMailingWorld, waitRun, type MailingView } from './world';

/*
 * A mailing's csv attachment is written by the same writer as POST /api/exports: text a spreadsheet would run as a
 * formula arrives with a leading apostrophe, the integer sums (-5 among them) as they are.
 */

const world = useMailingWorld();
const { t, api, owner } = world;
let db: pg.Client;
let table: string;
let widgetId: number;

// Regions (text) and their amounts: each region one row, so its sum is its amount.
const ORDERS: [string, number][] = [
  ['=1+2', 1],
  ['@SUM(A1)', 2],
  ['+7', 3],
  ['-5', -5],
  ['\tx', 4],
  ['\rx', 6],
  ['юг', 7],
];

beforeAll(async () => {
  db = await sourceDb();
  table = uniq('m_formulas');
  await db.query(`CREATE TABLE ${table} (region text, manager_email text, amount int)`);
  for (const [region, amount] of ORDERS)
    await db.query(`INSERT INTO ${table} VALUES ($1, 'x@example.test', $2)`, [region, amount]);
  const sourceId = await createPgSource(t.deps, world.cast.workspaceId, world.cast.users.wsAdmin.id);
  const ds = await createOrdersDataset(api, world.cast.tokens.wsAdmin!, {
    workspaceId: world.cast.workspaceId,
    sourceId,
    table,
  });
  widgetId = await ordersWidget(api, owner(), ds.id);
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

describe('mailing csv attachment', () => {
  it('=, +, -, @, tab and CR-led text gets an apostrophe; the numeric -5 does not', async () => {
    const to = 'formulas@example.test';
    const m = ok<MailingView>(
      await api.post(
        '/api/mailings',
        {
          name: 'Формулы',
          workspace_id: world.cast.workspaceId,
          channel_id: world.channelId,
          subject: 'Заказы',
          body: 'Отчёт',
          recipients: { emails: [to] },
          widget_ids: [widgetId],
          format: 'csv',
        },
        owner(),
      ),
    );
    const before = world.inbox.letters.length;
    const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
    expect(await waitRun(api, owner(), m.id, run_id, 120_000)).toMatchObject({ state: 'succeeded', letters_sent: 1 });
    const [mail] = world.inbox.letters.slice(before);
    expect(toOf(mail)).toEqual([to]);
    expect(mail.attachments.map((a) => a.filename)).toEqual(['Продажи.csv']);
    const [header, ...rows] = mail.attachments[0].content.toString('utf8').split('\n');
    expect(header).toBe('\ufeffРегион,Сумма');
    // The rows in the file's order by region depend on the source's collation; each row is compared whole.
    expect(rows.sort()).toEqual(['', "'\tx,4", `"'\rx",6`, "'+7,3", "'-5,-5", "'=1+2,1", "'@SUM(A1),2", 'юг,7'].sort());
  });
});
