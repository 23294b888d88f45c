// What a GitHub Actions step wrote for the job: its outputs file read as GitHub reads it (the Action's tests, unit and e2e).

/** GITHUB_OUTPUT as GitHub reads it: `name<<DELIM`, lines, `DELIM` (written here by hand from GitHub's docs). */
export function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^([\w-]+)<<(.+)$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.indexOf(open[2]!, i + 1)
    outputs[open[1]!] = lines.slice(i + 1, end).join('\n')
    i = end
  }
  return outputs
}
