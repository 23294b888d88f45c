// The report's page: one HTML document with its stylesheet inline and a policy that lets it load nothing at all.
import { html, type HtmlValue, SafeHtml } from './html.ts'
import { formatWhen } from './format.ts'
import { REPORT_CSS } from './style.ts'

// the stylesheet is ours, not agent text: inserted as it is
const REPORT_CSS_MARKUP = new SafeHtml(REPORT_CSS)

/** No script, no fetch, no font, no image from anywhere: only the inline stylesheet applies. */
const CONTENT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

export function reportPage({
  title,
  body,
  generatedAt,
}: {
  title: string
  body: HtmlValue
  generatedAt: Date
}): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="pair-loop report">
<title>${title}</title>
<style>${REPORT_CSS_MARKUP}</style>
</head>
<body>
<main>
${body}
<footer>Written by <code>pair-loop report</code> on ${formatWhen(generatedAt.toISOString())}. Figures come from the run's state and the agents' own transcripts, as <code>pair-loop budget-check</code> reads them.</footer>
</main>
</body>
</html>
`.markup
}
