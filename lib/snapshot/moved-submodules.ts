// A submodule the change moved (`git mv vendor/lib third/lib`): its new path has no gitlink at base, but the base
// recorded it at its old path. It is shown against that recorded commit, file by file, as git names a submodule by
// the name .gitmodules gives it wherever its path goes; one added under a name the base did not have is wholly new.
import type { Leaf, Manifest } from './manifest.ts'
import { eachStoredBlob, hasObject, type ObjectStore, storeGit } from './store.ts'
import { readVerified, type RepoGit } from './verified.ts'

/** Where a submodule at a new path was at base, and the commit the base records there. */
export interface MovedFrom {
  path: string
  leaf: Leaf
}

/**
 * For each of `paths` (repositories checked out where the base has no gitlink) that .gitmodules names as a submodule
 * the base had at another path with a gitlink there: that path and its gitlink.
 */
export async function movedSubmodules(
  paths: string[],
  base: Manifest,
  now: Manifest,
  git: RepoGit,
  store: ObjectStore,
): Promise<Map<string, MovedFrom>> {
  const moved = new Map<string, MovedFrom>()
  const [baseFile, nowFile] = [base.get('.gitmodules'), now.get('.gitmodules')]
  if (paths.length === 0 || !baseFile || !nowFile) return moved
  const texts = await blobTexts([baseFile.oid, nowFile.oid], git, store)
  const basePaths = await parsed(store, texts.get(baseFile.oid) ?? '') // name → path at base
  const nowNames = new Map([...(await parsed(store, texts.get(nowFile.oid) ?? ''))].map(([name, path]) => [path, name]))
  for (const path of paths) {
    const name = nowNames.get(path)
    const old = name === undefined ? undefined : basePaths.get(name)
    const leaf = old === undefined || old === path ? undefined : base.get(old)
    if (old !== undefined && leaf?.mode === '160000') moved.set(path, { path: old, leaf })
  }
  return moved
}

/** `.gitmodules` text read by git itself (`git config --file -`, on the store: no config or include of the user's). */
async function parsed(store: ObjectStore, text: string): Promise<Map<string, string>> {
  const pairs = new Map<string, string>() // name → path
  if (!text) return pairs
  const chunks: Buffer[] = []
  const args = ['config', '--file', '-', '--null', '--get-regexp', '^submodule\\..*\\.path$']
  const result = await storeGit(store, args, (chunk) => chunks.push(chunk) > 0, 30_000, text).catch(() => null)
  if (!result) return pairs // not a config git can read: nothing is taken as moved
  for (const record of Buffer.concat(chunks).toString('utf8').split('\0')) {
    const eol = record.indexOf('\n')
    const key = record.slice(0, eol)
    if (eol < 0 || !key.startsWith('submodule.') || !key.endsWith('.path')) continue
    pairs.set(key.slice('submodule.'.length, -'.path'.length), record.slice(eol + 1))
  }
  return pairs
}

/** Blobs' text: from pair-loop's store (a changed file's bytes are there), else the repository's, verified. */
async function blobTexts(oids: string[], git: RepoGit, store: ObjectStore): Promise<Map<string, string>> {
  const texts = new Map<string, string>()
  const stored = oids.filter((oid) => hasObject(store, oid))
  await eachStoredBlob(store, stored, (oid, content) => texts.set(oid, content.toString('utf8')))
  const rest = oids.filter((oid) => !texts.has(oid))
  for (const [oid, object] of await readVerified(git, rest, 'the .gitmodules file'))
    texts.set(oid, object.content.toString('utf8'))
  return texts
}
