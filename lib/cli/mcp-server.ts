// `pair-loop mcp`: the loop's steps as tools of a stdio MCP server (the official SDK speaks the protocol). The person's
// CLI config starts it, outside the coder's sandbox, so it is the writer of $PAIR_LOOP_HOME for a sandboxed coder. A
// call runs the command of the tool's name in this process, as the CLI would (same flags' checks, same use-case, same
// document); its arguments are read by lib/mcp/args.ts, which lets through only what asks. The server's environment and
// PAIR_LOOP_HOME are the ones the person's config gave it; the call's only place is its `cwd`, a git repository.
import { VENDORS, type Vendor } from '../run/vendors.ts'
import { Readable, Writable } from 'node:stream'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { type ScriptLoader, runScript, textInput } from './cli.ts'
import type { Context } from '../ground/context.ts'
import { ERROR_CODES, PairLoopError, errorDocument, toPairLoopError } from '../ground/errors.ts'
import { topLevel } from '../ground/git.ts'
import { commandLine, inputSchema } from '../mcp/args.ts'
import { SERVER_NAME, TOOLS } from '../mcp/tools.ts'

/** What a tool call answers: the command's one JSON document as text, an error document flagged as a tool error. */
export interface ToolAnswer {
  content: { type: 'text'; text: string }[]
  isError: boolean
  /** The command's exit status (the CLI's), for the server's log and tests. */
  exit: number
}

export interface ServeOptions {
  /** The server's Context: its environment and home are every call's. */
  ctx: Context
  /** The pair-loop commands by name (scripts/commands.ts): a tool runs the one of its name. */
  commands: Readonly<Record<string, ScriptLoader>>
  version: string
}

/** The MCP server, its tools listed and answered; not yet connected. */
export function mcpServer({ ctx, commands, version }: ServeOptions): Server {
  const server = new Server({ name: SERVER_NAME, version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: inputSchema(tool),
    })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params
    const coder = coderOf(server.getClientVersion()?.name)
    const calls = inFlight.get(server) ?? new Set()
    inFlight.set(server, calls)
    const call = callTool(ctx, commands, name, args, coder)
    calls.add(call)
    const answer = await call.finally(() => calls.delete(call))
    ctx.io.stderr(`pair-loop mcp: ${name} → exit ${answer.exit}\n`)
    return { content: answer.content, isError: answer.isError }
  })
  return server
}

/** Serve on the Context's stdin/stdout until stdin ends (the client went) or `signal` aborts; calls under way finish. */
export async function serveStdio(options: ServeOptions, signal?: AbortSignal): Promise<void> {
  const { io } = options.ctx
  const server = mcpServer(options)
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve
  })
  const input = Readable.from(io.stdin)
  const output = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      io.stdout(chunk.toString())
      done()
    },
  })
  const stop = () => void server.close()
  // the last answers are written before the server closes (a client may send its calls and close stdin at once)
  input.once(
    'end',
    () =>
      void answered(server)
        .then(() => new Promise(setImmediate))
        .then(stop),
  )
  signal?.addEventListener('abort', stop, { once: true })
  await server.connect(new StdioServerTransport(input, output))
  await closed
  signal?.removeEventListener('abort', stop)
}

const inFlight = new WeakMap<Server, Set<Promise<unknown>>>()

/** Resolves once every tool call the server took has been answered. */
async function answered(server: Server): Promise<void> {
  const calls = inFlight.get(server)
  while (calls?.size) await Promise.allSettled([...calls])
}

/** The coder's CLI, as the client said who it is in the handshake (the coder's own arguments never say it). */
export function coderOf(client: string | undefined): Vendor | undefined {
  if (!client) return undefined
  return VENDORS.find((vendor) => client.toLowerCase().includes(vendor))
}

/** One tool call: its command run in this process with the call's repository as its directory. */
export async function callTool(
  ctx: Context,
  commands: Readonly<Record<string, ScriptLoader>>,
  name: string,
  args: Record<string, unknown> | undefined,
  coder?: Vendor,
): Promise<ToolAnswer> {
  const tool = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined
  let line: ReturnType<typeof commandLine>
  try {
    if (!tool || !load)
      throw new PairLoopError('usage', `unknown tool ${JSON.stringify(name)}; one of: ${Object.keys(TOOLS).join(', ')}`)
    line = commandLine(name, tool, args)
    await topLevel(line.cwd) // a git repository, or git_error before the command runs
  } catch (caught) {
    const error = toPairLoopError(caught)
    return answer(`${JSON.stringify(errorDocument(error))}\n`, ERROR_CODES[error.code].exit)
  }
  const argv = name === 'start' && coder ? [...line.argv, `--coder=${coder}`] : line.argv
  let stdout = ''
  const call: Context = {
    ...ctx,
    cwd: line.cwd,
    io: {
      stdin: textInput(line.stdin),
      stdout: (text) => {
        stdout += text
      },
      stderr: ctx.io.stderr,
    },
  }
  const exit = await runScript((await load()).default, argv, call)
  return answer(stdout, exit)
}

const answer = (text: string, exit: number): ToolAnswer => ({
  content: [{ type: 'text', text: text.trimEnd() }],
  isError: exit !== 0,
  exit,
})
