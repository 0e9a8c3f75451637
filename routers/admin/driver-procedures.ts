import { z } from 'zod';
import { deleteDriver, listDrivers } from '../../server/admin/drivers';
import { sysadminProcedure } from '../trpc';
import { deletedOutput, entityId } from '../common';
import { listDriversOutput } from './schemas';

const tags = ['Administration'];

/**
 * admin.listDrivers and admin.deleteDriver (GET /api/admin/drivers, DELETE /api/admin/drivers/{id}): spread into the
 * admin router. The upload is raw.ts.
 */
export const driverProcedures = {
  listDrivers: sysadminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/admin/drivers', summary: 'Installed database drivers', tags } })
    .input(z.void())
    .output(listDriversOutput)
    .query(({ ctx }) => listDrivers(ctx.deps)),

  deleteDriver: sysadminProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/admin/drivers/{id}', summary: 'Remove a driver', tags } })
    .input(z.strictObject({ id: entityId() }))
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDriver(ctx.deps, input.id)),
};
