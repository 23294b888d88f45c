#!/usr/bin/env node
// install-skill: copy skills/pair-loop (SKILL.md + references/) to where Claude Code or Codex looks for skills.
import { defineScript, isMain, main } from '../lib/cli.ts'
import { fail } from '../lib/errors.ts'
import { installSkill } from '../lib/skills.ts'

const installSkillScript = defineScript({
  name: 'install-skill',
  description:
    'Copy the pair-loop skill where Claude Code (--claude) or Codex (--codex) reads skills, for the user or (--project) this repository. Idempotent.',
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
    cwd: { type: 'string', description: 'work as if started in this directory', valueHint: 'dir' },
  },
  async run(args) {
    const claude = args.claude === true
    const codex = args.codex === true
    if (claude === codex) {
      fail('usage', claude ? 'give --claude or --codex, not both' : 'give --claude or --codex', {
        flags: ['--claude', '--codex'],
      })
    }
    return installSkill(claude ? 'claude' : 'codex', { project: args.project === true, cwd: args.cwd })
  },
})

export default installSkillScript
if (isMain(import.meta)) await main(installSkillScript)
