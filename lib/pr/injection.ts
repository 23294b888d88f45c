// Prompt-injection suspects in PR text: a closed, documented set of patterns a comment body is matched against. A
// match is a flag for the agent and the person, never a verdict: pr-flag sets the item aside. Pure.

/**
 * The patterns, in the order they are tried (the first that matches names the item):
 * - `instruction_override`: asks the reader to ignore or replace its instructions ("ignore all previous instructions").
 * - `run_command`: asks to run a command or script, or pipes a download into a shell (`curl … | sh`, `rm -rf`, `sudo`).
 * - `fetch_url`: asks to fetch, download or open a URL.
 * - `reveal_secret`: asks to print, post or send secrets or files outside the repository (`~/.ssh/id_rsa`, tokens, `.env`).
 * - `resolve_or_approve`: asks to resolve or dismiss every thread, or to approve or merge the PR.
 */
export const INJECTION_PATTERNS = {
  instruction_override: [
    /\b(ignore|disregard|forget|override)\b[^\n]{0,40}\b(previous|prior|above|earlier|all|your|system)\b[^\n]{0,30}\b(instructions?|prompts?|rules|directions|guidelines)\b/i,
    /\b(new|updated) (system )?instructions?\s*:/i,
    /\byou are now\b/i,
  ],
  run_command: [
    /\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/i,
    /\b(run|execute|exec)\b[^\n]{0,20}\b(this|the following|these)\b[^\n]{0,20}\b(commands?|scripts?|shell)\b/i,
    /\brm\s+-rf\s+[/~]/,
    /\bsudo\s+\S/,
  ],
  fetch_url: [/\b(fetch|download|visit|open|load|retrieve)\b[^\n]{0,40}https?:\/\//i],
  reveal_secret: [
    /\b(print|post|send|reveal|share|paste|upload|include|show|cat|leak|exfiltrate|echo)\b[^\n]{0,60}(id_rsa|id_ed25519|\.ssh\b|\.aws\b|\.env\b|\.npmrc|\.netrc|api[_ -]?keys?|secrets?|tokens?|passwords?|credentials?|private keys?|\/etc\/passwd|\$[A-Z_]*(TOKEN|KEY|SECRET))/i,
  ],
  resolve_or_approve: [
    /\b(resolve|dismiss|close|hide)\b[^\n]{0,10}\b(all|every|each)\b[^\n]{0,20}\b(threads?|comments?|conversations?|findings?)\b/i,
    /\b(approve|merge)\b[^\n]{0,10}\b(this|the)\s+(pr|pull request)\b/i,
  ],
} as const satisfies Record<string, readonly RegExp[]>

export type InjectionPattern = keyof typeof INJECTION_PATTERNS
export const INJECTION_PATTERN_NAMES = Object.keys(INJECTION_PATTERNS) as InjectionPattern[]

export interface InjectionMark {
  injection_suspect: boolean
  injection_pattern: InjectionPattern | null
}

/** The first pattern any of the bodies matches, or none. */
export function injectionOf(bodies: readonly string[]): InjectionMark {
  for (const name of INJECTION_PATTERN_NAMES)
    if (INJECTION_PATTERNS[name].some((pattern) => bodies.some((body) => pattern.test(body))))
      return { injection_suspect: true, injection_pattern: name }
  return { injection_suspect: false, injection_pattern: null }
}
