import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

// Served under /app/: index.html refers to /app/assets/...; the files sit in dist/assets/.
export default defineConfig({
  base: '/app/',
  plugins: [react()],
  build: { assetsInlineLimit: 0 },
})
