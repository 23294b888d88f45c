// The one place that turns a command's JSON document into text for a person (--text): a table view where the result
// is a list, readable key/value lines otherwise. Loaded only when --text is given.
import { fields } from './text-layout.ts'
import { SHOWN, budgetText, codesText, findingsTable, findingsText, runsText, statusText } from './text-views.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

/** The commands whose result has a view of its own, with the keys it shows; the rest are laid out as key/value lines. */
const VIEWS: Record<string, (doc: Doc) => [string, string[]]> = {
  codes: (doc) => [codesText(doc), SHOWN.codes!],
  status: (doc) => ('runs' in doc ? [runsText(doc), SHOWN.runs!] : [statusText(doc), SHOWN.status!]),
  demo: (doc) => [statusText(doc), SHOWN.status!], // the demo's result is the final status
  'budget-check': (doc) => [budgetText(doc), SHOWN.budget!],
  findings: (doc) => [findingsText(doc), SHOWN.findings!],
}

/** Lists of findings inside any other result (review's new findings) keep the findings table. */
const FINDING_LISTS = ['findings', 'open_findings']

export function documentText(command: string, document: Doc): string {
  const { version: _version, ...doc } = document
  const view = Object.hasOwn(VIEWS, command) ? VIEWS[command] : undefined
  if (!view) return generic(doc)
  const [text, shown] = view(doc)
  const rest = Object.fromEntries(Object.entries(doc).filter(([key]) => !shown.includes(key)))
  return Object.keys(rest).length ? `${text}\n${generic(rest)}` : text
}

/** Key/value lines, with any list of findings as the findings table below them. */
function generic(doc: Doc): string {
  const lists = FINDING_LISTS.filter((key) => Array.isArray(doc[key]) && doc[key].length > 0)
  const rest = Object.fromEntries(
    Object.entries(doc).map(([key, value]) => [key, lists.includes(key) ? `${value.length}, below` : value]),
  )
  return [fields(rest), ...lists.map((key) => `\n${key.replace('_', ' ')}\n${findingsTable(doc[key], '  ')}`)].join('')
}
