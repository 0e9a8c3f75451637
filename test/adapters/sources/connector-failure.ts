import { expect } from 'vitest';
import { ConnectorError } from '../../../adapters/sources';

/** The error a connector call fails with (the test fails if it does not fail, or fails with something else). */
export async function connectorFailure(run: () => Promise<unknown>): Promise<ConnectorError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}
