// Codex CLI (`codex exec`): a read-only sandbox, no AGENTS.md from anywhere, the final message to a file, the answer held
// to the schema; it names its own thread (`thread.started`).
import { join } from 'node:path'
import { parseCodexJsonl } from './codex-output.ts'
import type { AgentModule, ReviewerCall, ReviewerPlaces } from './types.ts'

export const codex: AgentModule = {
  name: 'codex',
  bin: (config) => config.codex_bin,
  home: { env: 'CODEX_HOME', key: 'codex_home', defaultIn: (home) => join(home, '.codex') },
  help: { argv: ['exec', '--help'], wanted: ['--output-schema', 'resume'] },
  reviewer: {
    readsCopyFromOutside: () => false, // -C names the copy; read-only, it reads it from anywhere
    argv: (bin, call, places) => (call.resume ? resumeArgv(bin, call, places) : freshArgv(bin, call, places)),
    structured: (flags) => flags.has('--output-schema'),
    namesSession: () => false,
    resumes: (flags) => flags.has('resume'),
    // measured with the real codex (test/e2e/continuity.test.ts): exec resume's turn.completed sums the thread
    reportsSessionTotal: true,
    spendCap: () => false,
    unsetEnv: [],
    env: {},
    contextFiles: () => [], // its switches keep every instruction file unread
    stdin: (prompt) => prompt,
    // thread.started comes first: only whole lines are read
    sessionInHead: (head) => parseCodexJsonl(head.slice(0, head.lastIndexOf('\n') + 1))?.session_id ?? null,
    transcriptOf: () => null,
  },
  parseError: () => null,
  parse: (stdout, lastMessage) => parseCodexJsonl(stdout, lastMessage),
  usage: 'openai',
}

function freshArgv(bin: string, call: ReviewerCall, { copy, model, flags }: ReviewerPlaces): string[] {
  return [
    bin,
    'exec',
    '--json',
    '--sandbox',
    'read-only',
    '--skip-git-repo-check',
    '-C',
    copy,
    '-c',
    'project_doc_max_bytes=0', // no AGENTS.md from anywhere: the prompt carries the base commit's
    '--output-last-message',
    call.lastMessageFile,
    ...(flags.has('--output-schema') ? ['--output-schema', call.schemaFile] : []),
    ...(model ? ['-m', model] : []),
    '-',
  ]
}

/**
 * `codex exec resume <thread>`: it takes neither -s nor -C, so read-only is forced through the config (openai/codex
 * #40149: a resumed exec can otherwise write) and it runs where the fresh call did (the choice's cwd, the copy).
 */
function resumeArgv(bin: string, call: ReviewerCall, { model, flags }: ReviewerPlaces): string[] {
  return [
    bin,
    'exec',
    'resume',
    '--json',
    '--skip-git-repo-check',
    '-c',
    'sandbox_mode="read-only"',
    '-c',
    'project_doc_max_bytes=0',
    '--output-last-message',
    call.lastMessageFile,
    ...(flags.has('--output-schema') ? ['--output-schema', call.schemaFile] : []),
    ...(model ? ['-m', model] : []),
    call.resume!,
    '-',
  ]
}
