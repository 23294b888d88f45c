// The agent skill (skills/pair-loop): where this package keeps it, and where Claude Code and Codex look for skills.
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join, relative, sep } from 'node:path'
import { context, userHome } from './context.ts'
import { fail } from './errors.ts'
import { writeFileAtomic } from './fsutil.ts'
import { ensureExcluded, excludeFile, topLevel } from './git.ts'
import { packageRoot } from './package.ts'

export const SKILL_NAME = 'pair-loop'
export const SKILL_AGENTS = ['claude', 'codex'] as const
export type SkillAgent = (typeof SKILL_AGENTS)[number]
export type SkillScope = 'user' | 'project'

/**
 * The folder holding SKILL.md and references/, in this package's root: it works from the sources under bun and
 * deno, and from dist/ under node after `npm pack` (`files` ships `skills`).
 */
export function skillSource(moduleUrl: string = import.meta.url): string {
  const root = packageRoot(moduleUrl)
  const candidate = root && join(root.dir, 'skills', SKILL_NAME)
  if (candidate && existsSync(join(candidate, 'SKILL.md'))) return candidate
  fail('internal', `cannot find skills/${SKILL_NAME}/SKILL.md near ${moduleUrl}; the package is incomplete`, {
    tried: candidate ? [candidate] : [],
    module: moduleUrl,
  })
}

export interface TargetOptions {
  project?: boolean
  cwd?: string
  env?: NodeJS.ProcessEnv
}

/** `$HOME` as the agents' CLIs read it (a test or a sandbox may set HOME; the account's home is the fallback). */
const home = (env: Readonly<NodeJS.ProcessEnv>) => userHome(env)

/**
 * Where the agent reads skills from:
 * - Claude Code: `$CLAUDE_CONFIG_DIR/skills` (default `~/.claude/skills`) for the user, `<repo top>/.claude/skills` for the project.
 * - Codex: `~/.agents/skills` for the user, `<repo top>/.agents/skills` for the project.
 */
export async function skillTarget(
  agent: SkillAgent,
  { project = false, cwd = context().cwd, env = context().env }: TargetOptions = {},
): Promise<string> {
  if (project) {
    const top = await topLevel(cwd) // git_error outside a repository: a project install needs one
    return join(top, agent === 'claude' ? '.claude' : '.agents', 'skills', SKILL_NAME)
  }
  if (agent === 'claude') return join(env.CLAUDE_CONFIG_DIR || join(home(env), '.claude'), 'skills', SKILL_NAME)
  // Codex reads user skills from $HOME/.agents/skills and repo skills from .agents/skills (cwd up to the repo root);
  // $CODEX_HOME/skills is still scanned but documented as deprecated (developers.openai.com/codex/skills), so we write the current place.
  return join(home(env), '.agents', 'skills', SKILL_NAME)
}

/** A type alias, not an interface, so it passes as a pair-loop Document (which has an index signature). */
export type InstallResult = {
  agent: SkillAgent
  scope: SkillScope
  skill_dir: string
  /** Every file of the installed skill (absolute paths, sorted); the same on every run. */
  installed: string[]
  /** The files this run wrote or removed; empty when the skill was already in place. */
  updated: string[]
  removed: string[]
  changed: boolean
  /** A project install listed in .git/info/exclude, so `start` finds a clean tree (false with --commit, or for the user). */
  excluded: boolean
  exclude_file: string | null
}

/** Copy the skill folder to `target`: each file through temp+rename, unchanged files untouched, stale files removed. */
export function installSkillFiles(
  source: string,
  target: string,
): Pick<InstallResult, 'installed' | 'updated' | 'removed' | 'changed'> {
  const files = listFiles(source)
  if (!files.includes('SKILL.md')) fail('internal', `${source} has no SKILL.md`, { source })
  const sameFolder = existsSync(target) && realpathSync(target) === realpathSync(source)
  const updated: string[] = []
  const removed: string[] = []
  if (!sameFolder) {
    for (const file of files) {
      const from = join(source, file)
      const to = join(target, file)
      const content = readFileSync(from)
      if (isSameFile(to, content)) continue
      writeFileAtomic(to, content, 0o644)
      updated.push(to)
    }
    // files a former version of the skill shipped and this one doesn't: the folder is ours, an old reference must not linger
    if (existsSync(target)) {
      const wanted = new Set(files)
      for (const file of listFiles(target)) {
        if (wanted.has(file)) continue
        unlinkSync(join(target, file))
        removed.push(join(target, file))
      }
      removeEmptyDirs(target)
    }
  }
  return {
    installed: files.map((file) => join(target, file)).sort(),
    updated: updated.sort(),
    removed: removed.sort(),
    changed: updated.length + removed.length > 0,
  }
}

export async function installSkill(
  agent: SkillAgent,
  options: TargetOptions & { source?: string; commit?: boolean } = {},
): Promise<InstallResult> {
  const source = options.source ?? skillSource()
  const target = await skillTarget(agent, options)
  const files = installSkillFiles(source, target)
  const exclusion = options.project
    ? await projectExclusion(target, options.cwd ?? context().cwd, options.commit === true)
    : { excluded: false, exclude_file: null }
  return { agent, scope: options.project ? 'project' : 'user', skill_dir: target, ...files, ...exclusion }
}

/**
 * A project install is the person's tooling, not part of the change under review: it goes into the repository's
 * .git/info/exclude (never a tracked file), so `start` finds a clean tree. With `commit` the person wants it tracked:
 * the line is taken out again if an earlier install put it there.
 */
async function projectExclusion(target: string, cwd: string, commit: boolean) {
  const top = await topLevel(cwd)
  const name = `${relative(top, target).split(sep).join('/')}/`
  if (!commit) return { excluded: true, exclude_file: await ensureExcluded(top, name) }
  const file = await excludeFile(top)
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []
  if (lines.includes(`/${name}`)) writeFileSync(file, lines.filter((line) => line !== `/${name}`).join('\n'))
  return { excluded: false, exclude_file: file }
}

function isSameFile(path: string, content: Buffer): boolean {
  try {
    const stat = lstatSync(path)
    return stat.isFile() && stat.size === content.length && readFileSync(path).equals(content)
  } catch {
    return false
  }
}

/** Regular files under `dir`, relative, `/`-separated; dot entries (editor and temp files) are not part of the skill. */
export function listFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue
      const path = join(current, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) out.push(relative(dir, path).split(sep).join('/'))
    }
  }
  walk(dir)
  return out.sort()
}

function removeEmptyDirs(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const path = join(dir, entry.name)
    removeEmptyDirs(path)
    if (readdirSync(path).length === 0) rmdirSync(path)
  }
}

/** The `---` frontmatter of a SKILL.md as flat `key: value` pairs (all this skill uses; both agents need `name` and `description`). */
export function parseFrontmatter(text: string): Record<string, string> | null {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text.replace(/^\uFEFF/, ''))
  if (!match) return null
  const fields: Record<string, string> = {}
  for (const line of match[1]!.split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith('#')) continue
    const pair = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(line)
    if (!pair) return null
    let value = pair[2]!.trim()
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1)
    fields[pair[1]!] = value
  }
  return fields
}
