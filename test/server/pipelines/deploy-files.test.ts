import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataSources } from '../../../db/schema/data-sources';
import { actorOf, type Actor } from '../../../server/auth/actor';
import { deployToNextStage } from '../../../server/pipelines/deploy/deploy';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import { upload } from '../../routers/data-sources/helpers';
import {
  createPipelineWorld,
  deploy,
  type DeployResult,
  type PipelineWorld,
} from '../../routers/pipelines/deploy-world';

/*
 * A file source takes its file along (spec: a file source needs no substitution rule): the copy has a folder of its
 * own; a repeated deploy gives it a fresh one and removes the old after commit; a failed deploy leaves no folder.
 */

const { t, api } = useTestApp();
let w: PipelineWorld;
let sourceId: number;
let actor: Actor;

// File sources' objects in the default store (file://DATA_DIR/storage): files/<uuid>/….
const folderOf = (uuid: string) => path.join(t.deps.config.dataDir, 'storage', 'files', uuid);
const rowOf = async (id: number) => (await t.deps.db.select().from(dataSources).where(eq(dataSources.id, id)))[0];
const folders = () =>
  fs.readdirSync(path.join(t.deps.config.dataDir, 'storage', 'files')).filter((f) => !f.startsWith('.'));

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
  const res = await upload(
    api,
    'POST',
    '/api/files',
    w.tokens.admin,
    { name: 'cities.csv', content: 'id,city\n1,Москва\n2,Казань\n' },
    { workspace_id: String(w.stages[0]) },
  );
  sourceId = ok<{ id: number }>(res).id;
  actor = actorOf(
    t.deps,
    w.admin.id,
    { username: w.admin.username, accountType: 'local', active: true },
    [],
    'session',
  );
});

describe('deploy of a file source', () => {
  it('copies the file into a folder of the copy, with no substitution warning; a repeat replaces the folder', async () => {
    const body = { from_stage: 0, objects: [{ type: 'data_source', id: sourceId }] };
    const first = ok<DeployResult>(await deploy(api, w, body));
    expect(first.warnings).toEqual([]);
    const original = await rowOf(sourceId);
    const copy = await rowOf(first.objects[0].target_id);
    expect(copy.uuid).not.toBe(original.uuid);
    expect(fs.readdirSync(folderOf(copy.uuid))).toEqual(fs.readdirSync(folderOf(original.uuid)));
    expect(JSON.stringify(copy.settings)).toContain(copy.uuid);
    expect(JSON.stringify(copy.settings)).not.toContain(original.uuid);

    const again = ok<DeployResult>(await deploy(api, w, body));
    expect(again.objects[0]).toMatchObject({ target_id: copy.id, action: 'updated' });
    const updated = await rowOf(copy.id);
    expect(updated.uuid).not.toBe(copy.uuid);
    expect(fs.existsSync(folderOf(updated.uuid))).toBe(true);
    expect(fs.existsSync(folderOf(copy.uuid))).toBe(false);
  });

  it('a failed deploy removes the folders it copied', async () => {
    const before = folders().sort();
    await expect(
      deployToNextStage(t.deps, actor, w.pipelineId, { from_stage: 0, objects: [] }, { faultAfter: 'sources' }),
    ).rejects.toThrow('Ничего не развёрнуто');
    expect(folders().sort()).toEqual(before);
  });
});
