// --text on every command: the same result for a person (aligned tables, key/value lines), the same exit status,
// errors as one line on stdout besides the stderr line, and never switched on by a terminal.
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { cell, table } from '../lib/view/text-layout.ts'
import { documentText } from '../lib/view/text-view.ts'
import { COMMANDS } from '../scripts/commands.ts'
import { CLI_COMMAND, type CliResult, sandbox } from './_helpers.ts'
import { expectOk, writeChange } from './_expect.ts'

/** Text for a person: exit as expected, something printed, no JSON document, no escape or control character. */
function expectText(result: CliResult, exit = 0): string {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(exit)
  expect(result.stdout.trim().length).toBeGreaterThan(0)
  expect(result.json, 'not a JSON document').toBeUndefined()
  expect(result.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/)
  return result.stdout
}

/** The column a header starts at, and every row has its cell there too: the table is aligned. */
function expectAligned(text: string, header: string, columns: string[]): string[] {
  const lines = text.split('\n')
  const at = lines.findIndex((line) => line.startsWith(header) || line.trimStart().startsWith(header))
  expect(at, `a table headed ${header}`).toBeGreaterThanOrEqual(0)
  const head = lines[at]!
  const indent = head.length - head.trimStart().length
  const rows = lines
    .slice(at + 1)
    .filter((line, i, all) => line.trim() && all.slice(0, i).every((l) => l.trim()))
    .filter((line) => line.length - line.trimStart().length === indent) // a wrapped line continues its row
  for (const column of columns) {
    const start = head.indexOf(column)
    expect(start, `column ${column}`).toBeGreaterThan(0)
    for (const row of rows) expect(row[start - 1], `a gap before ${column} in "${row}"`).toBe(' ')
  }
  return rows
}

describe('the text layout', () => {
  it('aligns each column to its widest cell and lets the last one run', () => {
    expect(
      table(
        ['ID', 'KIND', 'TEXT'],
        [
          ['1.1', 'bug/major', 'one'],
          ['10.12', 'tests', 'two words'],
        ],
      ),
    ).toBe('ID     KIND       TEXT\n1.1    bug/major  one\n10.12  tests      two words\n')
    expect(table(['A'], [])).toBe('(none)\n')
  })

  const cells: Array<[unknown, string]> = [
    [null, '-'],
    [true, 'yes'],
    [false, 'no'],
    [3, '3'],
    ['two\nlines', 'two lines'],
    ['\x1b[31mred\x1b[0m', 'red'],
    [[], 'none'],
    [['a', 'b'], 'a, b'],
    [{ files: 1, insertions: 2 }, 'files 1, insertions 2'],
  ]
  for (const [value, shown] of cells)
    it(`shows ${JSON.stringify(value)} as "${shown}"`, () => expect(cell(value)).toBe(shown))
})

describe('a view of its own', () => {
  it('still shows what it does not know, below its table: nothing of the result is left out', () => {
    const run = { run_id: '20261130-051500-a1b2c3', phase: 'coding', round: 1, next: 'review', task: 't' }
    const text = documentText('status', { version: 1, runs: [run], unreadable: [], newer: { count: 2, usd: 1.5 } })
    expect(text).toMatch(/^RUN +STARTED/m)
    expect(text).toMatch(/^newer +count 2, usd 1\.5$/m)
    expect(documentText('codes', { codes: [], note: 'new' })).toMatch(/^note +new$/m)
    expect(documentText('codes', { codes: [] })).not.toMatch(/version/)
  })
})

describe('--text on every command of a loop', () => {
  const sb = sandbox({ 'sum.js': 'export const sum = (xs) => xs.reduce((a, b) => a + b, 0)\n' })
  let runId = ''

  it('start: the run as key/value lines', async () => {
    const text = expectText(await sb.cli(['start', '--task', 'Fix sum()', '--budget-usd', '5', '--text']))
    runId = /^run_id +(\S+)$/m.exec(text)![1]!
    expect(sb.state(runId).task).toBe('Fix sum()')
    expect(text).toMatch(/^next +coder-done$/m)
    expect(text).toMatch(/^budget_usd +5$/m)
  })

  it('coder-done: the round and the diff stat', async () => {
    writeChange(sb, 'sum.js', 'export const sum = (xs) => xs.reduce((a, b) => a + b, 0) // fixed\n')
    const text = expectText(await sb.cli(['coder-done', '--summary', 'first pass', '--text']))
    expect(text).toMatch(/^round +1$/m)
    expect(text).toMatch(/^next +review$/m)
  })

  it('review: the verdict, and the findings as a table', async () => {
    const text = expectText(await sb.cli(['review', '--reviewer-cmd', 'builtin:changes', '--text']))
    expect(text).toMatch(/^review +round 1: changes requested, 2 findings$/m)
    const rows = expectAligned(text, 'ID', ['KIND', 'WHERE', 'TEXT'])
    const findings = sb.state(runId).rounds[0]!.reviewer!.findings
    expect(rows.map((row) => row.trim().split(/\s+/)[0])).toEqual(findings.map((f) => f.id))
  })

  it('reply: what was recorded', async () => {
    const text = expectText(
      await sb.cli(['reply', '--finding', '1.1', '--disposition', 'fixed', '--body-file', '-', '--text'], {
        input: 'Fixed the bound.',
      }),
    )
    expect(text).toMatch(/^disposition +fixed$/m)
  })

  it('status: the run, and its open findings as a table', async () => {
    const json = expectOk(await sb.cli(['status']))
    const text = expectText(await sb.cli(['status', '--text']))
    expect(text).toMatch(new RegExp(`^run +${runId}$`, 'm'))
    expect(text).toMatch(new RegExp(`^next +${json.next}$`, 'm'))
    // the stub reviewer reports no cost and no coder transcript was written: nothing was measured, and it says so
    expect(text).toMatch(/^spent +at least \$0\.0000 of \$5\.0000; not measured: coder; reviewer$/m)
    const rows = expectAligned(text, 'ID', ['KIND', 'WHERE', 'TEXT'])
    expect(rows.map((row) => row.trim().split(/\s+/)[0])).toEqual(json.open_findings.map((f: { id: string }) => f.id))
  })

  it('budget-check: the spend by round and role as a table', async () => {
    const json = expectOk(await sb.cli(['budget-check']))
    const text = expectText(await sb.cli(['budget-check', '--text']))
    expect(text).toMatch(/^level +none$/m)
    const rows = expectAligned(text, 'ROUND', ['ROLE', 'USD', 'CALLS', 'MODELS'])
    const labels = rows.map((row) =>
      row
        .split(/\s{2,}/)
        .slice(0, 2)
        .join(' '),
    )
    for (const round of json.rounds)
      for (const role of ['coder', 'reviewer'])
        expect(labels).toContain(`${round.n}${round.in_progress ? ' (now)' : ''} ${role}`)
    expect(labels).toEqual(expect.arrayContaining(['all coder', 'all reviewer']))
  })

  it('findings: every finding with its status as a table', async () => {
    const json = expectOk(await sb.cli(['findings']))
    const text = expectText(await sb.cli(['findings', '--text']))
    const rows = expectAligned(text, 'ID', ['KIND', 'WHERE', 'STATUS', 'TEXT'])
    expect(rows).toHaveLength(json.findings.length)
    expect(rows[0]).toMatch(/^1\.1 .* fixed /)
    expect(rows[1]).toMatch(/^1\.2 .* open /)
  })

  it('status --all: every run as a table', async () => {
    const text = expectText(await sb.cli(['status', '--all', '--text']))
    const rows = expectAligned(text, 'RUN', ['STARTED', 'REPO', 'STATE', 'NEXT', 'OPEN', 'COST', 'PR'])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toContain(runId)
    expect(text).toMatch(/^ {2}Fix sum\(\)$/m) // the task on the line below its run
  })

  it('finish: the outcome', async () => {
    const text = expectText(await sb.cli(['finish', '--verdict', 'ABANDONED', '--text']))
    expect(text).toMatch(/^finished +abandoned after 1 round$/m)
    expect(sb.state(runId).phase).toBe('finished')
  })

  it('codes: the table, aligned, one row a code', async () => {
    const json = expectOk(await sb.cli(['codes']))
    const text = expectText(await sb.cli(['codes', '--text']))
    const rows = expectAligned(text, 'CODE', ['EXIT', 'RETRY', 'MEANING'])
    expect(rows.map((row) => row.split(/\s+/).slice(0, 3))).toEqual(
      json.codes.map((c: { code: string; exit: number; retryable: boolean }) => [
        c.code,
        String(c.exit),
        c.retryable ? 'yes' : 'no',
      ]),
    )
  })

  it('install-skill and trust: key/value lines', async () => {
    const installed = expectText(await sb.cli(['install-skill', '--claude', '--text']))
    expect(installed).toMatch(/^agent +claude$/m)
    expect(installed).toMatch(/^installed$/m) // a list of paths, one a line below its key
    const trust = expectText(await sb.cli(['trust', '--show', '--text']))
    expect(trust).toMatch(/^trusted +no$/m)
  })

  it('a budget at its limit keeps exit 13 in text', async () => {
    const other = sandbox()
    const id = expectOk(await other.cli(['start', '--task', 'x', '--budget-usd', '5'])).run_id
    const text = expectText(await other.cli(['budget-check', '--limit', '0', '--run', id, '--text']), 13)
    expect(text).toMatch(/^level +alert$/m)
  })
})

describe('--text on errors', () => {
  // every command the dispatcher has, whatever its flags: an unknown flag is usage, told in one line
  for (const command of Object.keys(COMMANDS)) {
    it(`${command}: one readable line on stdout, the usual stderr line, exit 2`, async () => {
      const result = await sandbox().cli([command, '--text', '--no-such-flag'])
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('error: usage (exit 2): unknown flag --no-such-flag\n')
      expect(result.stderr).toBe(`pair-loop ${command}: usage: unknown flag --no-such-flag\n`)
    })
  }

  it('keeps the code and exit status of a failure past parsing', async () => {
    const result = await sandbox().cli(['status', '--text'])
    expect(result.code).toBe(8)
    expect(result.stdout).toMatch(/^error: run_not_found \(exit 8\): .+\n$/)
    expect(result.stderr).toMatch(/^pair-loop status: run_not_found: /)
  })

  it('an unknown command with --text is one line too', async () => {
    const result = await sandbox().cli(['stauts', '--text'])
    expect(result.code).toBe(2)
    expect(result.stdout).toMatch(/^error: usage \(exit 2\): unknown command "stauts" \(did you mean "status"\?\)/)
  })
})

describe('--text in a terminal', () => {
  it('prints an error once where stdout and stderr are one screen', () => {
    const sb = sandbox()
    const command = [...CLI_COMMAND, 'status', '--text'].map((part) => `'${part}'`).join(' ')
    const out = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: sb.repo, env: sb.env, encoding: 'utf8' })
    expect(out.status).toBe(8)
    const screen = out.stdout.replace(/\r/g, '')
    expect(screen).toMatch(/^error: run_not_found \(exit 8\): /)
    expect(screen.match(/run_not_found/g)).toHaveLength(1)
  })

  it('prints an unknown command once there too', () => {
    const sb = sandbox()
    const command = [...CLI_COMMAND, 'stauts', '--text'].map((part) => `'${part}'`).join(' ')
    const out = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: sb.repo, env: sb.env, encoding: 'utf8' })
    expect(out.status).toBe(2)
    expect(out.stdout.replace(/\r/g, '').match(/unknown command "stauts"/g)).toHaveLength(1)
  })
})

describe('--text is asked for, never guessed', () => {
  it('prints JSON in a pseudo-terminal (some agents run commands in one)', () => {
    const sb = sandbox()
    const command = [...CLI_COMMAND, 'codes'].map((part) => `'${part}'`).join(' ')
    const out = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: sb.repo, env: sb.env, encoding: 'utf8' })
    expect(out.status, out.stderr).toBe(0)
    const document = JSON.parse(out.stdout.replace(/\r/g, '').trim())
    expect(document.version).toBe(1)
    expect(document.codes.length).toBeGreaterThan(5)
  })
})
