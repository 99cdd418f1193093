// Shared by both lazy pages (the build may split it into its own chunk).
const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' })
const day = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: '2-digit', timeZone: 'UTC' })

export function formatMoney(cents: number): string {
  return money.format(cents / 100)
}

export function formatDay(iso: string): string {
  return day.format(new Date(iso))
}

export function pluralize(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n))
}
