import { MSG } from './messages';

/** A field path as a list (`['fields', 2, 'formula']`); formatFieldPath turns it into `fields[2].formula`. */
export type Path = (string | number)[];
/** Records a problem at a path; the first message for a path wins. */
export type Fail = (path: Path, message: string) => void;

export const blank = (s: string | null | undefined): s is null | undefined | '' =>
  s === null || s === undefined || s.trim() === '';
export const lower = (s: string) => s.toLowerCase();

/** Names used in references: [object.field] splits at the first dot, and a reference is one line. */
export function checkName(name: string, path: Path, fail: Fail): void {
  if (name.includes('.')) fail(path, MSG.nameWithDot);
  else if (/[\r\n]/.test(name)) fail(path, MSG.nameWithLineBreak);
}
