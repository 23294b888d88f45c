// The pieces of a text view (--text): one value as a person reads it, aligned tables, and key/value blocks that nest,
// all within the terminal's width (long text wraps under its column, long cells are cut with …).
import { stripControl } from '../ground/text.ts'

type Json = unknown
type Fields = Record<string, Json>

/** The width a view fits when stdout is no terminal (a pipe, a file, a test). */
export const DEFAULT_WIDTH = 100
/** The narrowest a wrapped column gets, however deep it is indented. */
const MIN_WRAP = 24
/** The widest a column other than the last may get before its cells are cut. */
const MAX_COLUMN = 40

const isFields = (value: Json): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value)
const isScalar = (value: Json) => value === null || typeof value !== 'object'

/** One value on one line: no control characters, line breaks as spaces, `-` for nothing, yes/no for switches. */
export function cell(value: Json): string {
  if (value === null || value === undefined || value === '') return '-'
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string')
    return stripControl(value)
      .replace(/\s*\n\s*/g, ' ')
      .trim()
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(cell).join(', ')
  return Object.entries(value as Fields)
    .map(([key, inner]) => `${key} ${cell(inner)}`)
    .join(', ')
}

/** A word up to this long (a path, a URL, a command) keeps its line whole, so it can be copied; longer ones break. */
const WHOLE_WORD = 240

/**
 * `text` in lines of at most `width` characters, broken at spaces; a word longer than a line has one of its own (past
 * the width, as a terminal shows it), and only one longer than WHOLE_WORD is broken inside.
 */
export function wrap(text: string, width: number): string[] {
  const room = Math.max(1, width)
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/ +/).filter(Boolean)) {
    for (let rest = word; rest.length > 0; ) {
      const gap = line ? 1 : 0
      if (line.length + gap + rest.length <= room) {
        line += (gap ? ' ' : '') + rest
        rest = ''
      } else if (line) {
        lines.push(line)
        line = ''
      } else if (rest.length <= WHOLE_WORD) {
        lines.push(rest)
        rest = ''
      } else {
        lines.push(rest.slice(0, room))
        rest = rest.slice(room)
      }
    }
  }
  return line || lines.length === 0 ? [...lines, line] : lines
}

/** A cell cut to `width` characters, the cut marked with …. */
const cut = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`)

/**
 * Rows under a header, each column as wide as its widest cell (at most MAX_COLUMN, narrower when the last column
 * would have too little room: longer cells are cut); the last column wraps to `width`, under itself. A `\n` in a last
 * cell starts a new paragraph there (a finding's reply under its text). The first column names its row (a run id, a
 * finding id, a code) and is never narrowed to make room: a cut id cannot be passed back to a command.
 */
export function table(header: string[], rows: string[][], indent = '', width = DEFAULT_WIDTH): string {
  if (rows.length === 0) return `${indent}(none)\n`
  const last = header.length - 1
  const widths = header.map((title, column) =>
    column === last ? 0 : Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  for (let column = 0; column < last; column++) widths[column] = Math.min(widths[column]!, MAX_COLUMN)
  const start = () => indent.length + widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0)
  // the last column needs no more room than its longest paragraph (a PR number needs no 24 columns)
  const lastParagraphs = [header[last]!, ...rows.flatMap((row) => (row[last] ?? '').split('\n'))]
  const lastNeeds = Math.min(MIN_WRAP, Math.max(...lastParagraphs.map((paragraph) => paragraph.length)))
  // give the last column room: narrow the widest other column but the first, down to its title or 8 characters
  for (;;) {
    if (width - start() >= lastNeeds) break
    const widest = widths.slice(0, last).reduce((at, w, i) => (i > 0 && (at === 0 || w > widths[at]!) ? i : at), 0)
    if (widest === 0) break
    const floor = Math.max(8, header[widest]!.length)
    if (widths[widest]! <= floor) break
    widths[widest] = widths[widest]! - 1
  }
  const room = Math.max(MIN_WRAP, width - start())
  const pad = ' '.repeat(start())
  const line = (row: string[]) => {
    const lead = row
      .slice(0, last)
      .map((text, column) => cut(text, widths[column]!).padEnd(widths[column]!))
      .join('  ')
    const paragraphs = (row[last] ?? '').split('\n').flatMap((paragraph) => wrap(paragraph, room))
    const first = `${indent}${lead}${last > 0 ? '  ' : ''}${paragraphs[0] ?? ''}`.trimEnd()
    return [first, ...paragraphs.slice(1).map((text) => `${pad}${text}`.trimEnd())].map((l) => `${l}\n`).join('')
  }
  return [header, ...rows].map(line).join('')
}

/** `key  value` lines, keys aligned, long values wrapped under themselves; a list of records becomes a table under its
 * key, a nested record a block. */
export function fields(record: Fields, indent = '', width = DEFAULT_WIDTH): string {
  const entries = Object.entries(record).filter(([, value]) => value !== undefined)
  const keyWidth = Math.max(0, ...entries.map(([key]) => key.length))
  const inner = `${indent}  `
  let out = ''
  for (const [key, value] of entries) {
    if (Array.isArray(value) && value.length > 0 && value.every(isFields)) {
      out += `${indent}${key}\n${recordsTable(value as Fields[], inner, width)}`
    } else if (Array.isArray(value) && value.length > 1 && value.every(isScalar) && cell(value).length > 60) {
      out += `${indent}${key}\n${value.map((item) => valueLines(cell(item), inner, width)).join('')}`
    } else if (isFields(value) && (!Object.values(value).every(isScalar) || cell(value).length > 60)) {
      out += `${indent}${key}\n${fields(value, inner, width)}`
    } else {
      const label = `${indent}${key.padEnd(keyWidth)}  `
      const lines = wrap(cell(value), Math.max(MIN_WRAP, width - label.length))
      out += `${label}${lines[0]}`.trimEnd().concat('\n')
      for (const more of lines.slice(1)) out += `${' '.repeat(label.length)}${more}\n`
    }
  }
  return out
}

/** A value on lines of its own, indented, wrapped under itself. */
export const valueLines = (text: string, indent: string, width = DEFAULT_WIDTH) =>
  wrap(text, Math.max(MIN_WRAP, width - indent.length))
    .map((line) => `${indent}${line}`.trimEnd().concat('\n'))
    .join('')

/** Records as a table: one column per key that holds a plain value in any of them. */
export function recordsTable(records: Fields[], indent = '', width = DEFAULT_WIDTH): string {
  const columns: string[] = []
  for (const record of records)
    for (const [key, value] of Object.entries(record))
      if (!columns.includes(key) && (isScalar(value) || (Array.isArray(value) && value.every(isScalar))))
        columns.push(key)
  return table(
    columns,
    records.map((record) => columns.map((key) => cell(record[key]))),
    indent,
    width,
  )
}
