// Agent text made safe to print: escape sequences and control characters out, every line break one \n.
// Its own small module so the CLI's error line can use it without loading the HANDOFF.md renderer.

// A whole escape sequence first (CSI, OSC, two-byte), then any lone control character (C0, DEL and C1), then the
// invisible characters that let a line look like another to a reader: zero-width and BOM-like ones (a zero-width
// space before `VERDICT:`), the soft hyphen, and the bidirectional controls that reorder what is shown.
const CONTROL =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\u00ad\u200b\u200c\u200e\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]/g

/**
 * Drop ANSI escapes, NULs, other control characters and invisible format characters; keep tabs (and U+200D, which
 * joins emoji); every line break (CR, NEL, U+2028/9) becomes \n.
 */
export function stripControl(text: string): string {
  return text.replace(/\r\n?|[\x85\u2028\u2029]/g, '\n').replace(CONTROL, '')
}

/** The first line of what a program said, made safe to print and kept short: for an error message. */
export function firstLineOf(text: string, maxChars = 300): string {
  return stripControl(text).trim().split('\n')[0]?.slice(0, maxChars) ?? ''
}
