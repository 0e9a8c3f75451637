import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where each test file writes how many answers it checked against the OpenAPI document (openapi-count-file.ts). */
    openapiCountDir: string;
  }
}

/** Sums the per-file counts of answers checked against the served document and prints the total once, at the end. */
export default async function setup(project: TestProject) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-count-'));
  project.provide('openapiCountDir', dir);
  return async () => {
    let total = 0;
    for (const name of await fs.readdir(dir)) total += Number(await fs.readFile(path.join(dir, name), 'utf8')) || 0;
    await fs.rm(dir, { recursive: true, force: true });
    console.log(`OpenAPI: ${total} responses validated against the served document`);
  };
}
