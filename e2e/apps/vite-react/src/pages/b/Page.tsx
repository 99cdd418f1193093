import { useState, type FormEvent } from 'react'
import { clamp, pluralize } from '../../lib/format'

interface Settings {
  storeName: string
  email: string
  lowStockThreshold: number
  notifyOnRefund: boolean
  currency: 'EUR' | 'USD' | 'GBP'
}

const DEFAULTS: Settings = {
  storeName: 'Example Store', // @release3:store
  email: 'orders@example.com',
  lowStockThreshold: 5,
  notifyOnRefund: true,
  currency: 'EUR',
}

type Errors = Partial<Record<keyof Settings, string>>

function validate(s: Settings): Errors {
  const errors: Errors = {}
  if (s.storeName.trim().length < 2) errors.storeName = 'Store name needs at least 2 characters.'
  if (!/^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i.test(s.email)) errors.email = 'Enter a valid e-mail address.'
  if (s.lowStockThreshold < 0 || s.lowStockThreshold > 1000) errors.lowStockThreshold = 'Use a number from 0 to 1000.' // @release3:validate
  return errors
}

function Field({ label, error, children }: { label: string; error?: string; children: React.ReactNode }) {
  return (
    <label className={error ? 'field field-error' : 'field'}>
      <span className="field-label">{label}</span>
      {children}
      {error && <span className="field-message">{error}</span>}
    </label>
  )
}

export default function Page() {
  const [settings, setSettings] = useState<Settings>(DEFAULTS)
  const [saved, setSaved] = useState<Settings | null>(null)
  const errors = validate(settings)
  const problems = Object.keys(errors).length
  const dirty = JSON.stringify(settings) !== JSON.stringify(saved ?? DEFAULTS)

  const update = <K extends keyof Settings>(key: K, value: Settings[K]) =>
    setSettings((s) => ({ ...s, [key]: value }))

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (problems === 0) setSaved(settings)
  }

  return (
    <section className="settings">
      <h2>Store settings</h2>
      <form onSubmit={submit} noValidate>
        <Field label="Store name" error={errors.storeName}>
          <input value={settings.storeName} onChange={(e) => update('storeName', e.target.value)} />
        </Field>
        <Field label="Notification e-mail" error={errors.email}>
          <input type="email" value={settings.email} onChange={(e) => update('email', e.target.value)} />
        </Field>
        <Field label="Low-stock threshold" error={errors.lowStockThreshold}>
          <input
            type="number"
            value={settings.lowStockThreshold}
            onChange={(e) => update('lowStockThreshold', clamp(Number(e.target.value) || 0, -1, 1001))}
          />
        </Field>
        <Field label="Currency">
          <select value={settings.currency} onChange={(e) => update('currency', e.target.value as Settings['currency'])}>
            <option value="EUR">Euro</option>
            <option value="USD">US dollar</option>
            <option value="GBP">Pound sterling</option>
          </select>
        </Field>
        <label className="check">
          <input
            type="checkbox"
            checked={settings.notifyOnRefund}
            onChange={(e) => update('notifyOnRefund', e.target.checked)}
          />
          E-mail me when an order is refunded
        </label>
        <div className="actions">
          <button type="submit" className="btn" disabled={problems > 0 || !dirty}>
            Save
          </button>
          <span className="muted">
            {problems > 0 ? pluralize(problems, 'problem') : dirty ? 'Unsaved changes' : 'All changes saved'}
          </span>
        </div>
      </form>
    </section>
  )
}
