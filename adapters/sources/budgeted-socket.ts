import net from 'node:net';

/**
 * A TCP socket that starts connecting only once a connection-budget slot is taken, and gives the slot back when
 * it closes. For drivers that take a ready-made stream and cannot wait before creating it (mysql2's `stream`
 * option): the driver only writes after the server has spoken, so nothing is lost while the socket waits.
 */
export function budgetedSocket(
  host: string,
  port: number,
  takeSlot: () => Promise<() => void>,
  lookup?: net.LookupFunction,
): net.Socket {
  const socket = new net.Socket();
  takeSlot().then(
    (release) => {
      socket.once('close', release);
      if (socket.destroyed) {
        release();
        return;
      }
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 15_000);
      socket.connect({ port, host, lookup });
    },
    (err: Error) => socket.destroy(err),
  );
  return socket;
}

/**
 * A socket for drivers that create the stream and connect it themselves with connect(port, host) (pg's `stream`
 * option): the host name is resolved through `lookup` rather than the system resolver.
 */
export function socketWithLookup(lookup: net.LookupFunction): net.Socket {
  const socket = new net.Socket();
  const connect = socket.connect.bind(socket) as (...args: unknown[]) => net.Socket;
  socket.connect = ((...args: unknown[]) =>
    typeof args[0] === 'number' && typeof args[1] === 'string'
      ? connect({ port: args[0], host: args[1], lookup }, ...args.slice(2))
      : connect(...args)) as net.Socket['connect'];
  return socket;
}

/**
 * Makes an HTTP agent take a slot before each socket it opens (and give it back when the socket closes). Node's
 * agents accept a socket handed to createConnection's callback later, which is what lets the agent wait here.
 */
export function budgetAgent<A extends { createConnection: unknown }>(agent: A, takeSlot: () => Promise<() => void>): A {
  type Create = (
    options: unknown,
    callback?: (err: Error | null, socket?: net.Socket) => void,
  ) => net.Socket | undefined;
  const create = (agent.createConnection as Create).bind(agent);
  const budgeted: Create = (options, callback) => {
    takeSlot().then(
      (release) => {
        let socket: net.Socket | undefined;
        try {
          socket = create(options);
        } catch (err) {
          release();
          callback?.(err as Error);
          return;
        }
        if (!socket) {
          release();
          callback?.(new Error('no socket'));
          return;
        }
        socket.once('close', release);
        callback?.(null, socket);
      },
      (err: Error) => callback?.(err),
    );
    return undefined;
  };
  (agent as { createConnection: unknown }).createConnection = budgeted;
  return agent;
}
