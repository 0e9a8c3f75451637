import http from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * An OpenAI-compatible chat completions server on loopback for the assistant tests. It checks what the `openai`
 * package sends (POST /v1/chat/completions, Bearer key, model, messages) and answers the scripted replies in order:
 * a completion text, an error status, a completion that comes too late, or a raw 200 body (a malformed completion).
 */

export type Reply =
  | { content: string; delayMs?: number }
  | { status: number; body?: unknown }
  | { choices: unknown[] }
  | { raw: string; contentType: string };

export interface ChatRequest {
  path: string;
  authorization: string | undefined;
  model: string;
  messages: { role: string; content: string }[];
}

export interface FakeProvider {
  baseUrl: string;
  requests: ChatRequest[];
  /** Format problems seen (the request was answered 400). */
  problems: string[];
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

export async function startFakeProvider(opts: { apiKey: string; model: string }): Promise<FakeProvider> {
  const queue: Reply[] = [];
  const requests: ChatRequest[] = [];
  const problems: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      let body: { model?: unknown; messages?: unknown };
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        problems.push('body is not JSON');
        return send(400, { error: { message: 'bad json' } });
      }
      const problem =
        req.method !== 'POST' || req.url !== '/v1/chat/completions'
          ? `unexpected ${req.method} ${req.url}`
          : req.headers.authorization !== `Bearer ${opts.apiKey}`
            ? `authorization ${req.headers.authorization}`
            : body.model !== opts.model
              ? `model ${String(body.model)}`
              : !Array.isArray(body.messages) ||
                  !body.messages.every(
                    (m: { role?: unknown; content?: unknown }) =>
                      typeof m.role === 'string' && typeof m.content === 'string',
                  )
                ? 'messages'
                : null;
      if (problem) {
        problems.push(problem);
        return send(400, { error: { message: problem } });
      }
      requests.push({
        path: req.url!,
        authorization: req.headers.authorization,
        model: body.model as string,
        messages: body.messages as ChatRequest['messages'],
      });
      const reply = queue.shift() ?? { status: 500, body: { error: { message: 'no scripted reply' } } };
      if ('status' in reply) return send(reply.status, reply.body ?? { error: { message: 'scripted error' } });
      if ('raw' in reply) {
        res.writeHead(200, { 'content-type': reply.contentType });
        return res.end(reply.raw);
      }
      const completion = (choices: unknown[]) => ({
        id: 'chatcmpl-test',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: opts.model,
        choices,
      });
      if ('choices' in reply) return send(200, completion(reply.choices));
      const answer = () =>
        send(
          200,
          completion([{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content } }]),
        );
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    problems,
    script: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
