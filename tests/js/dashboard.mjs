// The fleet dashboard (tracekit serve --ui) in headless Chromium (playwright-core, /usr/bin/chromium).
// usage: node dashboard.mjs BASE_URL JSON_DIR SHOTS_DIR
// JSON_DIR holds the CLI's answers for the same filters (tests/cli/dashboard.sh writes them):
//   hang.json, cpu.json   stats --db --by app,version --json for hang.duration / cpu.duration
//   top.json              top-hangs --where app=Atlas --limit 50 --json
//   top53.json            top-hangs --where app=Atlas,version=5.3 --json (the injected regression)
//   older.json            top-hangs --where version=V for 5.0, 5.1, 5.2 (what is not new)
//   v5.0.json, v5.2.json  stats --where app=Atlas,version=V --json
//   overview.json, rate.json   stats --overview / --metric hang.rate, --by app,version --json
//   trend.json            stats --metric hang.duration --by day,version --where app=Atlas --json
//   alert.json            tracekit alert --json with the rules the server was given
//   detail.json, folded.txt   top-hangs --where app=Atlas --signature (its first) --detail / --folded
//   report.json           tracekit report --json of the detail's first example
//   filters.json          the device, OS and date ranges the filtered views use; hang_dev.json,
//                         trend_r1.json, dist_r1.json (stats --histogram 20), top_os.json, top_build.json,
//                         range_{a,b}.json, range_top_{a,b}.json, alert52.json, overview_until.json,
//                         rate_until.json, hang_until.json: the CLI with those filters
// Reads the numbers off the pages (what is shown, and the data-v each cell carries) and compares;
// clicks overview → stacks → signature → flame graph → downloads; opens every page with the hostile
// upload in it and checks its text is shown as text, no dialog opens, no element carries an event
// handler, no script but ours exists and no console error is logged. Prints "ok - …" / "not ok - …".
import { chromium } from "playwright-core";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [base, jdir, shots] = process.argv.slice(2);
const lines = (f) => readFileSync(join(jdir, f), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
let failed = 0;
const ok = (name, cond, detail) => {
	if (cond) console.log(`ok - ${name}`);
	else {
		failed++;
		console.log(`not ok - ${name}`);
		if (detail !== undefined) console.log("    " + String(typeof detail === "string" ? detail : JSON.stringify(detail)).slice(0, 600));
	}
};
// the shown text of a number: 3 decimals, as the page rounds it
const shown = (v, unit) => (v === null ? "—" : `${v.toFixed(3)}${unit ? " " + unit : ""}`);

const profile = mkdtempSync(join(tmpdir(), "tk-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
	executablePath: "/usr/bin/chromium",
	headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync"],
});
const page = browser.pages()[0] || (await browser.newPage());
await page.setViewportSize({ width: 1400, height: 900 });
const dialogs = [], consoleErrors = [], pageErrors = [];
page.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); });
page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(`${page.url()}: ${m.text()} ${JSON.stringify(m.location())}`); });
page.on("pageerror", (e) => pageErrors.push(String(e)));

// Nothing of the page may run or carry markup of the store's strings.
async function safe(what) {
	const s = await page.evaluate(() => ({
		scripts: [...document.scripts].map((s) => s.getAttribute("src")),
		handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).map((e) => e.outerHTML.slice(0, 80)),
		bold: document.querySelectorAll("main b, main svg, main img:not(figure img)").length,
	}));
	ok(`${what}: only our script, no event handler attributes, no injected elements`,
		s.scripts.length === 1 && s.scripts[0] === "/static/dashboard.js" && s.handlers.length === 0 && s.bold === 0, s);
}
async function go(path) {
	const resp = await page.goto(base + path, { waitUntil: "load" });
	return resp;
}
const close = (a, b) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));

try {
	// ---- Overview ----
	let resp = await go("/");
	ok("overview: 200 with a CSP of default-src 'self' and no inline script",
		resp.status() === 200 && /default-src 'self'; script-src 'self';/.test(resp.headers()["content-security-policy"] || ""),
		resp.headers());
	const cells = await page.evaluate(() => [...document.querySelectorAll("#overview tbody tr")].map((tr) => {
		const o = { app: tr.dataset.app, version: tr.dataset.version, cls: tr.className, mark: tr.querySelector(".mark").textContent };
		for (const td of tr.querySelectorAll("td[data-k]")) o[td.dataset.k] = { v: td.dataset.v, text: td.textContent };
		return o;
	}));
	const hang = lines("hang.json"), cpu = lines("cpu.json");
	ok("overview: one row per app and version the CLI lists", cells.length === hang.length, { page: cells.length, cli: hang.length });
	let bad = [];
	for (const h of hang) {
		const row = cells.find((c) => c.app === h.app && c.version === h.version);
		if (!row) { bad.push(["missing", h.app, h.version]); continue; }
		if (Number(row.hangs.text) !== h.count) bad.push(["count", h.version, row.hangs.text, h.count]);
		for (const k of ["p50", "p90", "p95", "p99"]) {
			if (!close(Number(row[k].v), h[k])) bad.push([k, h.version, row[k].v, h[k]]);
			if (row[k].text !== shown(h[k], "s")) bad.push([k + " shown", h.version, row[k].text, shown(h[k], "s")]);
		}
		const c = cpu.find((x) => x.app === h.app && x.version === h.version);
		if (c && (Number(row.cpu.text) !== c.count || row.cpu_p95.text !== shown(c.p95, "s"))) bad.push(["cpu", h.version, row.cpu, c]);
	}
	ok("overview: counts and P50/P90/P95/P99 read off the page equal stats --db --json", bad.length === 0, bad);
	const ov = lines("overview.json"), rate = lines("rate.json");
	bad = [];
	for (const o of ov) {
		const row = cells.find((c) => c.app === o.app && c.version === o.version);
		if (!row || Number(row.sessions.text) !== o.sessions) bad.push(["sessions", o, row && row.sessions]);
		const rt = rate.find((x) => x.app === o.app && x.version === o.version);
		if (row && (rt ? !close(Number(row.rate.v), rt.mean) || row.rate.text !== shown(rt.mean, "s/h") : row.rate.text !== "—")) bad.push(["rate", rt, row.rate]);
		if (row && Number(row.crash.text) !== (o.kinds.crash || 0)) bad.push(["crash", o, row.crash]);
	}
	ok("overview: sessions, hang rate and diagnostics equal stats --overview / --metric hang.rate", ov.length === cells.length && bad.length === 0, bad);
	const alerts = lines("alert.json");
	ok("overview: the alert breaches counted as tracekit alert counts them",
		Number(await page.getAttribute("#breach-count", "data-v")) === alerts.length && alerts.length > 0, alerts.length);
	// best and worst of Atlas: lowest and highest P95, from the CLI's numbers
	const atlas = hang.filter((h) => h.app === "Atlas" && h.count >= 10).sort((a, b) => a.p95 - b.p95);
	const best = cells.find((c) => c.cls === "best"), worst = cells.find((c) => c.cls === "worst");
	ok("overview: the best and worst version (P95) are marked",
		best && worst && best.version === atlas[0].version && worst.version === atlas[atlas.length - 1].version &&
		best.mark === "best" && worst.mark === "worst", { best, worst, want: [atlas[0].version, atlas.at(-1).version] });
	const hostileRow = cells.find((c) => c.app !== "Atlas");
	ok("overview: the hostile app and version are shown as text",
		hostileRow && hostileRow.app === "\"><script>alert('app')</script>" && hostileRow.version === "</svg><script>alert('v')</script>",
		hostileRow);
	const visible = await page.textContent("#overview");
	ok("overview: … visibly, as people read them", visible.includes("\"><script>alert('app')</script>") && visible.includes("</svg><script>alert('v')</script>"));
	await safe("overview");

	// filters live in the URL: the form writes them there
	await page.fill("input[name=app]", "Atlas");
	await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
	ok("filters: applying one puts it in the URL and the table follows",
		page.url().includes("app=Atlas") && (await page.$$("#overview tbody tr")).length === hang.filter((h) => h.app === "Atlas").length, page.url());
	await page.screenshot({ path: join(shots, "dashboard-overview.png"), fullPage: true });

	// ---- overview → the stacks of 5.3 (the regression) ----
	await Promise.all([page.waitForNavigation(), page.click('#overview tr[data-version="5.3"] a')]);
	ok("overview → top stacks of a version (URL holds kind, app and version)", /\/stacks\?kind=hang&app=Atlas&version=5\.3/.test(page.url()), page.url());
	const rows = await page.evaluate(() => [...document.querySelectorAll("#stacks tbody tr")].map((tr) => {
		const o = { sig: tr.dataset.signature, mark: tr.querySelector(".mark").textContent, first: tr.querySelector("[data-k=first]").textContent };
		for (const td of tr.querySelectorAll("td.num")) o[td.dataset.k] = { v: td.dataset.v, text: td.textContent };
		return o;
	}));
	const t53 = lines("top53.json"), older = new Set(lines("older.json").map((h) => h.signature));
	bad = [];
	t53.forEach((h, i) => {
		const r = rows[i];
		if (!r || r.sig !== h.signature || Number(r.count.text) !== h.count || Number(r.sessions.text) !== h.sessions ||
			!close(Number(r.p50.v), h.p50) || !close(Number(r.p95.v), h.p95) || r.p95.text !== shown(h.p95, "s")) bad.push([i, r, h]);
	});
	ok("top stacks of 5.3: signatures, counts, sessions, P50/P95 in the CLI's order and values", rows.length === t53.length && bad.length === 0, bad.length ? bad : [rows.length, t53.length]);
	const newOnes = t53.filter((h) => !older.has(h.signature)).map((h) => h.signature);
	const marked = rows.filter((r) => r.mark === "new in 5.3").map((r) => r.sig);
	ok("the regression is marked: exactly the signatures no earlier version had say \"new in 5.3\"",
		newOnes.length > 0 && JSON.stringify(marked.sort()) === JSON.stringify(newOnes.sort()), { marked, newOnes });
	await safe("top stacks");

	// ---- top stacks of Atlas → a signature → its flame graph ----
	await go("/stacks?kind=hang&app=Atlas");
	const top = lines("top.json");
	const first = await page.getAttribute("#stacks tbody tr:first-child", "data-signature");
	ok("top stacks (all versions): the first signature is the CLI's first", first === top[0].signature, [first, top[0].signature]);
	await Promise.all([page.waitForNavigation(), page.click("#stacks tbody tr:first-child a.siglink")]);
	const sum = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#summary td[data-k]")].map((td) => [td.dataset.k, td.dataset.v ?? td.textContent])));
	const det = JSON.parse(readFileSync(join(jdir, "detail.json"), "utf8"));
	ok("signature page: count, sessions, P50/P90/P95/P99, first/last version equal top-hangs --detail --json",
		Number(sum.count) === det.count && Number(sum.sessions) === det.sessions && ["p50", "p90", "p95", "p99"].every((k) => close(Number(sum[k]), det.duration[k])) &&
		sum.first === det.first_version && sum.last === det.last_version && det.count === top[0].count, [sum, det]);
	const tallies = (id) => page.evaluate((id) => Object.fromEntries([...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].dataset.v)])), id);
	ok("signature page: its reports per version and per device equal the CLI's",
		JSON.stringify(await tallies("by-version")) === JSON.stringify(det.versions) && JSON.stringify(await tallies("by-device")) === JSON.stringify(det.devices),
		[await tallies("by-version"), det.versions]);
	await page.waitForFunction(() => [...document.images].every((i) => i.complete));
	const img = await page.evaluate(() => { const i = document.getElementById("sigflame"); return { w: i.naturalWidth, h: i.naturalHeight, src: i.getAttribute("src") }; });
	ok("signature page: its aggregated flame graph is drawn (an SVG image from the server)", img.w > 0 && img.h > 0, img);
	ok("signature page: its duration histogram and box plot are drawn", await page.evaluate(() => document.getElementById("sigstats").naturalWidth > 0));
	await safe("signature");
	await page.screenshot({ path: join(shots, "dashboard-flame.png"), fullPage: false });
	// the flame graph itself: every frame of every merged stack (top-hangs --folded)
	const svg = await (await page.request.get(base + img.src)).text();
	const folded = readFileSync(join(jdir, "folded.txt"), "utf8").split("\n").filter((l) => l);
	const allFrames = [...new Set(folded.flatMap((l) => l.slice(0, l.lastIndexOf(" ")).split(";")))];
	const frames = top[0].signature.split(";");
	ok("the flame graph holds every frame of the signature's merged stacks", allFrames.length >= frames.length && allFrames.every((f) => svg.includes(`>${f}<`) || svg.includes(`>${f} `) || svg.includes(`<title>${f} `)),
		allFrames.filter((f) => !svg.includes(f)));
	// the subtitle names the sample count once (it said "375 samples, 375 samples"), and it is the
	// merged stacks' count (top-hangs --folded)
	const sub = (svg.match(/<text id="subtitle"[^>]*>([^<]*)</) || [])[1] || "";
	const nsamples = folded.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
	ok("the flame graph's subtitle says its sample count once, the merged stacks' count",
		sub.startsWith(`${nsamples} samples, 1 group`) && !/(\d+ samples?), \1/.test(sub), [sub, nsamples]);
	// downloads, made by our writers
	const links = await page.$$eval("a.download", (as) => as.map((a) => a.getAttribute("href")));
	const ss = await (await page.request.get(base + links[0])).json();
	ok("speedscope download: a speedscope file with every frame of the merged stacks",
		ss.$schema === "https://www.speedscope.app/file-format-schema.json" && allFrames.every((f) => ss.shared.frames.some((x) => x.name === f)), ss.shared);
	const gk = await (await page.request.get(base + links[1])).json();
	ok("Firefox Profiler download: a processed profile", gk.meta && Array.isArray(gk.threads) && gk.threads.length > 0, Object.keys(gk));
	// → an example report
	await Promise.all([page.waitForNavigation(), page.click("#examples a.report")]);
	const rep = JSON.parse(readFileSync(join(jdir, "report.json"), "utf8"));
	const meta = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#meta td[data-k]")].map((td) => [td.dataset.k, td.dataset.v ?? td.textContent])));
	ok("report page: its metadata equals tracekit report --json",
		meta.id === rep.id && meta.kind === rep.kind && meta.version === rep.version && meta.device === rep.device && meta.session === rep.session &&
		meta.thread === rep.thread && close(Number(meta.duration), rep.duration) && Number(meta.samples) === rep.samples, [meta, rep]);
	const tree = await page.textContent("#tree");
	const repFrames = [...new Set(rep.folded.split("\n").filter((l) => l).flatMap((l) => l.slice(0, l.lastIndexOf(" ")).split(";")))];
	ok("report page: its call tree names every frame of its stacks", repFrames.length > 0 && repFrames.every((f) => tree.includes(f)), repFrames);
	const rss = await (await page.request.get(base + (await page.getAttribute("a.download", "href")))).json();
	ok("report page: its speedscope download holds its frames", repFrames.every((f) => rss.shared.frames.some((x) => x.name === f)));
	await safe("report");

	// ---- Trends, with the rule's threshold ----
	await go("/trends?metric=hang.duration&stat=p95&bucket=day&app=Atlas");
	const tr = lines("trend.json");
	const tcells = await page.evaluate(() => [...document.querySelectorAll("#trend tbody td[data-version]")].map((td) => ({
		day: td.parentElement.dataset.bucket, version: td.dataset.version, v: td.dataset.v })));
	bad = [];
	for (const g of tr) {
		const c = tcells.find((x) => x.day === g.day && x.version === g.version);
		if (!c || !close(Number(c.v), g.p95)) bad.push([g.day, g.version, c, g.p95]);
	}
	ok("trends: P95 per day and version equal stats --by day,version --json",
		tr.length > 0 && bad.length === 0 && tcells.filter((c) => c.v !== "null").length === tr.length, bad);
	const tsvg = await (await page.request.get(base + (await page.getAttribute("#trendchart", "src")))).text();
	ok("trends: the rule p95(hang.duration) > 2 s is drawn as a threshold", /<g class="threshold">.*p95\(hang\.duration\) &gt; 2 s by version/.test(tsvg) && (tsvg.match(/<g class="series">/g) || []).length === new Set(tr.map((g) => g.version)).size);
	await page.waitForFunction(() => [...document.images].every((i) => i.complete));
	ok("trends: the chart is drawn", await page.evaluate(() => document.getElementById("trendchart").naturalWidth > 0));
	await safe("trends");
	await page.screenshot({ path: join(shots, "dashboard-trend.png"), fullPage: false });
	// the rules page lists tracekit alert's breaches
	await go("/rules");
	const br = await page.$$eval("#breaches tbody tr", (trs) => trs.map((tr) => Number(tr.querySelector("[data-k=value]").dataset.v)));
	ok("rules page: its breaches are tracekit alert's", JSON.stringify(br) === JSON.stringify(alerts.map((a) => a.value)), [br, alerts.map((a) => a.value)]);

	// ---- the hostile upload everywhere ----
	const hv = encodeURIComponent("</svg><script>alert('v')</script>"), ha = encodeURIComponent("\"><script>alert('app')</script>");
	await go(`/stacks?kind=hang&app=${ha}&version=${hv}`);
	const hsig = await page.getAttribute("#stacks tbody tr:first-child", "data-signature");
	ok("hostile: its signature (frame names <img src=x onerror=…>) is listed as text",
		hsig && hsig.includes("<img src=x onerror=alert(7)>") && (await page.textContent("#stacks")).includes("<img src=x onerror=alert(7)>"), hsig);
	ok("hostile: the filters show its app and version as field values", (await page.inputValue("input[name=version]")) === "</svg><script>alert('v')</script>");
	await safe("hostile top stacks");
	await Promise.all([page.waitForNavigation(), page.click("#stacks tbody tr:first-child a.siglink")]);
	await page.waitForFunction(() => { const i = document.getElementById("sigflame"); return i && i.complete; });
	ok("hostile: its flame graph renders", await page.evaluate(() => document.getElementById("sigflame").naturalWidth > 0));
	await safe("hostile signature");
	const hdev = await page.textContent("#by-device");
	ok("hostile: its device is shown as text", hdev.includes("\"onload=\"alert('d')"), hdev);
	// the interactive flame graph, opened by itself: its own script runs (by its hash), names stay text
	await Promise.all([page.waitForNavigation(), page.click("#openflame")]);
	const hresp = await page.request.get(page.url());
	const parsed = await page.evaluate(() => ({
		root: document.documentElement.nodeName,
		scripts: document.querySelectorAll("script").length,
		foreign: document.querySelectorAll("img, foreignObject, iframe").length,
		handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
		text: [...document.querySelectorAll("text, title")].some((e) => e.textContent.includes("<img src=x onerror=alert(7)>")),
	}));
	ok("hostile: the flame graph SVG holds its names as text, no element or handler came from them",
		parsed.root === "svg" && parsed.foreign === 0 && parsed.scripts === 1 && parsed.text, parsed);
	ok("the SVG's CSP lets only its own script run (by hash)",
		/script-src 'sha256-[A-Za-z0-9+\/=]+'/.test(hresp.headers()["content-security-policy"] || ""), hresp.headers());
	const fr = page.locator("g.f").first();
	await fr.locator("rect").hover({ force: true });
	const details = await page.evaluate(() => (document.getElementById("details") || {}).textContent || "");
	ok("… and that script runs: hovering a frame shows its details", details.trim().length > 0, details);
	await page.goBack();
	await go(`/compare?a=5.0&b=${hv}`);
	ok("hostile: compare names its version as text", (await page.textContent("#compare thead")).includes("</svg><script>alert('v')</script>"));
	await safe("hostile compare");
	const apiText = await (await page.request.get(base + "/api/top?limit=100")).text();
	ok("hostile: the API's JSON carries the names intact", apiText.split("\n").filter((l) => l).map((l) => JSON.parse(l)).some((r) => r.signature.includes("<img src=x onerror=alert(7)>")));

	// ---- Compare ----
	await go("/compare?a=5.0&b=5.2&app=Atlas");
	const cmp = await page.evaluate(() => [...document.querySelectorAll("#compare tbody tr")].map((tr) => ({
		m: tr.cells[0].textContent, p: tr.cells[1].textContent, a: tr.querySelector("[data-k=a]").dataset.v, b: tr.querySelector("[data-k=b]").dataset.v, d: tr.cells[4].textContent })));
	const a = lines("v5.0.json")[0], b = lines("v5.2.json")[0];
	bad = [];
	for (const k of ["p50", "p90", "p95", "p99"]) {
		const r = cmp.find((x) => x.m === "hang.duration" && x.p === k.toUpperCase());
		const want = `${((b[k] - a[k]) / a[k] * 100) >= 0 ? "+" : ""}${((b[k] - a[k]) / a[k] * 100).toFixed(1)} %`;
		if (!r || !close(Number(r.a), a[k]) || !close(Number(r.b), b[k]) || r.d !== want) bad.push([k, r, a[k], b[k], want]);
	}
	ok("compare 5.0 and 5.2: percentiles and their change equal the CLI's", bad.length === 0, bad);
	const cs = await page.evaluate(() => [...document.querySelectorAll("#compare-stacks tbody tr")].map((tr) => ({
		sig: [...tr.querySelectorAll(".sig span")].map((x) => x.textContent).join(";"),
		a: Number(tr.querySelector("[data-k=count_a]").dataset.v), b: Number(tr.querySelector("[data-k=count_b]").dataset.v),
		p: tr.querySelector("[data-k=p]").dataset.v })));
	const ta = lines("top5.0.json"), tb = lines("top5.2.json");
	const cnt = (t, sig) => (t.find((h) => h.signature === sig) || { count: 0 }).count;
	ok("compare: the stacks' counts in each version equal top-hangs --where version=…, their p-values are probabilities",
		cs.length > 0 && cs.every((r) => r.a === cnt(ta, r.sig) && r.b === cnt(tb, r.sig) && (r.p === "null" ? !(r.a && r.b) : Number(r.p) >= 0 && Number(r.p) <= 1)), cs);
	await page.waitForFunction(() => [...document.images].every((i) => i.complete));
	ok("compare: the differential flame graph is drawn", await page.evaluate(() => [...document.images].every((i) => i.naturalWidth > 0)));
	await safe("compare");

	// ---- filters on every page, against the CLI with the same filters ----
	const F = JSON.parse(readFileSync(join(jdir, "filters.json"), "utf8"));
	const q = encodeURIComponent;
	const rowsOf = (sel) => page.evaluate((sel) => [...document.querySelectorAll(sel)].map((tr) => {
		const o = { ...tr.dataset };
		for (const td of tr.querySelectorAll("td[data-k]")) o[td.dataset.k] = td.dataset.v ?? td.textContent;
		return o;
	}), sel);
	// overview by device
	await go(`/?device=${q(F.device)}`);
	const hd = lines("hang_dev.json"), od = await rowsOf("#overview tbody tr");
	bad = [];
	for (const h of hd) {
		const r = od.find((x) => x.app === h.app && x.version === h.version);
		if (!r || Number(r.hangs) !== h.count || !close(Number(r.p95), h.p95) || !close(Number(r.p50), h.p50)) bad.push([h, r]);
	}
	ok("overview ?device=: its hang counts and percentiles equal stats --where device=", hd.length > 0 && od.length === hd.length && bad.length === 0, bad.length ? bad : [od.length, hd.length]);
	const keeps = await page.evaluate(() => [...document.querySelectorAll("header nav a, #overview tbody a")].map((a) => a.getAttribute("href")));
	ok("overview ?device=: every link (pages, a version's stacks) keeps the device filter", keeps.length > 0 && keeps.every((h) => h.includes(`device=${encodeURIComponent(F.device)}`) || h.startsWith("/api/")), keeps);
	// the overview up to a date (until alone)
	await go(`/?until=${F.r1u}`);
	const ou = await rowsOf("#overview tbody tr"), ovu = lines("overview_until.json"), rtu = lines("rate_until.json"), hu = lines("hang_until.json");
	bad = [];
	for (const o of ovu) {
		const r = ou.find((x) => x.app === o.app && x.version === o.version);
		const rt = rtu.find((x) => x.app === o.app && x.version === o.version), h = hu.find((x) => x.app === o.app && x.version === o.version);
		if (!r || Number(r.sessions) !== o.sessions || (rt ? !close(Number(r.rate), rt.mean) : r.rate !== "null") || Number(r.hangs) !== (h ? h.count : 0)) bad.push([o, rt, h, r]);
	}
	ok("overview ?until=: sessions, hang rate and hangs equal stats --until (overview, hang.rate, hang.duration)", ovu.length > 0 && ou.length === ovu.length && bad.length === 0, bad);
	// trends over a date range: the trend, the histogram and the box plot
	await go(`/trends?metric=hang.duration&stat=p95&bucket=day&app=Atlas&since=${F.r1s}&until=${F.r1u}`);
	const tr1 = lines("trend_r1.json");
	const tc1 = await page.evaluate(() => [...document.querySelectorAll("#trend tbody td[data-version]")].map((td) => ({ day: td.parentElement.dataset.bucket, version: td.dataset.version, v: td.dataset.v })));
	bad = tr1.filter((g) => { const c = tc1.find((x) => x.day === g.day && x.version === g.version); return !c || !close(Number(c.v), g.p95); });
	ok("trends with since= and until=: P95 per day and version equal stats --since --until",
		tr1.length > 0 && bad.length === 0 && tc1.filter((c) => c.v !== "null").length === tr1.length, bad);
	const dr = lines("dist_r1.json"), dp = await rowsOf("#dist tbody tr");
	bad = [];
	for (const g of dr) {
		const r = dp.find((x) => x.version === g.version);
		if (!r || Number(r.count) !== g.count || ["min", "p5", "p25", "p50", "p75", "p95", "max"].some((k) => !close(Number(r[k]), g[k]))) bad.push([g, r]);
	}
	ok("trends: the box plot's numbers (count, min, P5, P25, P50, P75, P95, max) per version equal stats --histogram --json", dr.length > 0 && dp.length === dr.length && bad.length === 0, bad);
	const hist = await page.evaluate(() => [...document.querySelectorAll("#hist tbody tr")].map((tr) => ({
		from: Number(tr.querySelector("[data-k=from]").dataset.v), to: Number(tr.querySelector("[data-k=to]").dataset.v),
		counts: Object.fromEntries([...tr.querySelectorAll("td[data-version]")].map((td) => [td.dataset.version, Number(td.dataset.v)])) })));
	bad = [];
	hist.forEach((h, i) => {
		if (!close(h.from, dr[0].edges[i]) || !close(h.to, dr[0].edges[i + 1])) bad.push(["edges", i, h]);
		for (const g of dr) if (h.counts[g.version] !== g.counts[i]) bad.push([g.version, i, h.counts[g.version], g.counts[i]]);
	});
	ok("trends: the histogram's bins and counts per version equal stats --histogram 20 --json", hist.length === 20 && bad.length === 0, bad);
	await page.waitForFunction(() => [...document.images].every((i) => i.complete));
	ok("trends: the histogram and box plot are drawn", await page.evaluate(() => document.getElementById("distchart").naturalWidth > 0));
	const dsvg = await (await page.request.get(base + (await page.getAttribute("#distchart", "src")))).text();
	ok("trends: the distribution picture has one box plot per version, says what its whiskers are, and keeps the range",
		(dsvg.match(/<g class="box"/g) || []).length === dr.length && dsvg.includes("whiskers: P5 to P95") &&
		(await page.getAttribute("#distchart", "src")).includes(`until=${F.r1u}`), dsvg.slice(0, 300));
	ok("trends: the filter form shows the range", (await page.inputValue("form.filters input[name=until]")) === F.r1u);
	await safe("trends over a date range");
	await page.locator("#distchart").screenshot({ path: join(shots, "dashboard-dist.png") });
	// top stacks by OS, and by build
	for (const [path, file, what] of [[`/stacks?kind=hang&os=${q(F.os)}`, "top_os.json", "os="], ["/stacks?kind=hang&app=Atlas&build=5.2.102", "top_build.json", "app= and build="]]) {
		await go(path);
		const want = lines(file), got = await rowsOf("#stacks tbody tr");
		bad = want.filter((h, i) => !got[i] || got[i].signature !== h.signature || Number(got[i].count) !== h.count || !close(Number(got[i].p95), h.p95));
		ok(`top stacks with ${what}: signatures, counts and P95 equal top-hangs --where`, want.length > 0 && got.length === want.length && bad.length === 0, bad);
	}
	const slinks = await page.$$eval("#stacks a.siglink", (as) => as.map((a) => a.getAttribute("href")));
	ok("top stacks: a signature's link keeps the filters", slinks.length > 0 && slinks.every((h) => h.includes("build=5.2.102") && h.includes("app=Atlas")), slinks.slice(0, 2));
	// the rules page with a version filter
	await go("/rules?version=5.2");
	const br52 = await page.$$eval("#breaches tbody tr", (trs) => trs.map((tr) => Number(tr.querySelector("[data-k=value]").dataset.v)));
	const al52 = lines("alert52.json");
	ok("rules page ?version=5.2: its breaches are tracekit alert --where version=5.2's", JSON.stringify(br52) === JSON.stringify(al52.map((a) => a.value)), [br52, al52.map((a) => a.value)]);

	// ---- Compare two date ranges ----
	await go(`/compare?a_since=${F.as}&a_until=${F.au}&b_since=${F.bs}&app=Atlas`);
	ok("compare by date range: the URL holds both ranges and the page says so", page.url().includes(`a_until=${F.au}`) && (await page.getAttribute("#sides", "data-mode")) === "range");
	const crows = await page.evaluate(() => [...document.querySelectorAll("#compare tbody tr")].map((tr) => ({
		m: tr.cells[0].textContent, p: tr.cells[1].textContent, a: tr.querySelector("[data-k=a]").dataset.v, b: tr.querySelector("[data-k=b]").dataset.v,
		pv: (tr.querySelector("[data-k=p]") || {}).dataset?.v, d: tr.cells[4].textContent })));
	const ra = lines("range_a.json"), rb = lines("range_b.json");
	bad = [];
	for (const [i, m] of ["hang.duration", "cpu.duration"].entries()) {
		const A = ra[i], B = rb[i];
		const cr = crows.find((x) => x.m === m && x.p === "count");
		if (!cr || Number(cr.a) !== A.count || Number(cr.b) !== B.count || !(Number(cr.pv) >= 0 && Number(cr.pv) <= 1)) bad.push([m, "count", cr, A.count, B.count]);
		for (const k of ["p50", "p90", "p95", "p99"]) {
			const r = crows.find((x) => x.m === m && x.p === k.toUpperCase());
			const ch = (B[k] - A[k]) / A[k] * 100, want = `${ch >= 0 ? "+" : ""}${ch.toFixed(1)} %`;
			if (!r || !close(Number(r.a), A[k]) || !close(Number(r.b), B[k]) || r.d !== want) bad.push([m, k, r, A[k], B[k], want]);
		}
	}
	ok("compare by date range: counts, P50-P99 and their change equal stats --since --until of each range; p a probability", bad.length === 0, bad);
	const rcs = await page.evaluate(() => [...document.querySelectorAll("#compare-stacks tbody tr")].map((tr) => ({
		sig: tr.dataset.signature, a: Number(tr.querySelector("[data-k=count_a]").dataset.v), b: Number(tr.querySelector("[data-k=count_b]").dataset.v), p: tr.querySelector("[data-k=p]").dataset.v })));
	const rta = lines("range_top_a.json"), rtb = lines("range_top_b.json");
	ok("compare by date range: each stack's count in each range equals top-hangs --since --until",
		rcs.length > 0 && rcs.every((r) => r.a === cnt(rta, r.sig) && r.b === cnt(rtb, r.sig) && (r.p === "null" ? !(r.a && r.b) : Number(r.p) >= 0 && Number(r.p) <= 1)), rcs);
	await page.waitForFunction(() => [...document.images].every((i) => i.complete));
	const dsrc = await page.getAttribute("#diffflame", "src");
	const dfl = await (await page.request.get(base + dsrc)).text();
	const rframes = [...new Set(rtb.slice(0, 5).flatMap((h) => h.signature.split(";")))];
	ok("compare by date range: the differential flame graph is drawn from B's stacks (every frame of B's top five signatures, top-hangs --since)",
		dsrc.includes(`a_since=${F.as}`) && dsrc.includes(`b_since=${F.bs}`) && await page.evaluate(() => document.getElementById("diffflame").naturalWidth > 0) &&
		rframes.length > 0 && rframes.every((f) => dfl.includes(f.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"))), rframes.filter((f) => !dfl.includes(f)));
	await safe("compare by date range");
	// a range against itself: nothing differs (every p-value 1, every change 0)
	await go(`/compare?a_since=${F.as}&a_until=${F.au}&b_since=${F.as}&b_until=${F.au}&app=Atlas`);
	const same = await page.$$eval("#compare [data-k=p], #compare-stacks [data-k=p]", (tds) => tds.map((td) => td.dataset.v));
	ok("compare a range with itself: every Mann-Whitney p is 1", same.length > 2 && same.every((v) => Number(v) === 1), same);
	// the link "the last 7 days against the 7 before" and the range form write the URL
	await Promise.all([page.waitForNavigation(), page.click("#last-week")]);
	ok("compare: \"last 7 days against the 7 before\" is a range compare in the URL, filters kept",
		/a_since=14d&a_until=7d&b_since=7d/.test(page.url()) && page.url().includes("app=Atlas") && (await page.getAttribute("#sides", "data-mode")) === "range", page.url());
	await page.fill("#pick-ranges input[name=a_since]", F.as);
	await page.fill("#pick-ranges input[name=a_until]", F.au);
	await page.fill("#pick-ranges input[name=b_since]", F.bs);
	await page.fill("#pick-ranges input[name=b_until]", "");
	await Promise.all([page.waitForNavigation(), page.click("#pick-ranges button")]);
	const again = await page.evaluate(() => Number(document.querySelector("#compare tbody tr [data-k=a]").dataset.v));
	ok("compare: the range form puts the ranges in the URL and the page follows", page.url().includes(`a_since=${F.as}`) && again === ra[0].count, [page.url(), again]);

	ok("no dialog opened on any page", dialogs.length === 0, dialogs);
	ok("no console error and no page error on any page", consoleErrors.length === 0 && pageErrors.length === 0, { consoleErrors, pageErrors });
} catch (e) {
	failed++;
	console.log(`not ok - the browser run finished\n    ${String(e.stack || e).slice(0, 800)}`);
} finally {
	await browser.close();
}
process.exit(failed ? 1 : 0);
