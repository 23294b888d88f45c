// Gemini CLI (`gemini -p '' -o json`, the prompt on stdin): `--approval-mode plan` (read-only: no shell, writes only to
// its plans folder), run in an empty folder so no GEMINI.md is read, the copy added with --include-directories, the
// session named. Facts: docs/reference/gemini-cli.md.
import { join } from 'node:path'
import { parseGeminiJson } from './gemini-output.ts'
import type { AgentModule } from './types.ts'

export const gemini: AgentModule = {
  name: 'gemini',
  bin: (config) => config.gemini_bin,
  // GEMINI_CLI_HOME is the home its `.gemini/` folder is in, not that folder
  home: { env: 'GEMINI_CLI_HOME', key: 'gemini_cli_home', defaultIn: (home) => home },
  help: {
    argv: ['--help'],
    wanted: ['--approval-mode', '--include-directories', '--session-id', '--skip-trust', '--output-format', '--resume'],
  },
  reviewer: {
    readsCopyFromOutside: (flags) => flags.has('--include-directories'),
    argv: (bin, call, { copy, cwd, model, flags }) => [
      bin,
      '-p',
      '', // the prompt is stdin alone
      '-o',
      'json',
      ...(flags.has('--approval-mode') ? ['--approval-mode', 'plan'] : []),
      ...(flags.has('--skip-trust') ? ['--skip-trust'] : []), // headless in an untrusted folder it would exit 55
      ...(flags.has('--include-directories') && cwd !== copy ? ['--include-directories', copy] : []),
      ...(call.resume && flags.has('--resume')
        ? ['--resume', call.resume]
        : flags.has('--session-id') && call.sessionId
          ? ['--session-id', call.sessionId]
          : []),
      ...(model ? ['-m', model] : []),
    ],
    structured: () => false,
    namesSession: (flags) => flags.has('--session-id'),
    resumes: (flags) => flags.has('--resume') && flags.has('--session-id'),
    spendCap: () => false,
    unsetEnv: [],
    // no relaunch in a child Node with a bigger heap: one process group, half the start time
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    sessionInHead: () => null,
    transcriptOf: () => null,
  },
  parse: (stdout) => parseGeminiJson(stdout),
  usage: 'google',
}
