// The one subprocess wrapper for short commands (git, gh): zx with an explicit preset, so ZX_* env vars can't flip it.
import { fail } from './errors.ts'
import { firstLineOf } from './text.ts'

export interface ExecResult {
  ok: boolean
  exitCode: number | null
  stdout: string
  stderr: string
}

export interface ExecOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  input?: string
  timeoutMs?: number
}

export async function exec(command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  const { $ } = await import('zx/core')
  const shell = $({
    quiet: true,
    nothrow: true,
    verbose: false,
    cwd: options.cwd,
    env: options.env ?? process.env,
    input: options.input ?? '',
    timeout: `${options.timeoutMs ?? 60_000}ms` as `${number}ms`,
    prefix: '',
    postfix: '',
  })
  const out = await shell`${command} ${args}`
  return { ok: out.exitCode === 0, exitCode: out.exitCode, stdout: out.stdout, stderr: out.stderr }
}

export async function execOrFail(
  command: string,
  args: string[],
  options: ExecOptions & { code?: 'git_error' | 'gh_error' } = {},
): Promise<string> {
  const result = await exec(command, args, options)
  if (!result.ok) {
    const said =
      firstLineOf(result.stderr) ||
      firstLineOf(result.stdout) ||
      (result.exitCode === null ? 'did not run' : `exit ${result.exitCode}`)
    fail(options.code ?? 'git_error', `${command} ${args.slice(0, 2).join(' ')} failed: ${said}`, {
      command: [command, ...args].join(' '),
      exit: result.exitCode,
      stderr: result.stderr.slice(0, 2000),
    })
  }
  return result.stdout
}
