/** 1-based line and column of the character an error points at. */
export interface Position {
  line: number;
  column: number;
}

/**
 * Any problem with a user-written expression: syntax, unknown names, types, bad filter values. The message is
 * Russian and ready to show; the engine turns this error into a 422.
 */
export class ExpressionError extends Error {
  /** The message without the «Ошибка в выражении:» prefix and the position suffix. */
  readonly detail: string;
  readonly position: Position | null;
  /** Set on a cycle of calculated fields, whose message already names the whole path. */
  readonly cycle: boolean;

  constructor(detail: string, position: Position | null = null, cycle = false) {
    const where = position ? ` (строка ${position.line}, позиция ${position.column})` : '';
    super(`Ошибка в выражении: ${detail}${where}`);
    this.name = 'ExpressionError';
    this.detail = detail;
    this.position = position;
    this.cycle = cycle;
  }
}

/** Quotes a fragment of user text for a message, cutting it so one bad formula cannot flood a response. */
export function quoted(text: string): string {
  const cut = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return `«${cut}»`;
}
