import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/*
 * The access log: ONE line per request, written when its response has been sent, instead of fastify's two (an
 * "incoming request" line and a "request completed" line, each a serialisation and a write per request, a visible
 * share of a cached widget read under load). The line carries what both did: the request id (the logger's binding),
 * method, URL, client address, status and the time to respond; a failed response is logged at error with its error.
 * Fastify's LogController is its supported way (5.x) to replace these lines; its other lines stay as they are.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = {
      method: request.method,
      url: request.url,
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
      // Widget and dashboard data: which paths answered (rollup, extract, live).
      ...(reply.hasHeader('x-data-path') ? { dataPath: reply.getHeader('x-data-path') } : {}),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request');
  }
}

/**
 * Where the app's log lines go: stdout, written once per turn of the event loop with every line of that turn instead
 * of one write(2) per line (pino's default destination writes each line synchronously: under load, one system call
 * per request for the access line alone). process.stdout writes synchronously to files, pipes and terminals on Linux,
 * so a batch is never left half-written, and whatever is still queued when the process exits (a fatal fault's
 * line included) is written by the exit handler.
 */
export function batchedStdout(): { write(line: string): void } {
  let queued: string[] = [];
  const flush = () => {
    if (queued.length === 0) return;
    const text = queued.length === 1 ? queued[0] : queued.join('');
    queued = [];
    process.stdout.write(text);
  };
  process.once('exit', flush);
  return {
    write(line: string) {
      if (queued.push(line) === 1) setImmediate(flush);
    },
  };
}
