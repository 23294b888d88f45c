// `pair-loop mcp` as a real process, driven by the MCP SDK's own client over stdio: what a coder's CLI does.
import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach } from 'vitest'
import { CLI_COMMAND } from './_helpers.ts'

export interface McpCall {
  isError: boolean
  text: string
  json: any
}

const open: Client[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()))
})

/** A client connected to `pair-loop mcp` started with `env` (closed after the test); `name` is the client's name. */
export async function mcpClient(env: NodeJS.ProcessEnv, name = 'pair-loop-test') {
  const [command, ...args] = CLI_COMMAND
  const transport = new StdioClientTransport({
    command: command!,
    args: [...args, 'mcp'],
    env: env as Record<string, string>,
    stderr: 'ignore',
  })
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(transport)
  open.push(client)
  const call = async (tool: string, args: Record<string, unknown>): Promise<McpCall> => {
    const result = await client.callTool({ name: tool, arguments: args })
    const text = (result.content as { type: string; text: string }[]).map((part) => part.text).join('')
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {}
    return { isError: result.isError === true, text, json }
  }
  return { client, call }
}

/** The home config of a test person: `reviewerCmd` (a stub) as the reviewer. */
export function writeHomeConfig(home: string, reviewerCmd: string[], extra: Record<string, unknown> = {}): void {
  mkdirSync(home, { recursive: true })
  writeFileSync(join(home, 'config.json'), JSON.stringify({ pair_loop: { reviewer_cmd: reviewerCmd, ...extra } }))
}
