// Where a report goes (`$PAIR_LOOP_HOME/reports/<run_id>.html` or `all.html` unless --out says) and writing it whole.
import { join, resolve } from 'node:path'
import { fail } from '../ground/errors.ts'
import { writeFileAtomic } from '../ground/fsutil.ts'
import { checkOutputFile } from '../ground/file-flags.ts'

export const reportsDir = (home: string) => join(home, 'reports')

/** `--out` against the command's directory (checked: a file, outside the home), else the default file for the run (or `all`). */
export function reportPath(options: { out?: string; cwd: string; home: string; name: string }): string {
  return options.out !== undefined
    ? checkOutputFile(resolve(options.cwd, options.out), '--out', options.home)
    : join(reportsDir(options.home), `${options.name}.html`)
}

/** Written through a temp file and a rename, readable by the person (0644); a refused write is `io_error`. */
export function writeReport(path: string, page: string): void {
  try {
    writeFileAtomic(path, page, 0o644)
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code
    if (typeof errno !== 'string') throw error
    fail('io_error', `cannot write the report to ${path} (${(error as Error).message}); choose another --out`, {
      path,
      errno,
    })
  }
}
