// "Did you mean": the edit distance and the nearest known word, on the typos people make.
import { describe, expect, it } from 'vitest'
import { closest, didYouMean, editDistance } from '../lib/ground/suggest.ts'

describe('editDistance', () => {
  // distances counted by hand: each row names the edits
  const cases: Array<[string, string, number, string]> = [
    ['status', 'status', 0, 'the same word'],
    ['stauts', 'status', 1, 'two neighbours swapped'],
    ['sumary', 'summary', 1, 'a letter left out'],
    ['reviwer', 'reviewer', 1, 'a letter left out'],
    ['statuss', 'status', 1, 'a letter too many'],
    ['statas', 'status', 1, 'a letter replaced'],
    ['', 'abc', 3, 'from nothing'],
    ['kitten', 'sitting', 3, 'two replaced and one added'],
    ['ab', 'cd', 2, 'nothing in common'],
  ]
  for (const [a, b, distance, why] of cases) {
    it(`counts ${distance} from "${a}" to "${b}" (${why}), the same both ways`, () => {
      expect(editDistance(a, b)).toBe(distance)
      expect(editDistance(b, a)).toBe(distance)
    })
  }
})

describe('closest', () => {
  const commands = ['start', 'coder-done', 'review', 'status', 'findings', 'codes']

  it('suggests the known word a typo is near', () => {
    expect(closest('stauts', commands)).toBe('status')
    expect(closest('reviwe', commands)).toBe('review')
    expect(closest('--sumary', ['--summary', '--summary-file'])).toBe('--summary')
    expect(closest('reviwer', ['coder', 'reviewer', 'max_rounds'])).toBe('reviewer')
  })

  it('ignores case and suggests nothing for a word far from all of them', () => {
    expect(closest('STATUS', commands)).toBe('status')
    expect(closest('frobnicate', commands)).toBeUndefined()
    expect(closest('ab', ['cd', 'xy'])).toBeUndefined()
  })

  // compared letter by letter with each command (the 120,000-letter name of test/stdio.test.ts took 3 s of CPU), it
  // took 11.6 s: the bound is a hang's, not a speed measure
  it('suggests nothing for a word of two million letters, and ends at once', { timeout: 5_000 }, () => {
    expect(closest('x'.repeat(2_000_000), commands)).toBeUndefined()
    expect(closest('statusxx', commands)).toBe('status') // two letters longer: still compared
  })

  it('says it as the tail of a message, or not at all', () => {
    expect(didYouMean('status')).toBe(' (did you mean "status"?)')
    expect(didYouMean('--summary', String)).toBe(' (did you mean --summary?)')
    expect(didYouMean(undefined)).toBe('')
  })
})
