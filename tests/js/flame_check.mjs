// Open a tracekit SVG flame graph in headless Chromium (playwright-core, /usr/bin/chromium) and use it
// the way a person would: search through the Search button's prompt, read the matched percentage,
// take a screenshot (SCREENSHOT.png), click a frame to zoom, reset.
// usage: node flame_check.mjs FILE.svg TERM SCREENSHOT.png [FILE.svg TERM SCREENSHOT.png]...
// (one browser for all: each file in a page of its own)
// Prints one JSON object per file, one a line: frames, matched text and weight, the zoomed frame's width before and after,
// whether other frames were hidden, the screenshot's size and its number of distinct colours.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "tk-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
	executablePath: "/usr/bin/chromium",
	headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync"],
});
try {
	for (let a = 0; a + 2 < args.length; a += 3) {
		const [file, term, shot] = args.slice(a, a + 3);
		const out = {};
		const page = await browser.newPage();
		await page.setViewportSize({ width: 1200, height: 760 });
		const requests = [];
		page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
		const errors = [];
		page.on("pageerror", (e) => errors.push(String(e)));
		await page.goto("file://" + resolve(file));
		out.frames = await page.locator("g.f").count();
		page.once("dialog", (d) => d.accept(term));
		await page.click("#search");
		out.matchedText = await page.textContent("#matched");
		out.matchedWeight = Number(await page.getAttribute("#matched", "data-matched"));
		out.highlighted = await page.locator('g.f rect[fill="#e600e6"]').count();
		// The picture a person sees after searching (the README's docs/flame.png).
		const box = await page.locator("g.sec").first().boundingBox();
		// (fullPage screenshots hang on SVG documents: grow the viewport to the first group instead)
		await page.setViewportSize({ width: 1200, height: Math.min(1400, Math.ceil(box.y + box.height + 4)) });
		await page.screenshot({ path: shot });
		await page.setViewportSize({ width: 1200, height: 760 });
		out.screenshotBytes = statSync(shot).size;
		// Zoom: click the widest non-root frame of the first group that has children.
		const target = await page.evaluate(() => {
			const fs = [...document.querySelector("g.sec").querySelectorAll("g.f")];
			let best = null;
			for (const g of fs.slice(1)) {
				const w = +g.querySelector("rect").getAttribute("width");
				const hasKids = g.nextElementSibling && +g.nextElementSibling.getAttribute("data-d") > +g.getAttribute("data-d");
				if (hasKids && w < +fs[0].querySelector("rect").getAttribute("width") * 0.9 && (!best || w > best.w))
					best = { i: fs.indexOf(g), w, root: +fs[0].querySelector("rect").getAttribute("width") };
			}
			return best;
		});
		if (target) {
			out.zoomBefore = target.w;
			out.rootWidth = target.root;
			const g = page.locator("g.sec").first().locator("g.f").nth(target.i);
			await g.locator("rect").click({ force: true });
			out.zoomAfter = Number(await g.locator("rect").getAttribute("width"));
			out.hiddenAfterZoom = await page.locator("g.f.hide").count();
			out.unzoomVisible = (await page.getAttribute("#unzoom", "class")) === "btn";
			out.zoomShotBytes = (await page.screenshot()).length;
			await page.click("#unzoom");
			out.hiddenAfterReset = await page.locator("g.f.hide").count();
			out.widthAfterReset = Number(await g.locator("rect").getAttribute("width"));
			out.tooltip = await g.locator("title").textContent();
		}
		const png = await page.screenshot();
		// The same search from the URL (?s=TERM), as a shared link would carry it.
		await page.goto("file://" + resolve(file) + "?s=" + encodeURIComponent(term));
		out.urlMatchedWeight = Number(await page.getAttribute("#matched", "data-matched"));
		out.requests = requests;
		out.errors = errors;
		// Distinct colours in a full screenshot, decoded by the browser itself.
		out.colours = await page.evaluate(async (b64) => {
			const img = new Image();
			img.src = "data:image/png;base64," + b64;
			await img.decode();
			const c = new OffscreenCanvas(img.width, img.height);
			const ctx = c.getContext("2d");
			ctx.drawImage(img, 0, 0);
			const d = ctx.getImageData(0, 0, c.width, c.height).data, seen = new Set();
			for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
			return seen.size;
		}, png.toString("base64")).catch((e) => "error: " + e);
		await page.close();
		console.log(JSON.stringify(out));
	}
} finally {
	await browser.close();
	rmSync(profile, { recursive: true, force: true });
}
