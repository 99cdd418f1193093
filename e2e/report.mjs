// Opens a `precompress report` page in headless Chromium and keeps a
// screenshot of it: node e2e/report.mjs PAGE.html SHOT.png
// Prints JSON: every request the page made (the page's own included),
// console errors and page errors, and each chart's drawn size.
import { pathToFileURL } from 'node:url';
import { launch } from './launch.mjs';

const [file, shot] = process.argv.slice(2);
if (!file || !shot) {
  console.error('usage: node e2e/report.mjs PAGE.html SHOT.png');
  process.exit(2);
}
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const requests = [];
  const errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load' });
  const charts = await page.$$eval('svg.chart', (all) => all.map((s) => {
    const b = s.getBoundingClientRect();
    return { width: Math.round(b.width), height: Math.round(b.height), bars: s.querySelectorAll('rect').length };
  }));
  const main = await page.$eval('#main svg', (s) => s.getAttribute('aria-label'));
  await page.screenshot({ path: shot, fullPage: true });
  console.log(JSON.stringify({ url, requests, errors, charts, main }));
} finally {
  await browser.close();
}
