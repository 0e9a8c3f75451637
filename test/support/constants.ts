/** The first system administrator of the test installation (seeded by the global setup). */
export const TEST_ADMIN = { username: 'admin', password: 'Test-admin-2026' } as const;
