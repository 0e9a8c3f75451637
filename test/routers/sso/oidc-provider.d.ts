// oidc-provider ships no type declarations; the tests use a few of its members, typed where they are used.
declare module 'oidc-provider';
