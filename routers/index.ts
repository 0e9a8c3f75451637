import { router } from '../server/trpc';
import { authRouter } from './auth/router';
import { mcpTokenRouter } from './mcp-tokens/router';
import { serviceRouter } from './service/router';

export const appRouter = router({
  auth: authRouter,
  mcpToken: mcpTokenRouter,
  service: serviceRouter,
});

export type AppRouter = typeof appRouter;
