import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, inject } from 'vitest';
import { validatedResponses } from '../support/openapi-validation';

// Each test file leaves its count of checked answers for the run's total (openapi-count.ts prints it).
afterAll(async () => {
  const count = validatedResponses();
  if (count === 0) return;
  const file = path.join(inject('openapiCountDir'), `${process.pid}-${crypto.randomUUID()}`);
  await fs.writeFile(file, String(count));
});
