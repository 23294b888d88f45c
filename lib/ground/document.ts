// What a command's use-case gives back: its document, a document with a non-zero exit, or another tool's format.
export type Document = Record<string, unknown>

/** A success document with a non-zero exit (budget-check at its limit still prints its normal document). */
export interface Outcome {
  document: Document
  exit: number
}

export function withExit(document: Document, exit: number): Outcome {
  return { document, exit }
}

/** Output in another tool's format (SARIF, rdjsonl), printed as it is instead of pair-loop's JSON document. */
export interface RawOutput {
  raw: string
}

export function rawOutput(text: string): RawOutput {
  return { raw: text.endsWith('\n') ? text : `${text}\n` }
}
