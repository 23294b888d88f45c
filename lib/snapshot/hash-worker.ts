// A hashing thread of a first snapshot (hashing.ts): it looks at the paths it is sent as the main thread would
// (look.ts: lstat, read, hash, store) and answers with what it found, in the order asked.
import { parentPort } from 'node:worker_threads'
import type { LookAnswer, LookBatch } from './hashing.ts'
import { FolderFiles } from './folder-files.ts'
import { look } from './look.ts'

parentPort?.on('message', ({ store, startNs, from, paths }: LookBatch) => {
  const folders = new FolderFiles() // read fresh for each batch
  const answers: LookAnswer[] = paths.map(({ path, full, base }) => {
    try {
      return look(path, full, base, store, startNs, folders)
    } catch (error) {
      return { type: 'failed', message: error instanceof Error ? error.message : String(error) } // looked at again there
    }
  })
  // the index entries as one transferred buffer: thousands of small ones cost the receiving thread more to collect
  const entries = Buffer.concat(
    answers.flatMap((answer) => (answer.type === 'blob' && answer.entry ? [answer.entry] : [])),
  )
  const packed = new ArrayBuffer(entries.length)
  new Uint8Array(packed).set(entries)
  let at = 0
  for (const answer of answers)
    if (answer.type === 'blob' && answer.entry) {
      const length = answer.entry.length
      answer.entry = null
      Object.assign(answer, { entryAt: at, entryLength: length })
      at += length
    }
  parentPort?.postMessage({ from, answers, entries: packed }, [packed])
})
