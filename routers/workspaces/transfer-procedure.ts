import { z } from 'zod';
import { authedProcedure } from '../trpc';
import { transferObjects, type TransferInput, type TransferResult } from '../../server/workspaces/transfer';
import { entityId, type Accepts, type Mirrors } from '../common';

const objectType = z.enum(['data_source', 'dataset', 'widget', 'dashboard']);

const transferBody = {
  target_workspace_id: entityId().describe('A shared workspace where the caller is Редактор or Администратор'),
  objects: z
    .array(z.strictObject({ type: objectType, id: entityId() }))
    .min(1)
    .max(10_000)
    .describe('Objects of the personal workspace {id}'),
  include_dependencies: z
    .boolean()
    .default(false)
    .describe(
      'Move what the objects need too (dashboard -> widgets -> datasets -> sources); without it such a dependency left behind is refused',
    ),
};
const transferInput = z.strictObject({ id: entityId(), ...transferBody });
const transferOutput = z.object({
  workspace_id: z.number().int(),
  target_workspace_id: z.number().int(),
  objects: z.array(z.object({ type: objectType, id: z.number().int(), name: z.string() })),
});

const _in: Mirrors<TransferInput, Omit<z.output<typeof transferInput>, 'id'>> = true;
const _out: Accepts<z.output<typeof transferOutput>, TransferResult> = true;
void [_in, _out];

/** Spread into the workspace router (routers/workspaces/router.ts). */
export const transferProcedures = {
  transfer: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/workspaces/{id}/transfer',
        summary: 'Move objects from a personal workspace to a shared one',
        description:
          'Irreversible, in one transaction; the objects keep their ids and leave the personal workspace {id}. With `include_dependencies` what they need moves too; otherwise a dependency that would stay behind is refused (400), as is an object staying behind that needs a moved one (a widget beside its dataset, a dashboard beside its widgets); a personal dataset may keep reading a moved source. Access: the owner of the personal workspace (else 403; 404 when not visible), Редактор or Администратор in the target (else 403).',
        tags: ['Workspaces and transfer'],
      },
    })
    .input(transferInput)
    .output(transferOutput)
    .mutation(({ ctx, input: { id, ...body } }) => transferObjects(ctx.deps, ctx.actor, id, body)),
};
