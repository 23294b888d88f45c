// Types of mock-clients.mjs, for the TypeScript harness.
export const MOCK_OPENAI_KEY: string
export function claudeVars(port: number): Record<string, string>
export function codexConfigToml(port: number): string
