// The review worker run in the test's own process (the Context's reviewWorker): what `review --worker` runs, without
// starting a runtime and loading pair-loop again for each review (a third of a second of CPU each, 237 per suite run).
// A small shell stands for it: its pid and process group are the worker's, so liveness, pid reuse and `review --cancel`
// see a process as they would; the signals it gets (TERM, INT, HUP) it tells on its stdout, and the worker gets them
// as its Context's signal. It lives until the worker ends (its stdin closed: also when this test process dies).
// A SIGKILL cannot be told: tests that kill a worker run the real one (`sandbox(files, { worker: 'process' })`).
import { spawn } from 'node:child_process'
import { closeSync, openSync, writeSync } from 'node:fs'
import { type InProcessWorker, processContext, withContext } from '../lib/ground/context.ts'
import { conductFinalRound } from '../lib/pr/final-round.ts'
import { conductRound } from '../lib/review/session.ts'
import { runWorker } from '../lib/review/worker.ts'

const STAND_IN = [
  "trap 'echo SIGTERM; t=1' TERM",
  "trap 'echo SIGINT; t=1' INT",
  "trap 'echo SIGHUP; t=1' HUP",
  // a read cut short by a trapped signal fails as an end of input does: the trap's mark tells them apart
  'while :; do t=; read -r _ && continue; [ "$t" = 1 ] || exit 0; done',
].join('\n')

export const inProcessWorker: InProcessWorker = ({ attempt, stdin, logPath, from }) => {
  const standIn = spawn('sh', ['-c', STAND_IN], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] })
  if (standIn.pid === undefined) throw new Error('could not start the stand-in of an in-process review worker')
  const pid = standIn.pid
  const log = openSync(logPath, 'a')
  const write = (text: string) => {
    try {
      writeSync(log, text)
    } catch {} // a log closed under it (the run's folder removed at the test's end)
  }
  const stop = new AbortController()
  standIn.stdout.on('data', (chunk: Buffer) => {
    const name = chunk.toString('utf8').trim().split('\n')[0] as NodeJS.Signals
    stop.abort(name)
  })
  standIn.stdin.on('error', () => {})
  const ctx = processContext(
    { stdin, stdout: write, stderr: write, signal: stop.signal },
    {
      env: { ...from.env, PAIR_LOOP_HOME: from.home },
      cwd: from.cwd,
      home: from.home,
      pid,
      ...(from.programs ? { programs: from.programs } : {}),
    },
  )
  void withContext(ctx, () => runWorker({ attempt, pgid: pid }, { round: conductRound, pr: conductFinalRound }))
    .catch((error: unknown) => write(`review worker: ${(error as Error).stack ?? error}\n`))
    .finally(() => {
      standIn.stdin.end() // the worker's process ends with its attempt
      closeSync(log)
    })
  return pid
}
