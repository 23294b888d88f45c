// The one place that turns a command's JSON document into text for a person (--text): a view of its own where one
// reads better, readable key/value lines otherwise, all within the terminal's width. Loaded only when --text is given.
import { budgetText } from './text-budget.ts'
import { DEFAULT_WIDTH, fields } from './text-layout.ts'
import { finishText, LOOP_SHOWN, reviewText } from './text-loop.ts'
import { codesText, findingsTable, findingsText, runsText, statusText } from './text-views.ts'

// biome-ignore lint/suspicious/noExplicitAny: a document is read key by key and every value goes through cell()
type Doc = Record<string, any>

/** The keys of a document each view shows (the rest are laid out below it, so nothing is left out). */
const SHOWN: Record<string, string[]> = {
  codes: ['codes'],
  runs: ['runs', 'unreadable', 'changed', 'merged_prs'],
  status: [
    ...['run_id', 'phase', 'round', 'max_rounds', 'rounds_left', 'next', 'ask', 'task', 'repo', 'branch', 'coder'],
    ...['reviewer', 'reviewer_fallback', 'budget', 'replies', 'review_in_progress', 'failed_reviews', 'outcome'],
    ...['pr', 'pr_url', 'handoff_path', 'state_path', 'config_changed', 'config_warnings', 'updated_at', 'changed'],
    'open_findings',
    'revision', // a counter for machines
  ],
  budget: [
    ...['run_id', 'phase', 'level', 'spent', 'limit', 'warn_at', 'complete', 'unpriced_models', 'rounds'],
    ...['by_role', 'by_model', 'sources', 'unmeasured'],
  ],
  findings: ['run_id', 'verdict', 'findings'],
  ...LOOP_SHOWN,
}

type View = (doc: Doc, width: number) => [string, string[]]

/** The commands whose result has a view of its own, with the keys it shows; the rest are laid out as key/value lines. */
const VIEWS: Record<string, View> = {
  codes: (doc, width) => [codesText(doc, width), SHOWN.codes!],
  status: (doc, width) =>
    'runs' in doc ? [runsText(doc, width), SHOWN.runs!] : [statusText(doc, width), SHOWN.status!],
  demo: (doc, width) => [statusText(doc, width), SHOWN.status!], // the demo's result is the final status
  'budget-check': (doc, width) => [budgetText(doc, width), SHOWN.budget!],
  findings: (doc, width) => [findingsText(doc, width), SHOWN.findings!],
  review: (doc, width) => [reviewText(doc, width), SHOWN.review!],
  finish: (doc, width) => [finishText(doc, width), SHOWN.finish!],
}

/** Lists of findings inside any other result keep the findings table. */
const FINDING_LISTS = ['findings', 'open_findings']

/** `width`: the terminal's columns (DEFAULT_WIDTH when stdout is none); a view never runs past it. */
export function documentText(command: string, document: Doc, width: number = DEFAULT_WIDTH): string {
  const { version: _version, ...doc } = document
  const columns = Number.isFinite(width) && width >= 40 ? Math.floor(width) : DEFAULT_WIDTH
  const view = Object.hasOwn(VIEWS, command) ? VIEWS[command] : undefined
  if (!view) return generic(doc, columns)
  const [text, shown] = view(doc, columns)
  const rest = Object.fromEntries(Object.entries(doc).filter(([key]) => !shown.includes(key)))
  return Object.keys(rest).length ? `${text}\n${generic(rest, columns)}` : text
}

/** Key/value lines, with any list of findings as the findings table below them. */
function generic(doc: Doc, width: number): string {
  const lists = FINDING_LISTS.filter((key) => Array.isArray(doc[key]) && doc[key].length > 0)
  const rest = Object.fromEntries(
    Object.entries(doc).map(([key, value]) => [key, lists.includes(key) ? `${value.length}, below` : value]),
  )
  return [
    fields(rest, '', width),
    ...lists.map((key) => `\n${key.replace('_', ' ')}\n${findingsTable(doc[key], '  ', width)}`),
  ].join('')
}
