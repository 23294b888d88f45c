// The agent CLIs pair-loop knows, declared once: what each one is and does lives in its module (lib/agents/), and the
// registry there maps every name below to its module (the type makes a missing one an error).
export const VENDORS = ['claude', 'codex', 'gemini'] as const
export type Vendor = (typeof VENDORS)[number]

/** Who can review: a vendor's CLI, or a command (the person's, or a stub shipped with pair-loop). */
export const REVIEWER_TOOLS = [...VENDORS, 'custom'] as const
export type ReviewerTool = (typeof REVIEWER_TOOLS)[number]

export const isVendor = (name: unknown): name is Vendor => (VENDORS as readonly unknown[]).includes(name)
