// Render SVG files in headless Chromium (playwright-core) and report what the browser drew:
// node render_svg.mjs OUT.json FILE.svg… [--png DIR]. For each file: parse errors, the root <svg>'s
// rendered size, and how many rect/line/circle/polyline/text elements have a non-empty box.
import { chromium } from 'playwright-core';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const out = args.shift();
let pngDir = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--png') pngDir = args[++i];
  else files.push(args[i]);
}
// A fresh profile directory each run (launchPersistentContext is how playwright takes one).
const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'tk-chromium-')), {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const results = {};
try {
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1000, height: 1200 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  for (const f of files) {
    errors.length = 0;
    await page.goto(pathToFileURL(f).href);
    const r = await page.evaluate(() => {
      const root = document.documentElement;
      const parseError = document.getElementsByTagName('parsererror').length > 0;
      const box = root.getBoundingClientRect ? root.getBoundingClientRect() : { width: 0, height: 0 };
      const drawn = {};
      for (const tag of ['rect', 'line', 'circle', 'polyline', 'text', 'path']) {
        drawn[tag] = [...document.getElementsByTagName(tag)].filter((e) => {
          const b = e.getBBox ? e.getBBox() : { width: 0, height: 0 };
          return b.width > 0 || b.height > 0;
        }).length;
      }
      const texts = [...document.getElementsByTagName('text')].map((t) => t.textContent);
      return { root: root.nodeName, parseError, width: box.width, height: box.height, drawn, texts };
    });
    r.errors = [...errors];
    if (pngDir) await page.screenshot({ path: join(pngDir, basename(f) + '.png'), fullPage: false, timeout: 60000 });
    results[f] = r;
  }
} finally {
  await browser.close();
}
writeFileSync(out, JSON.stringify(results, null, 1));
