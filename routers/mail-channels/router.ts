import { authedProcedure, router, sysadminProcedure } from '../trpc';
import {
  changeChannel,
  createChannel,
  getChannel,
  listChannels,
  removeChannel,
  testChannel,
} from '../../server/mail-channels/mail-channels';
import { deletedOutput, idInput } from '../common';
import {
  channelInput,
  channelListInput,
  channelListOutput,
  channelOutput,
  channelUpdate,
  testInput,
  testOutput,
} from './schemas';

/* SMTP mail channels: /api/mail-channels. */

const tags = ['Mail channels'];

export const mailChannelRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/mail-channels', summary: 'List SMTP channels', tags } })
    .input(channelListInput)
    .output(channelListOutput)
    .query(({ ctx, input }) => listChannels(ctx.deps, ctx.actor, input)),

  create: sysadminProcedure
    .meta({ openapi: { method: 'POST', path: '/api/mail-channels', summary: 'Add an SMTP channel', tags } })
    .input(channelInput)
    .output(channelOutput)
    .mutation(({ ctx, input }) => createChannel(ctx.deps, input)),

  get: sysadminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/mail-channels/{id}', summary: 'SMTP channel details', tags } })
    .input(idInput)
    .output(channelOutput)
    .query(({ ctx, input }) => getChannel(ctx.deps, input.id)),

  update: sysadminProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/mail-channels/{id}', summary: 'Change an SMTP channel', tags } })
    .input(channelUpdate)
    .output(channelOutput)
    .mutation(({ ctx, input: { id, ...body } }) => changeChannel(ctx.deps, id, body)),

  delete: sysadminProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/mail-channels/{id}', summary: 'Delete an SMTP channel', tags } })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeChannel(ctx.deps, input.id)),

  testSend: sysadminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/mail-channels/{id}/test',
        summary: 'Send a test letter through the channel',
        tags,
      },
    })
    .input(testInput)
    .output(testOutput)
    .mutation(({ ctx, input }) => testChannel(ctx.deps, input.id, input.to)),
});
