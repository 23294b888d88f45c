// The report's one inline stylesheet: light and dark (prefers-color-scheme) palettes, and a print layout.
export const REPORT_CSS = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --panel: #f6f8fa;
  --coder: #2f6fce; --reviewer: #c4591a; --total: #1f2328; --budget: #cf222e;
  --approved: #1a7f37; --changes: #9a6700; --other: #59636e; --recurring: #8250df;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --panel: #151b23;
    --coder: #6ea8fe; --reviewer: #f0883e; --total: #e6edf3; --budget: #ff7b72;
    --approved: #3fb950; --changes: #d29922; --other: #9198a1; --recurring: #bc8cff;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
}
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0.2rem 0 0.8rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.75rem; padding-bottom: 0.3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 0 0 0.5rem; display: flex; gap: 0.6rem; align-items: baseline; flex-wrap: wrap; }
h4 { font-size: 0.95rem; margin: 0.75rem 0 0.25rem; color: var(--muted); }
p { margin: 0.3rem 0; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 0.9em; }
.eyebrow { color: var(--muted); margin: 0; font-size: 0.9rem; }
.muted { color: var(--muted); }
.prose { white-space: pre-wrap; overflow-wrap: anywhere; }
.task { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 1rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; border: 1px solid currentColor; border-radius: 999px; padding: 0 0.55rem;
  font-size: 0.8rem; font-weight: 600; white-space: nowrap; }
.badge.verdict-APPROVED { color: var(--approved); }
.badge.verdict-CHANGES_REQUESTED { color: var(--changes); }
.badge.verdict-ABANDONED, .badge.verdict-none { color: var(--other); }
.recurring { color: var(--recurring); }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 1.1rem; border-left: 3px solid var(--line); }
li.round { position: relative; margin: 0 0 1.5rem; padding-left: 0.6rem; }
li.round::before { content: ""; position: absolute; left: -1.65rem; top: 0.35rem; width: 0.85rem; height: 0.85rem;
  border-radius: 50%; background: var(--bg); border: 3px solid var(--line); }
li.round.round-APPROVED::before { border-color: var(--approved); }
li.round.round-CHANGES_REQUESTED::before { border-color: var(--changes); }
.side { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.4rem 0; }
.side-coder { border-left: 4px solid var(--coder); }
.side-reviewer { border-left: 4px solid var(--reviewer); }
.side-failed { border-left: 4px solid var(--budget); }
ol.findings { margin: 0.4rem 0 0; padding-left: 0; list-style: none; }
ol.findings > li { border-top: 1px dashed var(--line); padding: 0.45rem 0; }
.finding-head { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: baseline; }
.finding-id { font-weight: 700; }
.reply { margin: 0.3rem 0 0 1.2rem; padding: 0.3rem 0.6rem; background: var(--panel); border-radius: 4px; }
.reply .disposition { font-weight: 600; margin-right: 0.4rem; }
table { border-collapse: collapse; width: 100%; margin: 0.75rem 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.35rem; }
th, td { border-bottom: 1px solid var(--line); padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid var(--line); }
tfoot th, tfoot td { border-top: 2px solid var(--line); font-weight: 700; }
td.num, th.num { text-align: right; white-space: nowrap; }
th code { white-space: nowrap; }
td.task-cell { min-width: 12rem; max-width: 28rem; overflow-wrap: break-word; }
thead th.num { white-space: normal; }
td.when-cell .date { white-space: nowrap; }
.runs-table th, .runs-table td { padding: 0.35rem 0.4rem; }
figure.chart { margin: 1rem 0; }
figure.chart svg { width: 100%; height: auto; max-width: 44rem; display: block; }
figure.chart figcaption { color: var(--muted); font-size: 0.9rem; }
svg text { fill: var(--muted); font-size: 12px; font-family: inherit; }
svg .axis { stroke: var(--line); }
svg .bar-coder, .key-coder { fill: var(--coder); }
svg .bar-reviewer, .key-reviewer { fill: var(--reviewer); }
svg .running { stroke: var(--total); fill: none; stroke-width: 2; }
svg .running-dot { fill: var(--total); }
svg .budget-line { stroke: var(--budget); stroke-width: 2; stroke-dasharray: 6 4; }
svg text.budget-label { fill: var(--budget); font-weight: 600; }
.legend { display: flex; gap: 1rem; flex-wrap: wrap; font-size: 0.9rem; color: var(--muted); margin: 0.3rem 0; }
.swatch { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; vertical-align: -0.1rem; margin-right: 0.3rem; }
.swatch-coder { background: var(--coder); } .swatch-reviewer { background: var(--reviewer); }
.swatch-total { background: var(--total); height: 0.2rem; vertical-align: 0.2rem; }
.swatch-budget { border-top: 2px dashed var(--budget); height: 0; vertical-align: 0.25rem; border-radius: 0; }
.summary { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: 0.75rem; margin: 1rem 0; }
.summary div { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; }
.summary dt { color: var(--muted); font-size: 0.85rem; }
.summary dd { margin: 0; font-size: 1.3rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.summary dd small { display: block; font-size: 0.8rem; font-weight: 400; color: var(--muted); }
svg .bar-rounds { fill: var(--recurring); opacity: 0.8; }
.swatch-rounds { background: var(--recurring); }
svg text.axis-title { font-weight: 600; }
svg text.unmeasured-mark { font-weight: 700; fill: var(--fg); }
.unmeasured { font-style: italic; color: var(--muted); }
.round-meta { margin: 0 0 0.4rem; font-variant-numeric: tabular-nums; }
.banner { border: 2px solid var(--changes); border-radius: 6px; padding: 0.6rem 0.9rem; margin: 1rem 0;
  background: var(--panel); }
.banner h2 { margin: 0 0 0.3rem; border: 0; padding: 0; font-size: 1.1rem; color: var(--changes); }
.banner ul { margin: 0.3rem 0 0; padding-left: 1.2rem; }
.banner code { overflow-wrap: anywhere; }
.table-scroll { overflow-x: auto; margin: 0.75rem 0; }
.table-scroll table { margin: 0; }
.table-scroll tbody th, .table-scroll tfoot th, .table-scroll thead th:first-child {
  position: sticky; left: 0; background: var(--bg); z-index: 1; }
td.repo-cell code { white-space: nowrap; }
@media (max-width: 40rem) {
  main { padding: 1rem 0.75rem 2rem; }
  th, td { padding: 0.3rem 0.35rem; }
  figure.chart svg text { font-size: 22px; }
  /* the tables of runs and of cost become one block per row, each cell labelled: nothing hides behind a scroll */
  table.reflow caption { display: block; }
  table.reflow thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.reflow, table.reflow tbody, table.reflow tfoot { display: block; }
  table.reflow tr { display: block; border-bottom: 2px solid var(--line); padding: 0.35rem 0; }
  table.reflow tbody th, table.reflow tfoot th { display: block; position: static; border: 0; }
  table.reflow td { display: flex; gap: 0.3rem; border: 0; padding: 0.1rem 0.35rem; text-align: left;
    white-space: normal; }
  table.reflow td::before { content: attr(data-label); flex: 0 0 7rem; color: var(--muted); font-style: normal;
    font-weight: 400; }
  td.task-cell { min-width: 0; max-width: none; }
}
footer { color: var(--muted); font-size: 0.85rem; margin-top: 2.5rem; border-top: 1px solid var(--line); padding-top: 0.6rem; }
a { color: var(--coder); }
@media print {
  :root {
    --bg: #ffffff; --fg: #000000; --muted: #444444; --line: #999999; --panel: #ffffff;
    --coder: #1f5fbf; --reviewer: #b34d12; --total: #000000; --budget: #b00020;
    --approved: #116329; --changes: #7a5200; --other: #444444; --recurring: #6639ba;
  }
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  li.round, .side, ol.findings > li, figure.chart, tr, .summary div { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  a.pr-link::after { content: " (" attr(href) ")"; }
}
`
