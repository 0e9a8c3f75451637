// Loopback servers that speak just enough of a database protocol to get a driver past some stage and then drop
// the connection: what a source restarting mid-query, or a hostile listener, looks like to the platform.
import http from 'node:http';
import net from 'node:net';

export interface FakeServer {
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * Where the fake drops the connection: at once, after the handshake when the first command arrives, or after
 * sending the column descriptions and a few rows of the first data query.
 */
export type DropStage = 'connect' | 'after-auth' | 'mid-result';

async function listen(server: net.Server, sockets: Set<net.Socket>, counter: { n: number }): Promise<FakeServer> {
  server.on('connection', (s: net.Socket) => {
    counter.n++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return counter.n;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Statements the fakes answer with rows (and then drop, at 'mid-result'); everything else just completes. */
const DATA_QUERY = /^\s*(select|with|values|table|fetch|show)\b/i;

// ---------------------------------------------------------------------------------------------- PostgreSQL

function pgMessage(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

const PG_READY = pgMessage('Z', Buffer.from('I'));
const pgComplete = (tag: string) => pgMessage('C', cstr(tag));

function pgRowDescription(): Buffer {
  // id int4, name text
  const field = (name: string, oid: number, len: number) =>
    Buffer.concat([cstr(name), int32(0), int16(0), int32(oid), int16(len), int32(-1), int16(0)]);
  return pgMessage('T', Buffer.concat([int16(2), field('id', 23, 4), field('name', 25, -1)]));
}

function pgDataRow(id: number): Buffer {
  const v1 = Buffer.from(String(id));
  const v2 = Buffer.from(`row ${id}`);
  return pgMessage('D', Buffer.concat([int16(2), int32(v1.length), v1, int32(v2.length), v2]));
}

/**
 * A PostgreSQL-speaking listener: trust authentication (AuthenticationOk, ParameterStatus, BackendKeyData,
 * ReadyForQuery), then it drops the connection at `stage`. Both the simple and the extended query protocol are
 * understood well enough for the drivers' first statements.
 */
export async function fakePostgres(stage: DropStage): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const counter = { n: 0 };
  const server = net.createServer((socket) => {
    if (stage === 'connect') {
      socket.destroy();
      return;
    }
    let buf = Buffer.alloc(0);
    let started = false;
    let pendingSql = '';
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!started) {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          if (buf.length < len) return;
          const code = buf.readInt32BE(4);
          buf = buf.subarray(len);
          if (code === 80877103) {
            socket.write('N'); // SSLRequest: no TLS here
            continue;
          }
          started = true;
          socket.write(
            Buffer.concat([
              pgMessage('R', int32(0)),
              pgMessage('S', Buffer.concat([cstr('server_version'), cstr('16.0')])),
              pgMessage('S', Buffer.concat([cstr('client_encoding'), cstr('UTF8')])),
              pgMessage('S', Buffer.concat([cstr('integer_datetimes'), cstr('on')])),
              pgMessage('K', Buffer.concat([int32(4242), int32(1234)])),
              PG_READY,
            ]),
          );
          continue;
        }
        if (buf.length < 5) return;
        const type = String.fromCharCode(buf[0]);
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) return;
        const body = buf.subarray(5, len + 1);
        buf = buf.subarray(len + 1);
        if (type === 'X') {
          socket.end();
          return;
        }
        if (stage === 'after-auth') {
          socket.destroy();
          return;
        }
        if (type === 'Q') {
          const sql = body.subarray(0, body.indexOf(0)).toString('utf8');
          if (DATA_QUERY.test(sql)) {
            socket.write(Buffer.concat([pgRowDescription(), pgDataRow(1), pgDataRow(2), pgDataRow(3)]));
            socket.destroy();
            return;
          }
          socket.write(Buffer.concat([pgComplete('SET'), PG_READY]));
        } else if (type === 'P') {
          const name = body.subarray(0, body.indexOf(0));
          const rest = body.subarray(name.length + 1);
          pendingSql = rest.subarray(0, rest.indexOf(0)).toString('utf8');
        } else if (type === 'S') {
          if (DATA_QUERY.test(pendingSql)) {
            socket.write(
              Buffer.concat([pgMessage('1'), pgMessage('2'), pgRowDescription(), pgDataRow(1), pgDataRow(2)]),
            );
            socket.destroy();
            return;
          }
          socket.write(Buffer.concat([pgMessage('1'), pgMessage('2'), pgMessage('n'), pgComplete('SET'), PG_READY]));
        }
        // Bind, Describe, Execute: answered together at Sync
      }
    });
  });
  return listen(server, sockets, counter);
}

// ---------------------------------------------------------------------------------------------- MySQL

function myPacket(seq: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUIntLE(payload.length, 0, 3);
  head[3] = seq & 0xff;
  return Buffer.concat([head, payload]);
}
const lenencStr = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from([b.length]), b]);
};
const MY_OK = Buffer.from([0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]);
const MY_EOF = Buffer.from([0xfe, 0x00, 0x00, 0x02, 0x00]);

function myHandshake(): Buffer {
  // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, LONG_PASSWORD, CONNECT_WITH_DB, TRANSACTIONS, MULTI_RESULTS
  const caps = 0x1 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000;
  const capLow = Buffer.alloc(2);
  capLow.writeUInt16LE(caps & 0xffff);
  const capHigh = Buffer.alloc(2);
  capHigh.writeUInt16LE(caps >>> 16);
  return Buffer.concat([
    Buffer.from([10]),
    cstr('5.7.99-fake'),
    Buffer.from([7, 0, 0, 0]),
    Buffer.from('abcdefgh'),
    Buffer.from([0]),
    capLow,
    Buffer.from([45]),
    Buffer.from([0x02, 0x00]),
    capHigh,
    Buffer.from([21]),
    Buffer.alloc(10),
    Buffer.from('ijklmnopqrst'),
    Buffer.from([0]),
    cstr('mysql_native_password'),
  ]);
}

function myColumn(name: string, type: number): Buffer {
  return Buffer.concat([
    lenencStr('def'),
    lenencStr('test'),
    lenencStr('t'),
    lenencStr('t'),
    lenencStr(name),
    lenencStr(name),
    Buffer.from([0x0c]),
    Buffer.from([45, 0]),
    Buffer.from([0xff, 0, 0, 0]),
    Buffer.from([type]),
    Buffer.from([0, 0]),
    Buffer.from([0]),
    Buffer.from([0, 0]),
  ]);
}

/**
 * A MySQL-speaking listener: handshake v10, any credentials accepted, SET / START TRANSACTION answered with OK,
 * SHOW with an empty result; then it drops the connection at `stage` ('after-auth': at the first data query).
 */
export async function fakeMysql(stage: DropStage | 'handshake'): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const counter = { n: 0 };
  const server = net.createServer((socket) => {
    if (stage === 'connect') {
      socket.destroy();
      return;
    }
    socket.write(myPacket(0, myHandshake()));
    let buf = Buffer.alloc(0);
    let authed = false;
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 4) {
        const len = buf.readUIntLE(0, 3);
        if (buf.length < len + 4) return;
        const seq = buf[3];
        const payload = buf.subarray(4, len + 4);
        buf = buf.subarray(len + 4);
        if (!authed) {
          if (stage === 'handshake') {
            socket.destroy();
            return;
          }
          authed = true;
          socket.write(myPacket(seq + 1, MY_OK));
          continue;
        }
        const command = payload[0];
        if (command === 0x01) {
          socket.end();
          return;
        }
        if (command !== 0x03) {
          socket.write(myPacket(1, MY_OK));
          continue;
        }
        const sql = payload.subarray(1).toString('utf8');
        if (!DATA_QUERY.test(sql)) {
          socket.write(myPacket(1, MY_OK));
          continue;
        }
        if (/^\s*show\b/i.test(sql)) {
          socket.write(
            Buffer.concat([
              myPacket(1, Buffer.from([2])),
              myPacket(2, myColumn('Variable_name', 0xfd)),
              myPacket(3, myColumn('Value', 0xfd)),
              myPacket(4, MY_EOF),
              myPacket(5, MY_EOF),
            ]),
          );
          continue;
        }
        if (stage === 'after-auth') {
          socket.destroy();
          return;
        }
        const row = (id: number) => Buffer.concat([lenencStr(String(id)), lenencStr(`row ${id}`)]);
        socket.write(
          Buffer.concat([
            myPacket(1, Buffer.from([2])),
            myPacket(2, myColumn('id', 0x03)),
            myPacket(3, myColumn('name', 0xfd)),
            myPacket(4, MY_EOF),
            myPacket(5, row(1)),
            myPacket(6, row(2)),
          ]),
        );
        socket.destroy();
        return;
      }
    });
  });
  return listen(server, sockets, counter);
}

// ---------------------------------------------------------------------------------------------- ClickHouse (HTTP)

/** Body text a foreign HTTP service answers with; it must never reach the platform's user. */
export const FOREIGN_BODY_MARKER = 'internal-admin-secret-7f3a';

export type FakeHttpMode = 'connect' | 'headers' | 'mid-body' | 'foreign-200' | 'foreign-404';

/**
 * An HTTP listener on the ClickHouse port: it drops the connection at once, after sending the response headers, or
 * half-way through a TabSeparatedWithNamesAndTypes body; or it is some other web service answering with HTML.
 */
export async function fakeClickHouseHttp(mode: FakeHttpMode): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const counter = { n: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    const chHeaders = {
      'Content-Type': 'text/tab-separated-values; charset=UTF-8',
      'X-ClickHouse-Server-Display-Name': 'fake',
    };
    switch (mode) {
      case 'connect':
        req.socket.destroy();
        return;
      case 'headers':
        res.writeHead(200, chHeaders);
        res.flushHeaders();
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case 'mid-body':
        res.writeHead(200, chHeaders);
        res.write('id\tname\nInt32\tString\n1\trow 1\n2\trow 2\n');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case 'foreign-200':
      case 'foreign-404':
        res.writeHead(mode === 'foreign-200' ? 200 : 404, { 'Content-Type': 'text/html' });
        res.end(`<html><body><h1>Admin console</h1><p>${FOREIGN_BODY_MARKER}</p></body></html>\n`);
        return;
    }
  });
  return listen(server, sockets, counter);
}
