#!/usr/bin/env node
// install-skill: its flags, read into options for lib/commands/install-skill.ts (the skill, for Claude Code or Codex).
import { defineScript, isMain, main } from '../lib/cli/cli.ts'
import * as installSkill from '../lib/commands/install-skill.ts'
import { fail } from '../lib/ground/errors.ts'

const installSkillScript = defineScript({
  name: 'install-skill',
  description: 'Install the pair-loop skill for Claude Code (--claude) or Codex (--codex), for you or --project.',
  args: {
    claude: {
      type: 'boolean',
      description:
        'install for Claude Code: $CLAUDE_CONFIG_DIR/skills (default ~/.claude/skills), or <repo>/.claude/skills',
    },
    codex: { type: 'boolean', description: 'install for Codex: ~/.agents/skills, or <repo>/.agents/skills' },
    project: {
      type: 'boolean',
      description: "install into the repository's top level instead of the user's skills folder",
    },
    commit: {
      type: 'boolean',
      description:
        'with --project: you mean to commit the skill, so it is not added to .git/info/exclude (by default it is)',
    },
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args, _io, ctx) {
    const claude = args.claude === true
    const codex = args.codex === true
    if (claude === codex) {
      fail('usage', claude ? 'give --claude or --codex, not both' : 'give --claude or --codex', {
        flags: ['--claude', '--codex'],
      })
    }
    if (args.commit && !args.project)
      fail('usage', '--commit goes with --project (a skill installed for you is not in any repository)', {
        flag: '--commit',
      })
    return installSkill.run(ctx, {
      agent: claude ? 'claude' : 'codex',
      project: args.project === true,
      commit: args.commit === true,
      cwd: args.cwd,
    })
  },
})

export default installSkillScript
if (isMain(import.meta)) void main(installSkillScript)
