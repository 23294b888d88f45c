// Gemini CLI (`gemini -p '' -o json`, the prompt on stdin): `--approval-mode plan` (read-only: no shell, writes only to
// its plans folder), run in an empty folder, the copy added with --include-directories, the session named. It loads
// GEMINI.md from every folder of its workspace and attaches the file an `@path` in the prompt names, whatever its
// flags: its copy leaves those files out and its prompt has every `@` escaped. Facts: docs/reference/gemini-cli.md.
import { parseGeminiError, parseGeminiJson } from './gemini-output.ts'
import { geminiContextFiles } from './gemini-settings.ts'
import type { AgentModule } from './types.ts'

/** Said first in its prompt, with no at sign of its own unescaped: why every one reads `\@`. */
export const AT_NOTE =
  'Note: every at sign in this prompt is written with a backslash before it (\\@), since Gemini CLI reads an at sign followed by a path as a file to attach: read \\@ as a plain at sign.'

/** The prompt as Gemini CLI is to read it: nothing in it attached as a file, a subagent or a resource. */
export const geminiPrompt = (prompt: string) => `${AT_NOTE}\n\n${prompt.replaceAll('@', '\\@')}`

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
    // never in the copy: it would load the copy's .gemini/ (settings, hooks, MCP servers) as its workspace's
    readsCopyFromOutside: () => true,
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
    reportsSessionTotal: false,
    spendCap: () => false,
    unsetEnv: [],
    // no relaunch in a child Node with a bigger heap: one process group, half the start time
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    contextFiles: geminiContextFiles,
    stdin: geminiPrompt,
    sessionInHead: () => null,
    transcriptOf: () => null,
  },
  parse: (stdout) => parseGeminiJson(stdout),
  parseError: parseGeminiError,
  usage: 'google',
}
