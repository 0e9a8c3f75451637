import pg from 'pg';

/**
 * A pg.Client class for pg.Pool (its documented `Client` option) that takes a connection-budget slot before it
 * connects and gives it back when its connection ends: the pool then never opens more than the budget allows.
 */
export function budgetedPgClient(takeSlot: () => Promise<() => void>): new () => pg.ClientBase {
  class BudgetedClient extends pg.Client {
    connectWithSlot(): Promise<void> {
      return (async () => {
        const release = await takeSlot();
        this.once('end', release);
        try {
          await super.connect();
        } catch (err) {
          release();
          throw err;
        }
      })();
    }
  }
  // pg.Pool calls connect(callback); a promise is returned when there is none, as pg.Client does.
  (BudgetedClient.prototype as unknown as { connect: unknown }).connect = function connect(
    this: BudgetedClient,
    callback?: (err: Error | null, client?: BudgetedClient) => void,
  ) {
    const connecting = this.connectWithSlot();
    if (!callback) return connecting.then(() => this);
    connecting.then(
      () => callback(null, this),
      (err: Error) => callback(err),
    );
    return undefined;
  };
  return BudgetedClient as unknown as new () => pg.ClientBase;
}
