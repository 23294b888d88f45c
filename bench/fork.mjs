#!/usr/bin/env node
// What one process start costs a node process that holds N MB of memory (issue 19: the test workers hold 36–122 MB
// mid-run): node starts a child with a plain fork, which copies the parent's page tables. Each size runs in a fresh
// node (its own child), `git --version` started --spawns times in series; the parent's CPU and the wall per start.
//
//   node bench/fork.mjs [--spawns 150] [--json]
//
// Sizes: 0, 50, 100, 200 and 400 MB, held as filled typed arrays (every page touched, as a worker's heap is).
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { option } from './_util.mjs'

const SIZES_MB = [0, 50, 100, 200, 400]

if (process.argv[2] === '--child') {
  const [mb, spawns] = [Number(process.argv[3]), Number(process.argv[4])]
  const held = Array.from({ length: mb }, (_, i) => new Float64Array(131_072).fill(i)) // 1 MB each
  const start = () =>
    new Promise((resolve) => {
      const child = spawn('git', ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] })
      child.stdout.resume()
      child.on('close', resolve)
    })
  await start()
  const [cpu, wall] = [process.cpuUsage(), performance.now()]
  for (let i = 0; i < spawns; i++) await start()
  const used = process.cpuUsage(cpu)
  const perStart = (ms) => Number((ms / spawns).toFixed(2))
  console.log(
    JSON.stringify({
      mb,
      held: held.length, // read after the loop: the memory stays held (and touched) until the starts are counted
      parent_cpu_ms: perStart((used.user + used.system) / 1000),
      wall_ms: perStart(performance.now() - wall),
    }),
  )
} else {
  const spawns = option('spawns', 150)
  const rows = SIZES_MB.map((mb) => {
    const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(mb), String(spawns)], {
      encoding: 'utf8',
    })
    if (out.status !== 0) throw new Error(`the ${mb} MB run failed: ${out.stderr}`)
    return JSON.parse(out.stdout)
  })
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows))
  else
    for (const row of rows)
      console.log(
        `${String(row.mb).padStart(4)} MB held: ${row.parent_cpu_ms} ms of the parent's CPU, ${row.wall_ms} ms wall per start`,
      )
}
