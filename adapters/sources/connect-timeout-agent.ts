import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

/**
 * An HTTP(S) agent whose sockets must connect (and finish the TLS handshake) within `timeoutMs`.
 * Node's agents only know an idle timeout, which would also kill a long ClickHouse query that is quietly
 * computing; this limits the connect phase alone, so an unreachable server fails fast.
 */
export function connectTimeoutAgent(secure: boolean, timeoutMs: number, options: https.AgentOptions): http.Agent {
  const Base = secure ? https.Agent : http.Agent;
  const agent = new Base({ keepAlive: true, ...options });
  const create = agent.createConnection.bind(agent) as (o: unknown, cb?: unknown) => Duplex | null | undefined;
  (agent as unknown as { createConnection: typeof create }).createConnection = (o, cb) => {
    const socket = create(o, cb);
    if (!socket) return socket;
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`connect ETIMEDOUT (нет ответа за ${timeoutMs} мс)`), { code: 'ETIMEDOUT' });
      socket.destroy(err);
    }, timeoutMs);
    timer.unref?.();
    const done = () => clearTimeout(timer);
    socket.once(secure ? 'secureConnect' : 'connect', done);
    socket.once('close', done);
    socket.once('error', done);
    return socket;
  };
  return agent;
}
