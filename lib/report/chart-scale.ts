// A value axis for the report's charts: a round top, evenly spaced ticks, and labels with as few decimals as they need.

export interface Scale {
  top: number
  ticks: number[]
  label: (value: number) => string
}

/** An axis from 0 that holds `max` in about four steps of 1, 2, 2.5 or 5 times a power of ten. */
export function dollarScale(max: number, steps = 4): Scale {
  const wanted = max > 0 && Number.isFinite(max) ? max : 1
  const raw = wanted / steps
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const norm = raw / magnitude
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * magnitude
  const count = Math.max(1, Math.ceil(wanted / step - 1e-9))
  const ticks = Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)))
  const decimals = Math.max(...ticks.map((tick) => (String(tick).split('.')[1] ?? '').length))
  const fixed = Math.min(6, Math.max(decimals, step < 1 ? 2 : 0))
  return { top: ticks.at(-1)!, ticks, label: (value) => `$${value.toFixed(fixed)}` }
}
