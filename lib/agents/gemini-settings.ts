// The names Gemini CLI loads as instructions from every folder it may read (docs/reference/gemini-cli.md): GEMINI.md
// always, plus each `context.fileName` of the person's settings (user, system, system defaults), which add to it.
import { readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { userHome } from '../ground/context.ts'

export const GEMINI_CONTEXT_FILE = 'GEMINI.md'

/** Where 0.61.0 reads settings that can name context files: the cwd's are the reviewer's own empty folder's. */
export function geminiSettingsFiles(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] {
  const system =
    env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ||
    (platform === 'darwin'
      ? '/Library/Application Support/GeminiCli/settings.json'
      : platform === 'win32'
        ? 'C:\\ProgramData\\gemini-cli\\settings.json'
        : '/etc/gemini-cli/settings.json')
  const defaults = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), 'system-defaults.json')
  const user = join(env.GEMINI_CLI_HOME || userHome(env), '.gemini', 'settings.json')
  return [defaults, user, system]
}

/** The base names of every context file the settings name, GEMINI.md first (a path's last part: conservative). */
export function geminiContextFiles(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] {
  const names = new Set([GEMINI_CONTEXT_FILE])
  for (const file of geminiSettingsFiles(env, platform)) {
    const setting = readSettings(file)?.context?.fileName
    for (const name of Array.isArray(setting) ? setting : [setting])
      if (typeof name === 'string' && name.trim()) names.add(basename(expandEnv(name.trim(), env)))
  }
  return [...names]
}

// biome-ignore lint/suspicious/noExplicitAny: a settings file is probed key by key; every use checks the type
function readSettings(file: string): any {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return null // no such file: nothing named there
  }
  try {
    return JSON.parse(stripComments(text))
  } catch {
    return null // the CLI itself refuses a settings file it cannot parse
  }
}

/** `$VAR` and `${VAR}` as the CLI expands them in settings values (an unset one stays as written). */
const expandEnv = (value: string, env: NodeJS.ProcessEnv) =>
  value.replace(/\$(?:(\w+)|\{([^}]+)\})/g, (whole, bare, braced) => env[bare ?? braced] ?? whole)

/** JSON with `//` and `/* *\/` comments (the CLI's settings format) as plain JSON; strings kept as they are. */
export function stripComments(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') {
      const end = stringEnd(text, i)
      out += text.slice(i, end)
      i = end - 1
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      out += '\n'
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 1
      out += ' '
    } else out += c
  }
  return out
}

/** The index after the string that opens at `start`, escapes skipped. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === '"') return i + 1
  }
  return text.length
}
