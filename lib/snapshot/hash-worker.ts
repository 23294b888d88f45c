// A hashing thread of a first snapshot (hashing.ts): it looks at the paths it is sent as the main thread would
// (look.ts: lstat, read, hash, store) and answers with what it found, in the order asked.
import { parentPort } from 'node:worker_threads'
import type { LookBatch, PackedAnswer } from './hashing.ts'
import { FolderFiles } from './folder-files.ts'
import { look } from './look.ts'

parentPort?.on('message', ({ root, store, startNs, from, paths }: LookBatch) => {
  const folders = new FolderFiles() // read fresh for each batch
  const answers: PackedAnswer[] = paths.map(({ path, base }) => {
    try {
      return look(path, `${root}/${path}`, base, store, startNs, folders)
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
  answers.forEach((answer, k) => {
    if (answer.type !== 'blob') return
    if (answer.oid === paths[k]!.base) answer.oid = '' // the id it was asked about: the receiving thread has it
    if (!answer.entry) return
    answer.entryAt = at
    answer.entryLength = answer.entry.length
    at += answer.entry.length
    answer.entry = null
  })
  parentPort?.postMessage({ from, answers, entries: packed }, [packed])
})
