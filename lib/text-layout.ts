// The pieces of a text view (--text): one value as a person reads it, aligned tables, and key/value blocks that nest.
import { stripControl } from './text.ts'

type Json = unknown
type Fields = Record<string, Json>

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

/** Dollars as a person reads them: four decimals below a cent, else two. */
export function usd(value: Json): string {
  if (typeof value !== 'number') return '-'
  return `$${value !== 0 && Math.abs(value) < 0.01 ? value.toFixed(4) : value.toFixed(2)}`
}

/** Rows under a header, each column as wide as its widest cell; the last column runs free. */
export function table(header: string[], rows: string[][], indent = ''): string {
  if (rows.length === 0) return `${indent}(none)\n`
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  const line = (row: string[]) =>
    `${indent}${row
      .map((text, column) => (column === row.length - 1 ? text : text.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd()}\n`
  return [header, ...rows].map(line).join('')
}

/** `key  value` lines, keys aligned; a list of records becomes a table under its key, a nested record a block. */
export function fields(record: Fields, indent = ''): string {
  const entries = Object.entries(record).filter(([, value]) => value !== undefined)
  const width = Math.max(0, ...entries.map(([key]) => key.length))
  let out = ''
  for (const [key, value] of entries) {
    const label = `${indent}${key.padEnd(width)}  `
    if (Array.isArray(value) && value.length > 0 && value.every(isFields)) {
      out += `${indent}${key}\n${recordsTable(value as Fields[], `${indent}  `)}`
    } else if (Array.isArray(value) && value.length > 1 && value.every(isScalar) && cell(value).length > 60) {
      out += `${indent}${key}\n${value.map((item) => `${indent}  ${cell(item)}\n`).join('')}`
    } else if (isFields(value) && (!Object.values(value).every(isScalar) || cell(value).length > 60)) {
      out += `${indent}${key}\n${fields(value, `${indent}  `)}`
    } else out += `${label}${cell(value)}`.trimEnd().concat('\n')
  }
  return out
}

/** Records as a table: one column per key that holds a plain value in any of them. */
export function recordsTable(records: Fields[], indent = ''): string {
  const columns: string[] = []
  for (const record of records)
    for (const [key, value] of Object.entries(record))
      if (!columns.includes(key) && (isScalar(value) || (Array.isArray(value) && value.every(isScalar))))
        columns.push(key)
  return table(
    columns,
    records.map((record) => columns.map((key) => cell(record[key]))),
    indent,
  )
}
