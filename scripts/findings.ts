#!/usr/bin/env node
// findings: the run's findings with their replies, or as SARIF 2.1.0 / reviewdog rdjsonl for other tools.
import { defineScript, isMain, main, rawOutput, runArgs, type RawOutput } from '../lib/cli.ts'
import { toRdjsonl } from '../lib/export/rdjsonl.ts'
import { toSarif } from '../lib/export/sarif.ts'
import { fail } from '../lib/errors.ts'
import { resolveRun } from '../lib/run-access.ts'
import { allFindings } from '../lib/run-queries.ts'
import { packageRoot, projectUrl } from '../lib/package.ts'
import type { RunState } from '../lib/state.ts'

const FORMATS = ['json', 'sarif', 'rdjsonl'] as const

const findings = defineScript({
  name: 'findings',
  description: "The run's findings with their replies; --format sarif or rdjsonl for code scanning and reviewdog.",
  args: {
    ...runArgs,
    format: {
      type: 'enum',
      options: [...FORMATS],
      default: 'json',
      description: 'json (pair-loop document), sarif or rdjsonl',
      valueHint: 'json|sarif|rdjsonl',
    },
  },
  async run(args, io) {
    // another tool's format is printed as it is: a view for a person of it would be neither
    if ((args as { text?: boolean }).text && args.format !== 'json')
      fail('usage', `--text shows the findings for a person; --format ${args.format} is for another tool: give one`, {
        flag: '--text',
      })
    const run = resolveRun(args, { allowFinished: true })
    if (args.format === 'sarif') return rawOutput(JSON.stringify(toSarif(run, packageInfo())))
    if (args.format === 'rdjsonl') {
      const { text, skipped } = toRdjsonl(run, packageInfo().informationUri)
      if (skipped.length)
        io.stderr(`pair-loop findings: ${skipped.length} finding(s) without a path skipped: ${skipped.join(', ')}\n`)
      return { raw: text } satisfies RawOutput // no findings: nothing at all, not an empty line
    }
    return findingsDocument(run)
  },
})

function findingsDocument(run: RunState) {
  const latest = run.rounds.findLast((round) => round.reviewer)?.reviewer ?? null
  return {
    run_id: run.run_id,
    verdict: latest?.verdict ?? null,
    findings: allFindings(run).map((finding) => {
      const reply = run.replies[finding.id]
      return {
        ...finding,
        reply: reply
          ? { disposition: reply.disposition, body: reply.body, at: reply.at, comment_url: reply.comment_url ?? null }
          : null,
        status: reply ? 'answered' : 'open',
      }
    }),
  }
}

/** The package's own version and web page (none unless package.json names one), from its package.json. */
function packageInfo(): { version: string; informationUri: string | null } {
  const json = packageRoot()?.json
  return { version: json?.version ?? '0.0.0', informationUri: projectUrl(json) }
}

export default findings
if (isMain(import.meta)) void main(findings)
