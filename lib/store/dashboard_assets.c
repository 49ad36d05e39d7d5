/* The dashboard's stylesheet and script, served as /static/dashboard.css and /static/dashboard.js
 * (files of their own, so the pages need no inline style or script under their CSP). */

const char tk_dashboard_css[] =
    ":root{--fg:#1d2330;--muted:#667085;--line:#e4e7ec;--bg:#f6f7f9;--accent:#2f6fdb;--good:#127a3e;--bad:#b42318}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);background:var(--bg)}\n"
    "header{display:flex;align-items:center;gap:24px;padding:10px 24px;background:#1d2330;color:#fff}\n"
    "header .brand{font-weight:700;letter-spacing:.02em}\n"
    "header nav a{color:#c9d3e6;text-decoration:none;margin-right:16px;padding:4px 0}\n"
    "header nav a.on{color:#fff;border-bottom:2px solid #fff}\n"
    "form.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:end;padding:10px 24px;background:#fff;border-bottom:1px solid var(--line)}\n"
    "form.filters label,form.pick label{display:flex;flex-direction:column;font-size:12px;color:var(--muted)}\n"
    "form input,form select{font:inherit;padding:4px 6px;border:1px solid var(--line);border-radius:4px;min-width:110px}\n"
    "form button{font:inherit;padding:5px 14px;border:0;border-radius:4px;background:var(--accent);color:#fff;cursor:pointer}\n"
    "form a.clear{color:var(--muted);font-size:12px;align-self:center}\n"
    "form.pick{display:flex;gap:12px;align-items:end;margin:8px 0 16px}\n"
    "main{padding:8px 24px 32px;max-width:1400px}\n"
    "h1{font-size:20px;margin:14px 0 6px}h2{font-size:16px;margin:22px 0 8px}\n"
    "p.lead{color:var(--muted);margin:0 0 14px;max-width:900px}\n"
    "p.note{color:var(--muted);font-size:12px}p.empty{padding:24px;background:#fff;border:1px dashed var(--line)}\n"
    "table{border-collapse:collapse;background:#fff;border:1px solid var(--line);margin-bottom:12px}\n"
    "th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}\n"
    "th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc;cursor:pointer;user-select:none}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr.best td{background:#ecfdf3}tr.worst td{background:#fef3f2}\n"
    ".tag{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap}\n"
    ".tag.good{background:#d1fadf;color:var(--good)}.tag.bad{background:#fee4e2;color:var(--bad)}\n"
    ".sig{display:flex;flex-direction:column;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}\n"
    ".sig .leaf{font-weight:700}.sig .fr{color:var(--muted)}\n"
    "a.siglink{text-decoration:none;color:inherit}a.siglink:hover .leaf{color:var(--accent);text-decoration:underline}\n"
    "p.tabs a{margin-right:8px;padding:3px 10px;border-radius:12px;background:#fff;border:1px solid var(--line);text-decoration:none;color:var(--fg)}\n"
    "p.tabs a.on{background:var(--accent);color:#fff;border-color:var(--accent)}\n"
    "figure.flame{margin:0 0 16px;background:#fff;border:1px solid var(--line);padding:8px}\n"
    "figure.flame img{width:100%;height:auto;display:block}\n"
    "figcaption{color:var(--muted);font-size:12px;margin-top:4px}\n"
    "td.worse{color:var(--bad)}td.better{color:var(--good)}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}\n"
    "footer{padding:16px 24px;color:var(--muted);font-size:12px}\n";

/* Sort a table by a clicked column (numbers by data-v); filters apply when a field changes. */
const char tk_dashboard_js[] =
    "'use strict';\n"
    "document.querySelectorAll('table th').forEach(function (th, col) {\n"
    "  th.addEventListener('click', function () {\n"
    "    var table = th.closest('table'), body = table.tBodies[0], idx = th.cellIndex;\n"
    "    var dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';\n"
    "    th.dataset.dir = dir;\n"
    "    var rows = Array.prototype.slice.call(body.rows);\n"
    "    rows.sort(function (a, b) {\n"
    "      var x = a.cells[idx], y = b.cells[idx];\n"
    "      var vx = x && x.dataset.v !== undefined ? parseFloat(x.dataset.v) : NaN;\n"
    "      var vy = y && y.dataset.v !== undefined ? parseFloat(y.dataset.v) : NaN;\n"
    "      var c = !isNaN(vx) && !isNaN(vy) ? vx - vy : (x ? x.textContent : '').localeCompare(y ? y.textContent : '');\n"
    "      return dir === 'asc' ? c : -c;\n"
    "    });\n"
    "    rows.forEach(function (r) { body.appendChild(r); });\n"
    "  });\n"
    "});\n"
    "document.querySelectorAll('form.pick select').forEach(function (s) {\n"
    "  s.addEventListener('change', function () { s.form.submit(); });\n"
    "});\n";

/* The tab's icon: three flame-graph bars. */
const char tk_dashboard_icon[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect x=\"1\" y=\"11\" width=\"14\" height=\"4\" "
    "fill=\"#e8590c\"/><rect x=\"1\" y=\"6\" width=\"9\" height=\"4\" fill=\"#f59f00\"/><rect x=\"2\" y=\"1\" "
    "width=\"5\" height=\"4\" fill=\"#fcc419\"/></svg>\n";
