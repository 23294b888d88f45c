// Agent text written into Markdown so it can never forge a heading, a finding line or a `VERDICT:` line.
import { openFence } from './markdown.ts'
import { stripControl } from './text.ts'

const DECORATION = /^[\s>*_`~+-]*/

/**
 * One line of agent text, escaped so it cannot read as a heading, a finding line or a verdict line
 * (Markdown still shows the same characters: `\#` renders as `#`).
 */
export function neutraliseLine(line: string): string {
  // a line of only `=` or `-` would turn the line above into a heading when rendered (setext)
  if (/^\s*(=+|-+)\s*$/.test(line)) return line.replace(/[=-]/, (mark) => `\\${mark}`)
  if (/^\s*</.test(line)) return line.replace('<', '\\<') // raw HTML (<h2>, <!--) could hide or fake structure
  const lead = DECORATION.exec(line)![0]
  const rest = line.slice(lead.length)
  if (rest.startsWith('#')) return `${lead}\\${rest}`
  const numbered = /^(\d+)([.)])/.exec(rest)
  if (numbered) return `${lead}${numbered[1]}\\${rest.slice(numbered[1]!.length)}`
  const verdict = /^(verdict)([\s*_`]*)(:)/i.exec(rest) // the same decoration parseVerdict tolerates
  if (verdict) return `${lead}${verdict[1]}${verdict[2]}\\${rest.slice(verdict[0].length - 1)}`
  const reply = /^(reply\s*)\(/i.exec(rest) // the shape of a coder's reply under a finding
  if (reply) return `${lead}${reply[1]}\\${rest.slice(reply[1]!.length)}`
  return line
}

/** A block of agent text: every line neutralised, and a fence it leaves open closed. */
export function neutralise(text: string): string {
  const lines = stripControl(text).split('\n').map(neutraliseLine)
  const open = openFence(lines)
  if (open) lines.push(open) // a fence left open would swallow the real headings and verdict that follow
  return lines.join('\n')
}

/** For one-line slots (task, finding text): newlines become spaces, then the same escaping. */
export function neutraliseInline(text: string): string {
  return neutraliseLine(
    stripControl(text)
      .replace(/\s*\n\s*/g, ' ')
      .trim(),
  )
}
