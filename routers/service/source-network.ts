import { z } from 'zod';
import {
  getSourceNetworkPolicy,
  isNetworkEntry,
  NETWORK_ENTRY_MESSAGE,
  updateSourceNetworkPolicy,
} from '../../server/service/source-network';
import { sysadminProcedure } from '../trpc';
import { wireString } from '../common';

const tags = ['Service'];

const entry = wireString().refine(isNetworkEntry, { error: NETWORK_ENTRY_MESSAGE });
export const sourceNetworkPolicy = z.strictObject({
  allow: z.array(entry).max(1000).describe('Hosts sources may reach; empty: any host that is not denied'),
  deny: z.array(entry).max(1000).describe('Hosts sources may never reach; wins over allow'),
});

const description =
  'Which hosts data sources may connect to. Entries: an IPv4/IPv6 CIDR network (10.0.0.0/8), a single address, ' +
  'or a host name pattern (db.example, *.corp.example). Names are resolved and every address is judged; deny wins; ' +
  'an empty allow list allows every host that is not denied. Enforced on every check, save, copy and connection ' +
  '(for a source behind an SSH tunnel: the SSH server, and the database host by name). Refused: 400. ' +
  'Default: allow [], deny ["169.254.0.0/16", "fe80::/10"].';

export const sourceNetworkProcedures = {
  getSourceNetwork: sysadminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/settings/source-network',
        summary: 'Hosts data sources may connect to',
        description,
        tags,
      },
    })
    .input(z.void())
    .output(sourceNetworkPolicy)
    .query(({ ctx }) => getSourceNetworkPolicy(ctx.deps)),

  updateSourceNetwork: sysadminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/settings/source-network',
        summary: 'Change the hosts data sources may connect to',
        description,
        tags,
      },
    })
    .input(sourceNetworkPolicy)
    .output(sourceNetworkPolicy)
    .mutation(({ ctx, input }) => updateSourceNetworkPolicy(ctx.deps, input)),
};
