// The worker's watch over its reviewer calls: what each call printed (bytes, when last), its session as soon as it is
// known, a heartbeat in the attempt's progress file, and the no-output watchdog: a call that prints nothing, and whose
// named transcript does not grow, for longer than the silence allowed is ended (its whole process group).
import { fileSizeOr } from '../ground/fsutil.ts'
import { context, nowIso } from '../ground/context.ts'
import { settings } from '../ground/settings.ts'
import { type AttemptProgress, type MemberState, writeProgress } from './attempt-files.ts'
import type { CallControl } from './process.ts'
import type { ReviewerChoice } from './reviewers.ts'

/** Why the worker stopped a call itself: the person's cancel, a signal from elsewhere, or the watchdog. */
export type StopReason = { why: 'cancelled' } | { why: 'signal'; signal: string } | { why: 'silent'; silentS: number }

export interface AttemptWatch {
  /** Given to conductReview as its signal relay: `kill` ends the running call, `onOutput` sees its output. */
  control: CallControl
  /** The choice, telling the watch each session it names (claude's `--session-id`) and its transcript. */
  watched: (choice: ReviewerChoice) => ReviewerChoice
  /** A call started (its process group's id). */
  started: (pgid: number) => void
  /** End the running call (and any not started yet) for this reason. */
  stop: (reason: StopReason) => void
  stopped: () => StopReason | null
  /** A panel member's state, for the in-flight document. */
  member: (tool: string, state: MemberState) => void
  dispose: () => void
}

/** Silence allowed before the watchdog ends a call: 300 s, or PAIR_LOOP_REVIEWER_SILENCE_S (tests). */
export const silenceMs = (): number => settings().reviewerSilenceMs

/** How much of a call's stdout is searched for codex's `thread.started` (it comes first). */
const HEAD_BYTES = 64 * 1024

export function watchAttempt(
  runId: string,
  base: Pick<AttemptProgress, 'attempt' | 'worker_pid' | 'worker_pgid'>,
  options: { silenceMs: number; tickMs?: number },
): AttemptWatch {
  const progress: AttemptProgress = {
    ...base,
    tool: null,
    sessions: [],
    calls: 0,
    output_bytes: 0,
    last_output_at: null,
    heartbeat_at: nowIso(),
  }
  let lastActivity = context().now()
  let reason: StopReason | null = null
  let transcript: { path: string; size: number } | null = null
  let head = ''
  let sessionOfCall: string | null = null
  let sessionInHead: ((head: string) => string | null) | null = null
  let dirty = true
  const control: CallControl = { kill: null, interrupted: false }

  const save = () => {
    dirty = false
    try {
      writeProgress(runId, progress)
    } catch {} // a heartbeat missed is not a reason to stop the review
  }
  const noteSession = (session: string) => {
    if (sessionOfCall) return
    sessionOfCall = session
    progress.sessions.push(session)
    save() // at once: should the worker be killed, what the call cost is found through it
  }
  control.onOutput = (chunk, stream) => {
    lastActivity = context().now()
    progress.output_bytes += chunk.length
    progress.last_output_at = new Date(lastActivity).toISOString()
    dirty = true
    if (stream !== 'stdout' || sessionOfCall || head.length >= HEAD_BYTES) return
    head += chunk.toString('utf8')
    const id = sessionInHead?.(head)
    if (id) noteSession(id)
  }

  const stop = (why: StopReason) => {
    reason ??= why
    control.interrupted = true
    control.kill?.()
  }
  const tick = () => {
    const now = context().now()
    if (transcript) {
      const size = fileSizeOr(transcript.path, -1)
      if (size !== transcript.size) {
        transcript.size = size
        lastActivity = now
      }
    }
    if (control.kill && now - lastActivity > options.silenceMs)
      stop({ why: 'silent', silentS: Math.round(options.silenceMs / 1000) })
    progress.heartbeat_at = new Date(now).toISOString()
    save()
  }
  const timer = setInterval(tick, options.tickMs ?? Math.min(1_000, Math.max(50, options.silenceMs / 4)))
  const flusher = setInterval(() => dirty && save(), 250)
  save()

  return {
    control,
    watched: (choice) => {
      progress.tool = choice.tool
      sessionInHead = choice.sessionInHead
      return {
        ...choice,
        argv: (call) => {
          sessionOfCall = null
          head = ''
          transcript = null
          if (call.sessionId) {
            noteSession(call.sessionId)
            const path = choice.transcriptOf(call.sessionId)
            if (path) transcript = { path, size: -1 }
          }
          return choice.argv(call)
        },
      }
    },
    started: () => {
      lastActivity = context().now()
      progress.calls += 1
      save()
    },
    stop,
    stopped: () => reason,
    member: (tool, state) => {
      progress.members = { ...progress.members, [tool]: state }
      save()
    },
    dispose: () => {
      clearInterval(timer)
      clearInterval(flusher)
      save()
    },
  }
}
