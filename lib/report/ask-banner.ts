// The banner at the top of a run's page while the run waits for the person: why, and the command for each answer.
import { askWhy } from '../run/ask-words.ts'
import { nextFields } from '../run/run-queries.ts'
import type { RunState } from '../run/state.ts'
import { html, type SafeHtml } from './html.ts'

export function askBanner(run: RunState): SafeHtml | null {
  const { ask } = nextFields(run)
  if (!ask) return null
  const choices = ask.choices.map((choice) => html`<li>${choice.say}: <code>${choice.command}</code></li>`)
  return html`<section class="banner" role="note" aria-labelledby="ask-heading" data-ask="${ask.reason}">
<h2 id="ask-heading">This run needs your decision</h2>
<p>It waits for you because ${askWhy(ask.reason)}. Your answers:</p>
<ul>${choices}</ul>
</section>`
}
