// tracekit flame graph: click to zoom, search, details. No network, no libraries.
// Frames are <g class="f" data-d=DEPTH data-w=WEIGHT> in depth-first pre-order inside one
// <g class="sec"> per group: a frame's subtree is the run of following frames that are deeper.
// Groups share one scale (the heaviest is data-gw wide); a zoomed frame fills data-gw.
(function () {
	"use strict";
	var NS = "http://www.w3.org/2000/svg";
	var svg, secs = [], total = 0, unit = "", cw = 7.2, gw = 0, allName = "all", details, matchedEl, unzoomBtn, searchBtn;
	var zoomed = null, term = null;

	function label(f, w) {
		var n = Math.floor((w - 6) / cw);
		if (n < 3) return "";
		return f.name.length <= n ? f.name : f.name.slice(0, n - 2) + "..";
	}

	function place(f, x, w) {
		f.r.setAttribute("x", x.toFixed(2));
		f.r.setAttribute("width", w.toFixed(2));
		var s = label(f, w);
		if (!f.t && s) {
			f.t = document.createElementNS(NS, "text");
			f.t.setAttribute("y", (f.y + 11.5).toFixed(1));
			f.g.appendChild(f.t);
		}
		if (f.t) {
			f.t.setAttribute("x", (x + 3).toFixed(2));
			f.t.textContent = s;
		}
	}

	function init() {
		svg = document.documentElement;
		total = +svg.getAttribute("data-total");
		unit = svg.getAttribute("data-unit") || "";
		cw = +svg.getAttribute("data-cw") || 7.2;
		allName = svg.getAttribute("data-all") || "all";
		details = document.getElementById("details");
		matchedEl = document.getElementById("matched");
		unzoomBtn = document.getElementById("unzoom");
		searchBtn = document.getElementById("search");
		var ss = document.querySelectorAll("g.sec");
		for (var i = 0; i < ss.length; i++) {
			var sec = { frames: [], total: +ss[i].getAttribute("data-w") };
			var gs = ss[i].querySelectorAll("g.f");
			for (var j = 0; j < gs.length; j++) {
				var g = gs[j], r = g.querySelector("rect");
				var info = g.querySelector("title").textContent;
				var f = {
					g: g, r: r, t: g.querySelector("text"), sec: sec, i: j,
					x: +r.getAttribute("x"), w: +r.getAttribute("width"), y: +r.getAttribute("y"),
					d: +g.getAttribute("data-d"), wt: +g.getAttribute("data-w"),
					name: info.split("\n")[0], info: info.replace(/\n/g, "  |  "), fill: r.getAttribute("fill")
				};
				g.tkf = f;
				sec.frames.push(f);
			}
			if (sec.frames.length) {
				sec.x0 = sec.frames[0].x;
				sec.w0 = sec.frames[0].w;
			}
			gw = Math.max(gw, sec.w0 || 0);
			secs.push(sec);
		}
		svg.addEventListener("click", onclick);
		svg.addEventListener("mouseover", function (e) {
			var f = frameOf(e.target);
			if (f) showDetails(f.info);
		});
		svg.addEventListener("mouseout", function (e) {
			if (frameOf(e.target)) showDetails(" ");
		});
		window.addEventListener("keydown", function (e) {
			if ((e.ctrlKey || e.metaKey) && e.key === "f") {
				e.preventDefault();
				askSearch();
			} else if (e.key === "Escape") {
				search(null);
			}
		});
		gw = +svg.getAttribute("data-gw") || gw;
		var m = /[?&]s=([^&]*)/.exec(window.location.search);
		if (m) search(decodeURIComponent(m[1]));
	}

	// The details line, cut with ".." to end before the "Matched:" text (or the graph's right edge);
	// the whole text stays in the frame's tooltip.
	function showDetails(text) {
		details.textContent = text;
		var right = +matchedEl.getAttribute("x"), m = matchedEl.getComputedTextLength();
		var room = (m > 1 ? right - m - 3 * cw : right) - +details.getAttribute("x");
		var len = details.getComputedTextLength();
		if (len <= room) return;
		var n = Math.max(0, Math.floor(text.length * room / len) - 2);
		for (;;) {
			details.textContent = text.slice(0, n) + "..";
			if (n === 0 || details.getComputedTextLength() <= room) return;
			n = Math.max(0, n - Math.max(1, Math.ceil((details.getComputedTextLength() - room) / cw)));
		}
	}

	function frameOf(el) {
		while (el && el !== svg) {
			if (el.tkf) return el.tkf;
			el = el.parentNode;
		}
		return null;
	}

	function onclick(e) {
		if (e.target === unzoomBtn) return unzoom();
		if (e.target === searchBtn) return term === null ? askSearch() : search(null);
		var f = frameOf(e.target);
		if (f) zoom(f);
	}

	// Zoom one group to frame f: its subtree fills the graph's width, its ancestors are shown across it
	// (dimmed), everything else in that group is hidden. Other groups keep their view. A search's
	// matched share is then of f.
	function zoom(f) {
		var sec = f.sec, fr = sec.frames, k, scale = gw / f.w;
		if (f.i === 0) return unzoom();
		for (k = 0; k < fr.length; k++) fr[k].g.setAttribute("class", "f hide");
		var d = f.d;
		for (k = f.i - 1; k >= 0 && d > 0; k--) {
			if (fr[k].d < d) {
				d = fr[k].d;
				fr[k].g.setAttribute("class", "f");
				fr[k].g.setAttribute("opacity", "0.6");
				place(fr[k], sec.x0, gw);
			}
		}
		for (k = f.i; k < fr.length && (k === f.i || fr[k].d > f.d); k++) {
			fr[k].g.setAttribute("class", "f");
			fr[k].g.removeAttribute("opacity");
			place(fr[k], sec.x0 + (fr[k].x - f.x) * scale, fr[k].w * scale);
		}
		zoomed = f;
		unzoomBtn.setAttribute("class", "btn");
		if (term !== null) search(term);
	}

	function unzoom() {
		for (var i = 0; i < secs.length; i++) {
			var fr = secs[i].frames;
			for (var k = 0; k < fr.length; k++) {
				fr[k].g.setAttribute("class", "f");
				fr[k].g.removeAttribute("opacity");
				place(fr[k], fr[k].x, fr[k].w);
			}
		}
		zoomed = null;
		unzoomBtn.setAttribute("class", "btn hide");
		if (term !== null) search(term);
	}

	function askSearch() {
		var s = window.prompt("Search frames (regular expression):", term || "");
		if (s !== null) search(s);
	}

	// Highlight frames whose name matches; the matched share counts each sample once: a match
	// inside a matched frame's subtree is already part of that frame's weight. The share is of the
	// whole file ("of all threads"), or, while a frame is zoomed, of that frame: the matches in its
	// subtree, or all of it when it or a caller of it matches (FlameGraph's rescaled "Matched").
	function search(s) {
		var re = null;
		if (s !== null && s !== "") {
			try {
				re = new RegExp(s);
			} catch (err) {
				re = new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
			}
		}
		var matched = 0, inZoom = 0, z = zoomed;
		for (var i = 0; i < secs.length; i++) {
			var fr = secs[i].frames, open = -1, zd = -1;
			for (var k = 0; k < fr.length; k++) {
				var f = fr[k];
				if (open >= 0 && f.d <= open) open = -1;
				if (z && f.sec === z.sec && k === z.i) zd = z.d;
				else if (zd >= 0 && f.d <= zd) zd = -1;
				var hit = re !== null && k > 0 && re.test(f.name);
				f.r.setAttribute("fill", hit ? "#e600e6" : f.fill);
				if (hit && open < 0) {
					matched += f.wt;
					open = f.d;
					if (zd >= 0) inZoom += f.wt;
				}
				// a match above the zoomed frame (it or a caller of it) covers all of it
				if (z && f.sec === z.sec && k === z.i && open >= 0) inZoom = z.wt;
			}
		}
		term = re ? s : null;
		searchBtn.textContent = re ? "Reset Search" : "Search";
		var num = z ? Math.min(inZoom, z.wt) : matched, base = z ? z.wt : total;
		var of = z ? (z.name.length > 40 ? z.name.slice(0, 38) + ".." : z.name) : allName;
		matchedEl.textContent = re ? "Matched: " + (base ? (100 * num / base).toFixed(2) : "0.00") + "% of " + of : " ";
		matchedEl.setAttribute("data-matched", re ? String(num) : "");
		matchedEl.setAttribute("data-base", re ? String(base) : "");
		return matched;
	}

	window.tkFlame = { search: search, zoom: function (g) { zoom(g.tkf); }, unzoom: unzoom };
	if (document.readyState === "loading") window.addEventListener("load", init);
	else init();
})();
