// pr-reply: post one answer on the run's PR (a thread reply, or a conversation comment answering a comment or a
// review), once per reviewer comment; or the final round's findings as one PR review, once.
import { readBody } from '../ground/body-input.ts'
import type { Context } from '../ground/context.ts'
import { postAnswer } from '../pr/answer.ts'
import { refuseFlagged } from '../pr/answered.ts'
import { postFinalReview } from '../pr/final-post.ts'
import { expectPr } from '../pr/moves.ts'
import { withGhTimeout } from '../pr/gh-timeout.ts'
import { findTarget } from '../pr/targets.ts'
import { configOf, resolveRun } from '../run/run-access.ts'

/** The reviewer comment answered: exactly one of thread, comment, review (the script checks that). */
export interface AnswerOptions {
  post: 'answer'
  thread?: string
  comment?: number
  review?: number
  /** On a review bot's summary: the numbers of its findings this answers. */
  findings?: number[]
  /** The answer's file, or `-` for stdin. */
  bodyFile: string
}

export type PrReplyOptions = { run?: string; cwd?: string; timeoutS?: number } & (
  | AnswerOptions
  | { post: 'review-findings' }
)

export async function run(ctx: Context, options: PrReplyOptions) {
  return withGhTimeout(options.timeoutS, () => reply(ctx, options))
}

async function reply(ctx: Context, options: PrReplyOptions) {
  if (options.post === 'review-findings') {
    const run = resolveRun(options, { allowFinished: true })
    return postFinalReview(run, expectPr(run, 'pr-reply --review-findings'))
  }
  const body = await readBody(options.bodyFile, 'body-file', { cwd: options.cwd ?? ctx.cwd, stdin: ctx.io.stdin })
  const run = resolveRun(options, { allowFinished: true })
  const pr = expectPr(run, 'pr-reply')
  const { thread, comment, review, findings } = options
  const { pr_bots, pr_action_reviews } = configOf(run).pair_loop
  const target = findTarget(run, pr, pr_bots, { thread, comment, review, findings }, pr_action_reviews)
  refuseFlagged(run, target.kind, (thread ?? comment ?? review)!) // its words are not answered: the person decides
  return postAnswer(run, target, body)
}
