// What a worker reads on its stdin, one JSON line each: the run, announced by its `review` as soon as it knows it is
// starting a new attempt (the worker begins on the change while `review` checks and claims), then the job once the run
// is claimed in the worker's name. A pipe closed before the job (a check failed, `review` was killed) is no job.
import * as v from 'valibot'

/** The first line: the run a new attempt is for (written by launch.ts's announceLine). */
const Announced = v.object({ announce: v.literal('run'), run_id: v.string() })

/** The run id of an announcing line (null: the line is something else, e.g. a job sent without one before it). */
export function announcedRun(line: string | null): string | null {
  if (line === null) return null
  try {
    const parsed = v.safeParse(Announced, JSON.parse(line))
    return parsed.success ? parsed.output.run_id : null
  } catch {
    return null
  }
}

/**
 * The lines of `input`, each as soon as its newline comes (not when the pipe closes); null once it has closed (or
 * broke). `close` lets go of it: the worker reads nothing after its job.
 */
export function lineReader(input: AsyncIterable<Uint8Array | string>): {
  next: () => Promise<string | null>
  close: () => void
} {
  const iterator = input[Symbol.asyncIterator]()
  const decoder = new TextDecoder()
  let buffered = ''
  let ended = false
  return {
    async next() {
      for (;;) {
        const end = buffered.indexOf('\n')
        if (end >= 0) {
          const line = buffered.slice(0, end)
          buffered = buffered.slice(end + 1)
          return line
        }
        if (ended) {
          const rest = buffered
          buffered = ''
          return rest === '' ? null : rest
        }
        try {
          const { value, done } = await iterator.next()
          if (done) ended = true
          else buffered += typeof value === 'string' ? value : decoder.decode(value, { stream: true })
        } catch {
          ended = true // a pipe broken is a pipe closed
        }
      }
    },
    close() {
      ended = true
      Promise.resolve(iterator.return?.()).catch(() => {})
    },
  }
}
