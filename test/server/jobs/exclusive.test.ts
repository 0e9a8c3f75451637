import { expect, it } from 'vitest';
import { useTestApp } from '../../support/app';

/*
 * JobRunner.exclusive: one holder per key across the whole database (a session advisory lock), so a job queued twice
 * for one object is worked on once at a time; the key is free again when the holder ends, even by a throw.
 */

const { t } = useTestApp();

it('lets one holder per key work at a time and frees the key when the work ends', async () => {
  const jobs = t.deps.jobs;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let ran = 0;
  const first = jobs.exclusive('test:a', async () => {
    ran++;
    await held;
  });
  // The first holder is inside its work (so holds the lock) once it has counted itself.
  while (ran === 0) await new Promise((r) => setTimeout(r, 10));
  expect(await jobs.exclusive('test:a', async () => void ran++)).toBe(false);
  expect(await jobs.exclusive('test:b', async () => void ran++)).toBe(true);
  release();
  expect(await first).toBe(true);
  expect(ran).toBe(2);
  await expect(
    jobs.exclusive('test:a', async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  expect(await jobs.exclusive('test:a', async () => void ran++)).toBe(true);
  expect(ran).toBe(3);
});
