import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invokeProcedure } from '../../adapters/rest/invoke';
import { publicProcedure, restSkipsOutputParse, router } from '../../routers/trpc';

/*
 * restSkipsOutputParse: the REST adapter runs the procedure's chain without the output parser, the /trpc caller
 * (tRPC's own, the procedure as built) still parses. An output schema that strips a key shows which one ran.
 */

const output = z.object({ kept: z.number() });
const resolve = () => ({ kept: 1, extra: 'only when unparsed' });

describe('restSkipsOutputParse', () => {
  it('leaves the output parser out of the REST chain only; /trpc still parses, and the schema stays documented', async () => {
    const skipped = restSkipsOutputParse(publicProcedure.output(output).query(resolve));
    const parsed = publicProcedure.output(output).query(resolve);
    const appRouter = router({ skipped, parsed });
    const ctx = { deps: {}, authorization: undefined };
    const rest = (p: typeof skipped) =>
      invokeProcedure(p._def as unknown as Parameters<typeof invokeProcedure>[0], 'p', ctx, undefined);
    expect(await rest(skipped)).toEqual({ kept: 1, extra: 'only when unparsed' });
    expect(await rest(parsed)).toEqual({ kept: 1 });
    const caller = appRouter.createCaller(ctx as never);
    expect(await caller.skipped()).toEqual({ kept: 1 });
    expect((skipped._def as unknown as { output: unknown }).output).toBe(output);
  });
});
