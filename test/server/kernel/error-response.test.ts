import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeError } from '../../../server/kernel/error-response';
import { AppError } from '../../../server/kernel/errors';

describe('describeError: the one error table', () => {
  it('maps input validation failures to 422 with field paths', () => {
    const zerr = z.object({ name: z.string() }).safeParse({}).error!;
    const d = describeError(new TRPCError({ code: 'BAD_REQUEST', cause: zerr }));
    expect(d).toMatchObject({ status: 422, message: 'Ошибка валидации', errors: { name: 'must not be blank' } });
  });

  it("keeps a source driver's own error as the cause of the short message, for the log only", async () => {
    const { asSourceError } = await import('../../../server/data-sources/connector-errors');
    const { ConnectorError } = await import('../../../adapters/sources');
    const driver = new Error('read ECONNRESET');
    const d = describeError(
      asSourceError(new ConnectorError('Подключение к источнику прервано', 'connection', { cause: driver })),
    );
    expect(d).toMatchObject({ status: 400, message: 'Подключение к источнику прервано' });
    expect((d.cause as Error).cause).toBe(driver);
  });

  it('treats an output that fails its schema as our 500, without details', () => {
    const zerr = z.object({ id: z.number() }).safeParse({ id: 'x' }).error!;
    const d = describeError(
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause: zerr }),
    );
    expect(d.status).toBe(500);
    expect(d.message).toBe('Внутренняя ошибка сервера');
    expect(d.errors).toBeUndefined();
  });

  it('passes AppErrors through with their status, message and headers', () => {
    expect(describeError(new AppError('not_found', 'Виджет не найден (id 5)'))).toMatchObject({
      status: 404,
      message: 'Виджет не найден (id 5)',
    });
    const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: new AppError('forbidden') });
    expect(describeError(wrapped)).toMatchObject({ status: 403, message: 'Доступ запрещён' });
  });

  it('hides unexpected errors behind the generic 500 message', () => {
    const d = describeError(new Error('connection refused at 10.0.0.5:5432'));
    expect(d).toMatchObject({ status: 500, message: 'Внутренняя ошибка сервера' });
    expect(JSON.stringify({ m: d.message, e: d.errors })).not.toContain('10.0.0.5');
  });
});
