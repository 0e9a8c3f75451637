import { hash, verify } from '@node-rs/argon2';

export async function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/**
 * How many password hashes this process has checked (the expensive argon2 step). Read by the throttling tests to
 * prove that refused attempts never reach the hash, and a cheap figure for spotting a guessing run.
 */
export const passwordChecks = { count: 0 };

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) return false;
  passwordChecks.count++;
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// A real hash of nothing in particular: checked when the user does not exist, so that a wrong username costs the
// same time as a wrong password and does not reveal which accounts exist.
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hash('timing-equaliser-not-a-password');
  await verifyPassword(await dummyHash, password);
}

/** Returns the reason a password is too weak, or null. */
export function passwordWeakness(password: string, username?: string): string | null {
  if (password.trim().length === 0) return 'must not be blank';
  if (password.length < 8) return 'Пароль должен содержать не менее 8 символов';
  if (password.length > 256) return 'Пароль должен содержать не более 256 символов';
  if (!/\p{L}/u.test(password) || !/\p{N}/u.test(password)) return 'Пароль должен содержать буквы и цифры';
  if (username && password.toLowerCase() === username.toLowerCase())
    return 'Пароль не должен совпадать с именем пользователя';
  return null;
}
