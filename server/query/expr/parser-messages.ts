import { EOF, type IParserErrorMessageProvider, type IToken, type TokenType } from 'chevrotain';
import { quoted } from './errors';

/** Chevrotain's messages, in Russian and in the user's terms (no rule names, no token type names). */

function shown(token: IToken): string {
  return token.tokenType === EOF ? 'конец выражения' : quoted(token.image);
}

function label(type: TokenType): string {
  return type.LABEL ?? type.name;
}

export const russianMessages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual }) {
    return `ожидалось «${label(expected)}», а найдено ${actual.tokenType === EOF ? 'конец выражения' : quoted(actual.image)}`;
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return `лишний текст после конца выражения: ${quoted(firstRedundant.image)}`;
  },
  buildNoViableAltMessage({ actual }) {
    const token = actual[0];
    if (token.tokenType === EOF) return 'выражение оборвано: ожидалось значение, ссылка на поле или функция';
    return `неожиданный ${shown(token)}: ожидалось значение, ссылка на поле или функция`;
  },
  buildEarlyExitMessage({ actual }) {
    return `неожиданный ${shown(actual[0])}`;
  },
};
