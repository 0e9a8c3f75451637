import { z } from 'zod';
import { dictionary } from '../../server/service/dictionary';
import { getInstallationSettings, updateInstallationSettings } from '../../server/service/installation';
import { authedProcedure, router, sysadminProcedure } from '../trpc';
import { dictionaryOutput, settingsOutput, settingsUpdateInput } from './schemas';
import { sourceNetworkProcedures } from './source-network';

const tags = ['Service'];

export const serviceRouter = router({
  getSettings: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/settings', summary: 'Installation settings', tags } })
    .input(z.void())
    .output(settingsOutput)
    .query(({ ctx }) => getInstallationSettings(ctx.deps)),

  updateSettings: sysadminProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/settings', summary: 'Change installation settings', tags } })
    .input(settingsUpdateInput)
    .output(settingsOutput)
    .mutation(({ ctx, input }) => {
      const { session_token_ttl: _readOnly, ...update } = input;
      return updateInstallationSettings(ctx.deps, update);
    }),

  dictionary: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dictionary', summary: 'Interface dictionary', tags } })
    .input(z.void())
    .output(dictionaryOutput)
    .query(() => dictionary()),

  ...sourceNetworkProcedures,
});
