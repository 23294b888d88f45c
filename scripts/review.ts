#!/usr/bin/env node
// review: the reviewer's round. Claim it, call the reviewer, parse, record, move the phase. A failure is never a verdict.
import { hostname } from 'node:os'
import { defineScript, integerFlag, isMain, main, runArgs } from '../lib/cli.ts'
import { loadConfig } from '../lib/config.ts'
import { checkBudgetBrake } from '../lib/cost/brake.ts'
import { costOfReviewerCall } from '../lib/cost/reviewer.ts'
import { fail, PairLoopError } from '../lib/errors.ts'
import { isProcessAlive } from '../lib/fsutil.ts'
import { changeRun, expectPhase, nextStep, nowIso, resolveRun, roundsLeft } from '../lib/loop.ts'
import { runArtifactsDir } from '../lib/paths.ts'
import { conductReview, sumCalls, type CallRecord, type CostOfCall } from '../lib/review/conduct.ts'
import { applyReview } from '../lib/review/record.ts'
import { processStartTime, reapReviewerGroup } from '../lib/review/process.ts'
import { chooseReviewer, parseReviewerCmd } from '../lib/review/reviewers.ts'
import type { RunState } from '../lib/state.ts'

const review = defineScript({
  name: 'review',
  description: 'Run the reviewer on the working tree, parse its verdict and findings, record the round.',
  args: {
    ...runArgs,
    'reviewer-cmd': {
      type: 'string',
      description: 'a custom reviewer command as a JSON array; gets the prompt on stdin',
      valueHint: 'json',
    },
    timeout: {
      type: 'string',
      description: 'seconds before the reviewer is killed (default pair_loop.reviewer_timeout_s, 900)',
      valueHint: 'S',
    },
    'over-budget': { type: 'boolean', description: 'the person chose to go on although the run is at its budget' },
  },
  async run(args) {
    const reviewerCmd = parseReviewerCmd(args['reviewer-cmd'])
    const timeoutS = integerFlag(args.timeout, 'timeout', { min: 1, max: 86_400 })
    const run = resolveRun(args)
    expectPhase(run, ['reviewing'], 'review')
    const config = loadConfig({ repo: run.repo })
    const choice = chooseReviewer(run, config, reviewerCmd)
    const { override } = await checkBudgetBrake(run, { overBudget: args['over-budget'] ?? false, command: 'review' })

    const log = (line: string) => process.stderr.write(`pair-loop review: ${line}\n`)
    const claimed = await changeRun(run.run_id, (state) => {
      expectPhase(state, ['reviewing'], 'review')
      const claim = state.review_claim
      if (claim && claim.pid !== process.pid && (claim.host !== hostname() || isProcessAlive(claim.pid))) {
        fail(
          'review_in_progress',
          `another review of run ${state.run_id} is running (pid ${claim.pid} since ${claim.started_at})`,
          { run_id: state.run_id, claim },
        )
      }
      // the review holding a dead claim was killed outright (SIGKILL can't be relayed): its reviewer may still run
      if (claim && reapReviewerGroup(claim.reviewer_pgid, claim.reviewer_start))
        log(`ended the reviewer left running by a killed review (process group ${claim.reviewer_pgid})`)
      state.review_claim = {
        pid: process.pid,
        host: hostname(),
        started_at: nowIso(),
        reviewer_pgid: null,
        reviewer_start: null,
      }
      if (override) state.budget_overrides.push(override)
      return { state, result: state }
    })

    if (choice.fallback_used) log(`the ${run.reviewer} CLI is missing; falling back to ${choice.tool}`)
    const costOf: CostOfCall = (reply, tool) =>
      costOfReviewerCall(
        {
          tool,
          model: reply.model ?? choice.model,
          usage: reply.usage,
          reported_usd: reply.reported_usd,
          model_usage: reply.model_usage,
          session_id: reply.session_id,
        },
        { pricing: config.pricing },
      )
    const relay = { kill: null as (() => void) | null, interrupted: false }
    let noted: Promise<void> = Promise.resolve()
    const onSignal = () => {
      relay.interrupted = true
      relay.kill?.()
    }
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal)
    try {
      const conducted = await conductReview(claimed, {
        choice,
        maxDiffBytes: config.pair_loop.max_diff_bytes,
        timeoutMs: (timeoutS ?? config.pair_loop.reviewer_timeout_s) * 1000,
        artifactsDir: runArtifactsDir(run.run_id),
        costOf,
        heartbeatMs: heartbeatMs(),
        log,
        signalRelay: relay,
        onSpawn: (pid) => {
          noted = noteReviewerGroup(run.run_id, pid)
        },
      })
      await noted
      if (!conducted.ok) {
        await recordFailure(claimed, choice.tool, conducted.code, conducted.message, conducted.calls)
        throw new PairLoopError(conducted.code, conducted.message, {
          run_id: run.run_id,
          round: claimed.rounds.length,
          tool: choice.tool,
          phase: 'reviewing',
          next: 'review',
          raw_output_path: conducted.calls.at(-1)?.raw_output_path ?? null,
        })
      }
      const { usage, cost, duration_ms } = sumCalls(conducted.calls)
      const { review: result } = conducted
      return await changeRun(run.run_id, (state) => {
        expectPhase(state, ['reviewing'], 'review')
        if (state.review_claim?.pid !== process.pid)
          fail(
            'review_in_progress',
            `another review took over run ${state.run_id}; this one's result was not recorded`,
            { run_id: state.run_id },
          )
        applyReview(state, {
          tool: choice.tool,
          fallback_used: choice.fallback_used,
          verdict: result.verdict,
          findings: result.findings,
          summary: result.summary,
          session_id: result.reply.session_id,
          model: result.reply.model ?? Object.keys(cost?.models ?? {})[0] ?? choice.model,
          usage,
          cost,
          calls: conducted.calls.length,
          duration_ms,
          raw_output_path: conducted.calls.at(-1)!.raw_output_path,
          over_budget: override !== null,
          at: nowIso(),
        })
        const recorded = state.rounds.at(-1)!.reviewer!
        return {
          state,
          result: {
            run_id: state.run_id,
            round: state.rounds.length,
            verdict: recorded.verdict,
            findings: recorded.findings,
            reviewer: {
              tool: recorded.tool,
              fallback_used: recorded.fallback_used,
              session_id: recorded.session_id,
              model: recorded.model,
              calls: recorded.calls,
              duration_ms: recorded.duration_ms,
              cost_usd: recorded.cost?.usd ?? null,
              raw_output_path: recorded.raw_output_path,
            },
            next: nextStep(state),
            rounds_left: roundsLeft(state),
          },
        }
      })
    } catch (error) {
      await releaseClaim(run.run_id)
      throw error
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
    }
  },
})

/** The failed attempt stays on the run (it was paid for); the run stays in `reviewing`, ready for the same command. */
async function recordFailure(
  run: RunState,
  tool: 'claude' | 'codex' | 'custom',
  code: string,
  message: string,
  calls: CallRecord[],
) {
  const { cost } = sumCalls(calls)
  await changeRun(run.run_id, (state) => {
    const last = calls.at(-1)
    state.failed_reviews.push({
      at: nowIso(),
      round: state.rounds.length,
      tool,
      code,
      message,
      cost,
      raw_output_path: last?.raw_output_path ?? null,
      session_id: last?.reply?.session_id ?? null,
    })
    if (state.review_claim?.pid === process.pid) state.review_claim = null
    return { state, result: undefined }
  })
}

/** The claim learns the reviewer's process group, for the next review to end if this one is killed outright. */
async function noteReviewerGroup(runId: string, pgid: number): Promise<void> {
  await changeRun(runId, (state) => {
    if (state.review_claim?.pid !== process.pid) return { result: undefined }
    state.review_claim = { ...state.review_claim, reviewer_pgid: pgid, reviewer_start: processStartTime(pgid) }
    return { state, result: undefined }
  }).catch(() => {}) // only a safety net: the review goes on without it
}

async function releaseClaim(runId: string) {
  await changeRun(runId, (state) =>
    state.review_claim?.pid === process.pid
      ? { state: { ...state, review_claim: null }, result: undefined }
      : { result: undefined },
  ).catch(() => {})
}

function heartbeatMs(): number {
  const seconds = Number(process.env.PAIR_LOOP_HEARTBEAT_S)
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : 15) * 1000
}

export default review
if (isMain(import.meta)) await main(review)
