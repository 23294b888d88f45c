// install-skill: copy skills/pair-loop (SKILL.md + references/) to where Claude Code or Codex looks for skills, for the
// person or into the repository (then git-excluded unless it is to be committed).
import type { Context } from '../ground/context.ts'
import { installSkill, type SkillAgent } from '../ground/skills.ts'

export interface InstallSkillOptions {
  agent: SkillAgent
  /** Into the repository's top level instead of the person's skills folder. */
  project: boolean
  /** With `project`: the skill is to be committed, so it is not added to .git/info/exclude. */
  commit: boolean
  cwd?: string
}

export async function run(ctx: Context, options: InstallSkillOptions) {
  return installSkill(options.agent, { project: options.project, commit: options.commit, cwd: options.cwd ?? ctx.cwd })
}
