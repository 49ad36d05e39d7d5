// What a person sees of a tracekit SVG flame graph in headless Chromium (playwright-core,
// /usr/bin/chromium): the layout the browser computed, not the file's numbers.
// usage: node flame_layout.mjs FILE.svg TERM ZOOM_NAME SCREENSHOT.png
// Searches TERM (through the Search button's prompt), hovers the frame with the longest hover text,
// then zooms into the first frame named ZOOM_NAME. Prints one JSON object:
//   width            the document's width
//   sections         per group: its data-w and the rendered width of its root frame
//   hover            the hovered frame's title, the details line as drawn, its box's right edge, and
//                    the left edge of the "Matched:" text's box
//   matchedText      "Matched: …" before the zoom, with data-matched / data-base
//   zoomed           the same after the zoom, and the zoomed frame's data-w
//   errors           page errors
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [file, term, zoomName, shot] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "tk-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
	executablePath: "/usr/bin/chromium",
	headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync"],
});
const out = {};
try {
	const page = browser.pages()[0] || (await browser.newPage());
	await page.setViewportSize({ width: 1200, height: 900 });
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	await page.goto("file://" + resolve(file));
	out.width = await page.evaluate(() => +document.documentElement.getAttribute("width"));
	out.sections = await page.evaluate(() => [...document.querySelectorAll("g.sec")].map((s) => ({
		w: +s.getAttribute("data-w"),
		rootWidth: s.querySelector("g.f rect").getBoundingClientRect().width,
	})));
	page.once("dialog", (d) => d.accept(term));
	await page.click("#search");
	const matched = async () => ({
		text: await page.textContent("#matched"),
		weight: Number(await page.getAttribute("#matched", "data-matched")),
		base: Number(await page.getAttribute("#matched", "data-base")),
	});
	out.matched = await matched();
	// Hover the frame whose hover text is longest (in the first group, where frames are widest).
	const idx = await page.evaluate(() => {
		const gs = [...document.querySelectorAll("g.f")];
		let best = 0;
		gs.forEach((g, i) => {
			if (g.querySelector("title").textContent.length > gs[best].querySelector("title").textContent.length) best = i;
		});
		return best;
	});
	const g = page.locator("g.f").nth(idx);
	await g.locator("rect").hover({ force: true });
	out.hover = await page.evaluate((i) => {
		const d = document.getElementById("details"), m = document.getElementById("matched");
		return {
			title: document.querySelectorAll("g.f")[i].querySelector("title").textContent,
			details: d.textContent,
			detailsRight: d.getBoundingClientRect().right,
			matchedLeft: m.getBoundingClientRect().left,
			matchedRight: m.getBoundingClientRect().right,
		};
	}, idx);
	await page.screenshot({ path: shot });
	const z = page.locator("g.f", { has: page.locator(`title`, { hasText: zoomName + "\n" }) }).first();
	out.zoomWeight = Number(await z.getAttribute("data-w"));
	await z.locator("rect").click({ force: true });
	out.zoomed = await matched();
	out.zoomWidth = await z.locator("rect").evaluate((r) => r.getBoundingClientRect().width);
	await page.click("#unzoom");
	out.unzoomed = await matched();
	out.errors = errors;
} finally {
	await browser.close();
	rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
