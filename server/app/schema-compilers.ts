import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type Compilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<Compilers['buildValidator']>;
type SerializerFactory = NonNullable<Compilers['buildSerializer']>;

/*
 * Fastify's JSON Schema compilers (ajv for request validation, fast-json-stringify for responses) loaded on first
 * use. Fastify requires both when the app is created, about 50 ms of every start and their memory, yet no route of
 * this app validates or serialises with a JSON schema (zod checks the input inside the procedures; routes declare
 * `schema: { hide: true }` only, which compiles nothing). Fastify's own defaults, from fastify's own dependencies, are
 * what a route with a schema would get; the one difference is fastify's flag for a custom validator, which only
 * changes how a `headers` schema is handed to it (no route declares one).
 */
export function lazySchemaCompilers(): NonNullable<FastifyServerOptions['schemaController']> {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  return {
    compilersFactory: {
      buildValidator: onFirstCompile(() => fromFastify('@fastify/ajv-compiler') as () => Factory) as ValidatorFactory,
      buildSerializer: onFirstCompile(
        () => fromFastify('@fastify/fast-json-stringify-compiler') as () => Factory,
      ) as SerializerFactory,
    },
  };
}

/** Both packages export a selector: `selector()` is a factory `(externalSchemas, options) => compile(route)`. */
type Factory = (externalSchemas: unknown, options: unknown) => (route: unknown) => unknown;

/** A factory that loads the package's own factory when a route first needs a compiled schema. */
function onFirstCompile(load: () => () => Factory): Factory {
  let factory: Factory | undefined;
  return (externalSchemas, options) => {
    let compile: ReturnType<Factory> | undefined;
    return (route) => {
      factory ??= load()();
      compile ??= factory(externalSchemas, options);
      return compile(route);
    };
  };
}
