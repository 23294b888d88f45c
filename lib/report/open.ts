// `report --open`: the page handed to the person's browser ($BROWSER, else the desktop's opener), started detached so
// the command prints its document and ends while the browser stays.
import { spawn } from 'node:child_process'
import { context } from '../ground/context.ts'

/** The command that opens a file: $BROWSER (a program, as `sensible-browser` reads it), else the platform's opener. */
export function openerFor(env: Readonly<NodeJS.ProcessEnv>, platform: NodeJS.Platform): string[] {
  const browser = env.BROWSER?.split(':')[0]?.trim()
  if (browser) return [browser]
  if (platform === 'darwin') return ['open']
  if (platform === 'win32') return ['cmd', '/c', 'start', '""']
  return ['xdg-open']
}

/** Start the opener on `path`; true once it started, false (said on the command's stderr) when it could not be run. */
export function openInBrowser(path: string, stderr: (text: string) => void): Promise<boolean> {
  const ctx = context()
  const [program, ...args] = openerFor(ctx.env, process.platform)
  return new Promise((resolve) => {
    const child = spawn(program!, [...args, path], { detached: true, stdio: 'ignore', env: { ...ctx.env } })
    child.once('error', (error) => {
      stderr(`pair-loop report: could not open the page with ${program} (${error.message}); open ${path}\n`)
      resolve(false)
    })
    child.once('spawn', () => {
      child.unref()
      resolve(true)
    })
  })
}
