// Claude Code transcripts: find a session's files, read their usage lines, de-duplicate globally as ccusage 20 does.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { scanFile, type LineParser, type ScanResult } from './cache.ts'
import { claudeConfigDir, claudeProjectDir } from './locate.ts'
import { UNKNOWN_MODEL, claudeCost, type PriceBook, type Tokens } from './pricing.ts'

// Entry layout (numbers): timestamp ms, flags, model index (-1 none), input, output, 5m writes, 1h writes, reads.
// Strings: message.id, requestId.
const F_SIDECHAIN = 1
const F_SPEED = 2
const F_MSG_ID = 4
const F_REQ_ID = 8
const WIDTH = 8

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0
const optionalCount = (n: unknown) => n === undefined || isCount(n)
const optionalText = (s: unknown) => s === undefined || (typeof s === 'string' && s.length > 0)

/** Parses assistant lines with usage. Line validity follows what ccusage 20.0.24 accepts, so totals agree. */
export const claudeParser: LineParser<null> = {
  kind: 'claude',
  version: 1,
  width: WIDTH,
  strings: 2,
  patterns: ['"usage"'],
  init: () => null,
  parse(line, _state, sink) {
    let o: any
    try {
      o = JSON.parse(line)
    } catch {
      return sink.skip('not valid JSON')
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return sink.skip('not a JSON object')
    if (o.type !== 'assistant') return
    const m = o.message
    if (m === null || typeof m !== 'object' || m.usage === undefined) return
    const u = m.usage
    if (u === null || typeof u !== 'object') return sink.skip('assistant line of the wrong shape: message.usage is not an object')
    if (m.model === '<synthetic>') return // a locally generated error message: no API call, no cost
    const why = shapeProblem(o, m, u)
    if (why) return sink.skip(`assistant line of the wrong shape: ${why}`)
    const split = u.cache_creation !== undefined && u.cache_creation !== null
    const flags = (o.isSidechain === true ? F_SIDECHAIN : 0) | (u.speed !== undefined ? F_SPEED : 0) |
      (m.id !== undefined ? F_MSG_ID : 0) | (o.requestId !== undefined ? F_REQ_ID : 0)
    const model = m.model === undefined ? -1 : sink.model(u.speed === 'fast' ? `${m.model}-fast` : m.model)
    sink.entry([
      Date.parse(o.timestamp), flags, model,
      u.input_tokens, u.output_tokens,
      // with the split object present only its two fields count (ccusage 20.0.24); without it, all writes are 5m
      split ? (u.cache_creation.ephemeral_5m_input_tokens ?? 0) : (u.cache_creation_input_tokens ?? 0),
      split ? (u.cache_creation.ephemeral_1h_input_tokens ?? 0) : 0,
      u.cache_read_input_tokens ?? 0,
    ], [m.id ?? '', o.requestId ?? ''])
  },
}

function shapeProblem(o: any, m: any, u: any): string | null {
  if (!isCount(u.input_tokens)) return 'usage.input_tokens'
  if (!isCount(u.output_tokens)) return 'usage.output_tokens'
  if (!optionalCount(u.cache_creation_input_tokens)) return 'usage.cache_creation_input_tokens'
  if (!optionalCount(u.cache_read_input_tokens)) return 'usage.cache_read_input_tokens'
  if (u.cache_creation !== undefined && u.cache_creation !== null) {
    const c = u.cache_creation
    if (typeof c !== 'object' || !optionalCount(c.ephemeral_5m_input_tokens) || !optionalCount(c.ephemeral_1h_input_tokens)) return 'usage.cache_creation'
  }
  if (u.speed !== undefined && u.speed !== 'standard' && u.speed !== 'fast') return 'usage.speed'
  if (typeof o.timestamp !== 'string' || !ISO_WITH_ZONE.test(o.timestamp) || Number.isNaN(Date.parse(o.timestamp))) return 'timestamp'
  if (o.version !== undefined && (typeof o.version !== 'string' || !SEMVER.test(o.version))) return 'version'
  if (o.isSidechain !== undefined && typeof o.isSidechain !== 'boolean') return 'isSidechain'
  if (!optionalText(m.id)) return 'message.id'
  if (!optionalText(o.requestId)) return 'requestId'
  if (!optionalText(m.model)) return 'message.model'
  if (!optionalText(o.sessionId)) return 'sessionId'
  return null
}

/** The files of one session: the main transcript (in any project folder) and its subagents' transcripts. */
export interface SessionFiles { session: string; main: string | null; subagents: string[]; looked_in: string }

export function claudeSessionFiles(sessionId: string, options: { repo?: string; env?: NodeJS.ProcessEnv } = {}): SessionFiles {
  const env = options.env ?? process.env
  const name = `${sessionId}.jsonl`
  const roots = claudeProjectRoots(env)
  let main: string | null = null
  if (options.repo) {
    const here = join(claudeProjectDir(options.repo, env), name)
    if (existsSync(here)) main = here
  }
  for (const root of roots) {
    if (main) break
    let folders: string[]
    try { folders = readdirSync(root) } catch { continue }
    for (const folder of folders.sort()) {
      const candidate = join(root, folder, name)
      if (existsSync(candidate)) { main = candidate; break }
    }
  }
  const subagents: string[] = []
  if (main) walkJsonl(join(main.slice(0, -'.jsonl'.length)), 3, subagents)
  return { session: sessionId, main, subagents: subagents.sort(), looked_in: roots.join(', ') }
}

/** `<config>/projects`, and the legacy `$XDG_CONFIG_HOME/claude/projects` some mid-2025 releases used. */
export function claudeProjectRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const roots = [join(claudeConfigDir(env), 'projects')]
  if (!env.CLAUDE_CONFIG_DIR && env.HOME) roots.push(join(env.XDG_CONFIG_HOME || join(env.HOME, '.config'), 'claude', 'projects'))
  return roots
}

function walkJsonl(dir: string, depth: number, into: string[]): void {
  let entries: import('node:fs').Dirent[]
  try { entries = readdirSync(dir, { withFileTypes: true }) } catch { return }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory() && depth > 0) walkJsonl(path, depth - 1, into)
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) into.push(path)
  }
}

export function scanClaude(path: string, cacheDir: string | null): ScanResult {
  return scanFile(path, claudeParser, cacheDir)
}

/** One kept (de-duplicated) API response. */
export interface UsageItem {
  ts: number
  model: string
  tokens: Tokens
  usd: number
  priced: boolean
}

interface Kept {
  ts: number
  flags: number
  model: string
  tokens: Tokens
  total: number
  usd: number
  priced: boolean
  msg: string
  key: string
  removed: boolean
}

/**
 * ccusage 20.0.24's de-duplication (as its `daily` report applies it), global across `scans` (in order). Lines
 * without message.id are never de-duplicated. Same (message.id, requestId): one response; a copy off the sidechain
 * beats one on it, otherwise the larger token total wins, on a tie the one with `usage.speed`, then the costlier,
 * then the first seen. Same message.id with another requestId, either copy on a sidechain: a sidechain replay of the
 * same response, where again the copy off the sidechain wins (and of two sidechain copies, the larger).
 * (ccusage's `session` report merges such replays only when their timestamps are equal: a known disagreement.)
 */
export function dedupeClaude(scans: ScanResult[], prices: PriceBook): UsageItem[] {
  const kept: Kept[] = []
  const byKey = new Map<string, Kept>()
  const byMsg = new Map<string, Kept[]>()
  for (const scan of scans) {
    const n = scan.numbers
    for (let i = 0; i < scan.count; i++) {
      const at = i * WIDTH
      const flags = n[at + 1]!
      const modelIndex = n[at + 2]!
      const model = modelIndex < 0 ? UNKNOWN_MODEL : scan.models[modelIndex]!
      const tokens: Tokens = { input: n[at + 3]!, output: n[at + 4]!, cache_write_5m: n[at + 5]!, cache_write_1h: n[at + 6]!, cache_read: n[at + 7]! }
      const rates = modelIndex < 0 ? null : prices.rates(model)
      const e: Kept = {
        ts: n[at]!, flags, model, tokens,
        total: tokens.input + tokens.output + tokens.cache_write_5m + tokens.cache_write_1h + tokens.cache_read,
        usd: rates ? claudeCost(tokens, rates) : 0,
        priced: rates !== null,
        msg: scan.strings[i * 2]!,
        key: '',
        removed: false,
      }
      if (!(flags & F_MSG_ID)) { kept.push(e); continue }
      e.key = `${e.msg}\u0000${flags & F_REQ_ID ? scan.strings[i * 2 + 1] : '\u0001'}`
      const side = (flags & F_SIDECHAIN) !== 0
      const exact = byKey.get(e.key)
      if (exact) {
        // the same response again (another content block, a partial early copy, a resumed session's copy)
        const exactSide = (exact.flags & F_SIDECHAIN) !== 0
        if (side !== exactSide ? !side : better(e, exact)) replace(exact, e)
        continue
      }
      // a sidechain replay: same message.id, another requestId, either copy on a sidechain
      const same = byMsg.get(e.msg) ?? []
      const twins = side ? same : same.filter((k) => (k.flags & F_SIDECHAIN) !== 0)
      if (twins.length === 0) add(e)
      else if (side) {
        if (twins.every((k) => (k.flags & F_SIDECHAIN) !== 0) && better(e, twins[0]!)) replace(twins[0]!, e)
      } else {
        for (const k of twins) drop(k)
        add(e)
      }
    }
  }
  return kept.filter((k) => !k.removed).map(({ ts, model, tokens, usd, priced }) => ({ ts, model, tokens, usd, priced }))

  function add(e: Kept) {
    kept.push(e)
    byKey.set(e.key, e)
    const list = byMsg.get(e.msg)
    if (list) list.push(e)
    else byMsg.set(e.msg, [e])
  }
  function drop(k: Kept) {
    k.removed = true
    if (byKey.get(k.key) === k) byKey.delete(k.key)
    const list = byMsg.get(k.msg)!
    list.splice(list.indexOf(k), 1)
  }
  function replace(k: Kept, e: Kept) {
    if (byKey.get(k.key) === k) byKey.delete(k.key)
    Object.assign(k, { ts: e.ts, flags: e.flags, model: e.model, tokens: e.tokens, total: e.total, usd: e.usd, priced: e.priced, key: e.key })
    byKey.set(k.key, k)
  }
}

function better(e: Kept, k: Kept): boolean {
  if (e.total !== k.total) return e.total > k.total
  const es = (e.flags & F_SPEED) !== 0
  const ks = (k.flags & F_SPEED) !== 0
  if (es !== ks) return es
  return e.usd > k.usd
}
