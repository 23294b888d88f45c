// Agent text made safe to print: escape sequences and control characters out, every line break one \n.
// Its own small module so the CLI's error line can use it without loading the HANDOFF.md renderer.

// A whole escape sequence first (CSI, OSC, two-byte), then any lone control character (C0 and C1).
// eslint-disable-next-line no-control-regex
const CONTROL =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g

/** Drop ANSI escapes, NULs and other control characters; keep tabs; every line break (CR, NEL, U+2028/9) becomes \n. */
export function stripControl(text: string): string {
  return text.replace(/\r\n?|[\x85\u2028\u2029]/g, '\n').replace(CONTROL, '')
}

/** The first line of what a program said, made safe to print and kept short: for an error message. */
export function firstLineOf(text: string, maxChars = 300): string {
  return stripControl(text).trim().split('\n')[0]?.slice(0, maxChars) ?? ''
}
