import { StrictMode, Suspense, lazy, useEffect, useState } from 'react'
import { createRoot } from 'react-dom/client'
import './style.css'

// Both lazy modules are named Page.tsx, so the build emits two assets/Page-<hash>.js.
const OrdersPage = lazy(() => import('./pages/a/Page'))
const SettingsPage = lazy(() => import('./pages/b/Page'))

type Tab = 'orders' | 'settings' | null

function tabFromHash(): Tab {
  if (location.hash === '#orders') return 'orders'
  if (location.hash === '#settings') return 'settings'
  return null
}

function Nav({ tab, onSelect }: { tab: Tab; onSelect: (t: Tab) => void }) {
  return (
    <nav className="nav">
      <button
        type="button"
        data-e2e-click="orders"
        className={tab === 'orders' ? 'btn btn-active' : 'btn'}
        onClick={() => onSelect('orders')}
      >
        Orders
      </button>
      <button
        type="button"
        data-e2e-click="settings"
        className={tab === 'settings' ? 'btn btn-active' : 'btn'}
        onClick={() => onSelect('settings')}
      >
        Settings
      </button>
    </nav>
  )
}

function App() {
  const [tab, setTab] = useState<Tab>(tabFromHash)

  useEffect(() => {
    const onHash = () => setTab(tabFromHash())
    window.addEventListener('hashchange', onHash)
    document.documentElement.dataset.ready = 'true'
    return () => window.removeEventListener('hashchange', onHash)
  }, [])

  const select = (t: Tab) => {
    history.replaceState(null, '', t ? `#${t}` : location.pathname)
    setTab(t)
  }

  return (
    <div className="shell">
      <header className="header">
        <h1>Orders dashboard</h1>
        <Nav tab={tab} onSelect={select} />
      </header>
      <main className="content">
        <Suspense fallback={<p className="muted">Loading…</p>}>
          {tab === 'orders' && <OrdersPage />}
          {tab === 'settings' && <SettingsPage />}
          {tab === null && <p className="muted">Pick a section above.</p>}
        </Suspense>
      </main>
      <footer className="footer">precompress end-to-end fixture</footer>
    </div>
  )
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
