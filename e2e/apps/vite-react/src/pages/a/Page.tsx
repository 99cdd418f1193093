import { useMemo, useState } from 'react'
import { formatDay, formatMoney, pluralize } from '../../lib/format'
import './page.css'

type Status = 'paid' | 'shipped' | 'refunded' | 'cancelled'

interface Order {
  id: string
  customer: string
  placed: string
  totalCents: number
  items: number
  status: Status
}

const TITLE = 'Recent orders' // @release2:title

const ORDERS: Order[] = [
  { id: 'A-1042', customer: 'Ada Lovelace', placed: '2026-11-02', totalCents: 12999, items: 3, status: 'paid' },
  { id: 'A-1043', customer: 'Grace Hopper', placed: '2026-11-03', totalCents: 4550, items: 1, status: 'shipped' },
  { id: 'A-1044', customer: 'Alan Turing', placed: '2026-11-03', totalCents: 23900, items: 5, status: 'refunded' },
  { id: 'A-1045', customer: 'Edsger Dijkstra', placed: '2026-11-05', totalCents: 899, items: 1, status: 'cancelled' },
  { id: 'A-1046', customer: 'Barbara Liskov', placed: '2026-11-06', totalCents: 15425, items: 2, status: 'paid' },
  { id: 'A-1047', customer: 'Donald Knuth', placed: '2026-11-08', totalCents: 6400, items: 4, status: 'shipped' },
  { id: 'A-1048', customer: 'Frances Allen', placed: '2026-11-09', totalCents: 31000, items: 6, status: 'paid' },
  { id: 'A-1049', customer: 'Ken Thompson', placed: '2026-11-11', totalCents: 1999, items: 1, status: 'shipped' },
]

type SortKey = 'placed' | 'customer' | 'totalCents'

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'placed', label: 'Placed' },
  { key: 'customer', label: 'Customer' },
  { key: 'totalCents', label: 'Total' },
]

function compare(a: Order, b: Order, key: SortKey): number {
  const x = a[key]
  const y = b[key]
  if (typeof x === 'number' && typeof y === 'number') return x - y
  return String(x).localeCompare(String(y))
}

function matches(order: Order, query: string): boolean {
  if (!query) return true
  const q = query.trim().toLowerCase()
  return order.id.toLowerCase().includes(q) || order.customer.toLowerCase().includes(q)
}

function StatusBadge({ status }: { status: Status }) {
  return <span className={`badge badge-${status}`}>{status}</span>
}

export default function Page() {
  const [query, setQuery] = useState('')
  const [sortKey, setSortKey] = useState<SortKey>('placed')
  const [descending, setDescending] = useState(true)

  const sorted = useMemo(() => {
    const copy = [...ORDERS].sort((a, b) => compare(a, b, sortKey))
    return descending ? copy.reverse() : copy
  }, [sortKey, descending])

  const rows = sorted.filter((o) => matches(o, query)) // @release2:filter
  const revenue = rows.filter((o) => o.status !== 'refunded').reduce((sum, o) => sum + o.totalCents, 0)

  const toggleSort = (key: SortKey) => {
    if (key === sortKey) setDescending(!descending)
    else {
      setSortKey(key)
      setDescending(false)
    }
  }

  return (
    <section className="orders">
      <h2 data-e2e-release>{TITLE}</h2>
      <div className="orders-toolbar">
        <input
          type="search"
          placeholder="Search by order or customer"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <span className="muted">
          {pluralize(rows.length, 'order')} · {formatMoney(revenue)} revenue
        </span>
      </div>
      <table className="orders-table">
        <thead>
          <tr>
            <th>Order</th>
            {COLUMNS.map((c) => (
              <th key={c.key} onClick={() => toggleSort(c.key)} className="sortable">
                {c.label}
                {c.key === sortKey ? (descending ? ' ▼' : ' ▲') : ''}
              </th>
            ))}
            <th>Items</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((o) => (
            <tr key={o.id}>
              <td className="mono">{o.id}</td>
              <td>{formatDay(o.placed)}</td>
              <td>{o.customer}</td>
              <td className="num">{formatMoney(o.totalCents)}</td>
              <td className="num">{o.items}</td>
              <td>
                <StatusBadge status={o.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted">No orders match “{query}”.</p>}
    </section>
  )
}
