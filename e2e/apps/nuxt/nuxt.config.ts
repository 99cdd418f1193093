// `nuxt generate` prerenders / and /about/ into .output/public (the deployable folder).
// vite is held at 8.3.8 in package.json (overrides): nuxt 4.6.4 peers rolldown ~1.2, and
// vite 8.4's rolldown 1.3 fails its server build (INVALID_EXTERNAL_ID on unctx).
export default defineNuxtConfig({
  compatibilityDate: '2026-11-01',
  css: ['~/assets/main.css'],
  telemetry: false,
  devtools: { enabled: false },
  app: {
    head: {
      htmlAttrs: { lang: 'en' },
      link: [{ rel: 'icon', href: 'data:,' }],
    },
  },
})
