// Open files in speedscope's own web app (npm speedscope's dist/release, from file://, offline) in
// headless Chromium, the way its CLI does (#localProfilePath= a script that calls
// speedscope.loadFileFromBase64), and report what the app shows: the document title, the toolbar
// text (profile name and "i/N" of the thread selector) and any error text.
// usage: node speedscope_open.mjs FILE...   One JSON line per file.
import { chromium } from "playwright-core";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const app = join(dirname(require.resolve("speedscope/package.json")), "dist/release/index.html");
const dir = mkdtempSync(join(tmpdir(), "tk-speedscope-"));
const browser = await chromium.launchPersistentContext(join(dir, "profile"), {
	executablePath: "/usr/bin/chromium",
	headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--allow-file-access-from-files"],
});
try {
	for (const file of process.argv.slice(2)) {
		const js = join(dir, basename(file) + ".js");
		writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(basename(file))}, ${JSON.stringify(readFileSync(file).toString("base64"))})`);
		const page = await browser.newPage();
		const errors = [], requests = [];
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url()); });
		await page.goto("file://" + app + "#localProfilePath=" + encodeURIComponent(js));
		await page.waitForFunction(() => document.title.includes(" - speedscope") || document.body.innerText.includes("wrong"), null, { timeout: 20000 }).catch(() => {});
		await page.waitForTimeout(300);
		const text = await page.evaluate(() => document.body.innerText);
		console.log(JSON.stringify({ file, title: await page.title(), text: text.slice(0, 400), errors, requests }));
		await page.close();
	}
} finally {
	await browser.close();
	rmSync(dir, { recursive: true, force: true });
}
