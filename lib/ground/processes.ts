// Whether a process a claim names is still the one running: by pid, host and (on Linux) its start time, until the
// claim expires. One check for the review claim and the claims on gh side effects.
import { readFileSync } from 'node:fs'
import { context } from './context.ts'

/** Alive: it exists and is not a zombie (a process that exited, waiting for a parent that may never reap it). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  return processState(pid) !== 'Z'
}

/** A process's state letter as Linux reports it (R, S, Z, …); null where unknown. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || null
  } catch {
    return null
  }
}

/** A process's start time as the kernel counts it (Linux), to tell a pid from a recycled one; null where unknown. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null // field 22, counted after "pid (comm) "
  } catch {
    return null
  }
}

/** Who holds a claim: the process, its host, and (when recorded) when it started. */
export interface Holder {
  pid: number
  host: string
  pid_start?: string | null
}

/**
 * Held by another process still running: not this one; not past `expiresAt`; on another host (which we cannot look
 * into) until then; on this host, only while its pid is alive and, when recorded, started when the claimer did.
 */
export function heldByAnother(holder: Holder, expiresAt: number, now = context().now()): boolean {
  const { pid, host } = context()
  if (holder.pid === pid && holder.host === host) return false
  if (now > expiresAt) return false
  if (holder.host !== host) return true
  if (!isProcessAlive(holder.pid)) return false
  return !holder.pid_start || processStartTime(holder.pid) === holder.pid_start
}
