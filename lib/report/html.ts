// HTML built with a template tag that escapes every interpolated value: agent text can never become markup.
import { stripControl } from '../ground/text.ts'

/** Markup already built by `html` (or written by hand here): inserted as it is. */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup
  }
}

/** What may be put into an `html` template: text (escaped), numbers, built markup, lists of these, or nothing. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[]

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text made safe for an element's content and a quoted attribute value; control characters dropped. */
export function escapeHtml(text: string): string {
  return stripControl(text).replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.markup
  if (Array.isArray(value)) return value.map(render).join('')
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  return escapeHtml(value as string)
}

/** `html\`<p>${text}</p>\``: the literal parts are markup, every value is escaped (unless it is SafeHtml). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!
  })
  return new SafeHtml(out)
}

/** A list of markup joined with nothing between. */
export const joinHtml = (parts: readonly HtmlValue[]): SafeHtml => new SafeHtml(render(parts))

/**
 * Agent prose with its Markdown code spans (`like this`) shown as code, as the agent meant them, not as backticks;
 * every part still escaped. An unpaired backtick stays a backtick.
 */
export function proseHtml(text: string): SafeHtml {
  const parts = text.split(/(`[^`\n]+`)/)
  return joinHtml(parts.map((part) => (/^`[^`\n]+`$/.test(part) ? html`<code>${part.slice(1, -1)}</code>` : part)))
}
