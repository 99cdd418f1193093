// `nuxt generate` prerenders / and /about/ into .output/public (the deployable folder).
// unstorage is pinned to 1.17.5 in package.json: 1.17.6 breaks prerendering on nuxt 4.4.5.
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
