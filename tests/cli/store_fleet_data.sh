#!/bin/bash
# What the fleet dashboard reads from the store, on both backends (SQLite file, a real
# clickhouse-server), against independent truth: each report's stacks equal its record's own
# `tracekit collapse` (frames named image+offset by a script over the session's images.json), a
# signature's merged stacks equal the sum over its reports, top-hangs' first/last version equal the
# generator's truth, percentiles per UTC day and version equal an exact type 7 oracle over the
# records, the overview's sessions and kinds equal a count of the generated sessions, and both
# backends answer byte for byte the same. Also: a store from before stacks were kept migrates.
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
G="$TMP/gen"
"$STOREGEN" "$G" 6 4 7 --cpu 1 || { notok "storegen"; exit 1; }

# ---- the oracle: per event of each session, its folded stacks as collapse writes them (one thread
# per record, named "… tid=N" with N the record's position), addresses → IMAGE+0xOFFSET ----
for s in "$G"/s*; do "$TK" collapse "$s" 2>/dev/null >"$s.folded"; done
cat >"$TMP/oracle.py" <<'PY'
import json, os, re, sys, glob, datetime
from fractions import Fraction as F
G = sys.argv[1]; out = sys.argv[2]
stacks = {}   # (session key, record key) -> folded text
rows = []     # (session, version, device, kind, time, duration, record key)
def fmt(x):
    for p in (15, 16, 17):
        s = '%.*g' % (p, x)
        if float(s) == x or p == 17: return s
for d in sorted(glob.glob(G + '/s*/')):
    meta = json.load(open(d + 'meta.json'))
    imgs = [(int(i['base'], 16), int(i['loads'][0]['memsz'], 16), os.path.basename(i['path']))
            for i in json.load(open(d + 'images.json'))['images']]
    def name(f):
        if not f.startswith('0x'): return f
        a = int(f, 16)
        for base, size, n in imgs:
            if base <= a < base + size: return '%s+0x%x' % (n, a - base)
        return f
    keys = []  # record keys in event order
    for line in open(d + 'records'):
        kind, key, val = line.rstrip('\n').split(',', 2)
        if kind == 'hang':
            v = json.loads(val); t = v['start']; dur = v['duration_ms'] / 1000
        elif kind == 'cpu-highload':
            v = json.loads(val); t = float(v['start']) + 978307200.0; dur = float(v['lasting'])
        else:
            continue
        keys.append(key)
        rows.append((meta['session'], meta['version'], meta['device'], kind, t, dur, key))
    per = {}
    for line in open(d.rstrip('/') + '.folded'):
        stack, w = line.rstrip('\n').rsplit(' ', 1)
        frames = stack.split(';')
        n = int(re.search(r' tid=(\d+)$', frames[0]).group(1))
        per.setdefault(n, {})
        k = tuple(name(f) for f in frames[1:])
        per[n][k] = per[n].get(k, 0) + int(w)
    for n, lines in per.items():
        stacks[(meta['session'], keys[n - 1])] = ''.join(
            '%s %d\n' % (';'.join(k) if k else '(no stack)', w) for k, w in sorted(lines.items()))
json.dump({'%s\t%s' % k: v for k, v in stacks.items()}, open(out + '.stacks.json', 'w'), sort_keys=True)
# hang.duration per (UTC day, version), exact type 7 (as store_backends.sh's oracle)
def summ(v):
    v = sorted(v); n = len(v)
    def q(num, den):
        j, d = divmod((n - 1) * num, den)
        if j + 1 >= n: return v[-1]
        return float(F(v[j]) + F(d, den) * (F(v[j + 1]) - F(v[j])))
    mean = float(sum(F(x) for x in v) / n)
    return '"count": %d, "mean": %s, "min": %s, "p50": %s, "p90": %s, "p95": %s, "p99": %s, "p99.9": %s, "max": %s' % (
        n, fmt(mean), fmt(v[0]), fmt(q(50, 100)), fmt(q(90, 100)), fmt(q(95, 100)), fmt(q(99, 100)), fmt(q(999, 1000)), fmt(v[-1]))
day = lambda t: datetime.datetime.utcfromtimestamp(int(t)).strftime('%Y-%m-%d')
hour = lambda t: datetime.datetime.utcfromtimestamp(int(t)).strftime('%Y-%m-%dT%H')
with open(out + '.byday', 'w') as f:
    g = {}
    for r in rows:
        if r[3] == 'hang': g.setdefault((day(r[4]), r[1]), []).append(r[5])
    for k in sorted(g):
        f.write('{"day": "%s", "version": "%s", "metric": "hang.duration", "unit": "s", %s}\n' % (k[0], k[1], summ(g[k])))
with open(out + '.byhour', 'w') as f:
    g = {}
    for r in rows:
        if r[3] == 'cpu-highload': g.setdefault(hour(r[4]), []).append(r[5])
    for k in sorted(g):
        f.write('%s %d\n' % (k, len(g[k])))
with open(out + '.overview', 'w') as f:
    for v in sorted({r[1] for r in rows}):
        mine = [r for r in rows if r[1] == v]
        kinds = sorted({r[3] for r in mine})
        f.write('{"version": "%s", "sessions": %d, "reports": %d, "kinds": {%s}}\n' % (
            v, len({r[0] for r in mine}), len(mine), ', '.join('"%s": %d' % (k, sum(1 for r in mine if r[3] == k)) for k in kinds)))
PY
python3 "$TMP/oracle.py" "$G" "$TMP/truth" || notok "oracle script"

# ---- both backends: the commands' answers (checked below, in one script) ----
sig_of() { sed -n "${1}s/^{\"signature\": \"\([^\"]*\)\".*/\1/p" "$2"; } # storegen's signatures need no JSON unescaping
for DB in "sqlite:$TMP/fleet.db" "$CH_URL/tk_fleet"; do
	b=${DB%%:*}
	"$TK" ingest -q --db "$DB" "$G" || notok "$b: ingest"
	"$TK" top-hangs --db "$DB" --limit 1000 --json >"$TMP/$b.top"
	"$TK" top-diagnostics --kind cpu-highload --db "$DB" --limit 1000 --json >"$TMP/$b.topcpu"
	# every report id, straight from the backend's table, and every report as the store gives it back
	if [ $b = sqlite ]; then sqlite3 "$TMP/fleet.db" "SELECT lower(hex(id)) FROM reports ORDER BY 1"
	else curl -sf "$CH_HTTP" --data-binary "SELECT DISTINCT id FROM tk_fleet.reports ORDER BY id"; fi >"$TMP/$b.ids"
	"$TK" report --db "$DB" --json $(cat "$TMP/$b.ids") >"$TMP/$b.reports"
	: >"$TMP/$b.detail"
	for i in 1 2 3; do
		sig=$(sig_of $i "$TMP/$b.top")
		"$TK" top-hangs --db "$DB" --signature "$sig" --folded >"$TMP/$b.merged$i"
		"$TK" top-hangs --db "$DB" --signature "$sig" --detail --json --examples 2 >>"$TMP/$b.detail"
	done
	"$TK" top-hangs --db "$DB" --signature "$(sig_of 1 "$TMP/$b.top")" --folded --max-reports 1 >"$TMP/$b.max1"
	"$TK" stats --db "$DB" --metric hang.duration --signature "$(sig_of 1 "$TMP/$b.top")" --json >"$TMP/$b.sigstats"
	first=$(sed -n '1s/.*"examples": \["\([0-9a-f]*\)".*/\1/p' "$TMP/$b.detail")
	"$TK" report --db "$DB" --folded "$first" >"$TMP/$b.first"
	"$TK" stats --db "$DB" --metric hang.duration --by day,version --json >"$TMP/$b.byday"
	"$TK" stats --db "$DB" --metric cpu.duration --by hour --json >"$TMP/$b.byhour"
	"$TK" stats --db "$DB" --overview --by version --json >"$TMP/$b.overview"
	check_fails "$b: report: an unknown id fails" "$TK" report --db "$DB" 0000000000000000000000000000000000000000000000000000000000000000
	check_fails "$b: report: a malformed id fails" "$TK" report --db "$DB" "nothex"
done

cat >"$TMP/check.py" <<'PY'
import json, sys
T, G = sys.argv[1], sys.argv[2]
truth = json.load(open(T + '/truth.stacks.json'))
gen = [l.rstrip('\n').split('\t') for l in open(G + '/truth.tsv')]   # version, ms, signature per hang
def check(name, want, got):
    if want == got: print('ok - ' + name)
    else: print('not ok - %s\n    expected %r\n    got      %r' % (name, want, got))
def lines(f): return [json.loads(l) for l in open(f)]
for b in ('sqlite', 'clickhouse'):
    P = T + '/' + b
    top = lines(P + '.top')
    # first / last version per signature: versions here are 5.0 … 5.2, plain order
    fl = {}
    for v, ms, sig in gen: lo, hi = fl.get(sig, (v, v)); fl[sig] = (min(lo, v), max(hi, v))
    check(b + ': top-hangs --json: first and last version of every signature equal the truth\'s',
          sorted((s, lo, hi) for s, (lo, hi) in fl.items()), sorted((o['signature'], o['first_version'], o['last_version']) for o in top))
    reps = lines(P + '.reports')
    check(b + ': every record is a report', len(truth), len(open(P + '.ids').read().split()))
    check(b + ': every report\'s stacks equal its record\'s `tracekit collapse` (image+offset frames)',
          truth, {'%s\t%s' % (r['session'], r['rkey']): r['folded'] for r in reps})
    details = lines(P + '.detail')
    for i in range(3):
        sig = top[i]['signature']
        mine = [r for r in reps if r['signature'] == sig and r['kind'] == 'hang']
        acc = {}
        for r in mine:
            for line in truth['%s\t%s' % (r['session'], r['rkey'])].splitlines():
                s, w = line.rsplit(' ', 1); acc[s] = acc.get(s, 0) + int(w)
        want = ''.join('%s %d\n' % (s, acc[s]) for s in sorted(acc, key=lambda x: x.encode()))
        check(b + ': signature %d\'s merged stacks (top-hangs --signature --folded) are the sum of its reports\'' % (i + 1),
              want, open(P + '.merged%d' % (i + 1)).read())
        d = details[i]; t = [g for g in gen if g[2] == sig]
        vers, devs = {}, {}
        for v, ms, _ in t: vers[v] = vers.get(v, 0) + 1
        for r in mine: devs[r['device']] = devs.get(r['device'], 0) + 1
        check(b + ': signature %d\'s --detail: count, versions, durations, sessions, devices, examples' % (i + 1),
              [len(t), vers, sorted(int(ms) / 1000 for _, ms, _ in t), len({r['session'] for r in mine}), devs,
               sorted(devs, key=lambda k: (-devs[k], k)), sorted(r['id'] for r in mine)[:2], min(vers), max(vers)],
              [d['count'], d['versions'], d['duration']['values'], d['sessions'], d['devices'], list(d['devices']),
               d['examples'], d['first_version'], d['last_version']])
    st = json.loads(open(P + '.sigstats').read()); du = details[0]['duration']
    check(b + ': stats --db --signature gives the summary --detail gives', [du[k] for k in ('count', 'mean', 'min', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max')],
          [st[k] for k in ('count', 'mean', 'min', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max')])
    check(b + ': --max-reports 1 merges the first report only', open(P + '.first').read(), open(P + '.max1').read())
    check(b + ': hang.duration --by day,version equals the exact oracle per UTC day and version',
          open(T + '/truth.byday').read(), open(P + '.byday').read())
    check(b + ': cpu.duration --by hour counts equal the records\' UTC hours', open(T + '/truth.byhour').read(),
          ''.join('%s %d\n' % (o['hour'], o['count']) for o in lines(P + '.byhour')))
    check(b + ': --overview --by version: distinct sessions and reports per kind', open(T + '/truth.overview').read(),
          open(P + '.overview').read())
for f in ('top', 'topcpu', 'detail', 'reports', 'merged1', 'merged2', 'merged3', 'max1', 'sigstats', 'byday', 'byhour', 'overview'):
    check('sqlite and clickhouse answer the same: ' + f, open(T + '/sqlite.' + f).read(), open(T + '/clickhouse.' + f).read())
for r in lines(T + '/sqlite.reports'):   # ids the migration test below uses: one report of each of two sessions
    if r['session'].endswith('-0'): open(T + '/id0', 'w').write(r['id'])
    if r['session'].endswith('-1'):
        open(T + '/id1', 'w').write(r['id']); open(T + '/id1.folded', 'w').write(truth['%s\t%s' % (r['session'], r['rkey'])])
PY
python3 "$TMP/check.py" "$TMP" "$G" || notok "the check script failed (an answer is missing or malformed)"
check "stats --by day,hour is refused" bash -c '"$TK" stats --db "sqlite:$TMP/fleet.db" --by day,hour 2>&1 | grep -q "one time bucket"'

# ---- a store from before stacks were kept (schema 3) migrates; its reports have no stacks ----
OLD="$TMP/old.db"
"$TK" ingest -q --db "sqlite:$OLD" "$G/s0000000"
sqlite3 "$OLD" "DROP TABLE stacks; ALTER TABLE reports DROP COLUMN stack; PRAGMA user_version = 3;"
"$TK" ingest -q --db "sqlite:$OLD" "$G/s0000001"
check_eq "sqlite: schema 3 migrates to 12" "12" "$(sqlite3 "$OLD" "PRAGMA user_version")"
id0=$(cat "$TMP/id0") id1=$(cat "$TMP/id1")
check_eq "sqlite: a report stored before the migration has no stacks" "" "$("$TK" report --db "sqlite:$OLD" --folded "$id0" || echo FAILED)"
check_eq "sqlite: a report stored after it has its stacks" "$(cat "$TMP/id1.folded" 2>/dev/null || echo MISSING)" "$("$TK" report --db "sqlite:$OLD" --folded "$id1")"
CH_OLD="$CH_URL/tk_old"
"$TK" ingest -q --db "$CH_OLD" "$G/s0000000"
for q in "DROP TABLE tk_old.stacks" "DROP TABLE tk_old.report_stacks" "DROP TABLE tk_old.tracekit_schema" \
	"CREATE TABLE tk_old.tracekit_schema (version UInt32) ENGINE = TinyLog" "INSERT INTO tk_old.tracekit_schema VALUES (1), (2), (3)"; do
	curl -sf "$CH_HTTP" --data-binary "$q" >/dev/null || notok "clickhouse: $q"
done
"$TK" ingest -q --db "$CH_OLD" "$G/s0000001"
check_eq "clickhouse: schema 3 migrates to 8" "8" "$(curl -sf "$CH_HTTP" --data-binary "SELECT max(version) FROM tk_old.tracekit_schema")"
check_eq "clickhouse: a report stored before the migration has no stacks" "" "$("$TK" report --db "$CH_OLD" --folded "$id0" || echo FAILED)"
check_eq "clickhouse: a report stored after it has its stacks" "$(cat "$TMP/id1.folded" 2>/dev/null || echo MISSING)" "$("$TK" report --db "$CH_OLD" --folded "$id1")"
# identical stacks are stored once
check_eq "sqlite: one row per distinct stack text" "$(sqlite3 "$TMP/fleet.db" "SELECT count(DISTINCT stack) FROM reports" || echo FAILED)" "$(sqlite3 "$TMP/fleet.db" "SELECT count(*) FROM stacks")"
check_eq "clickhouse: one row per distinct stack text" "$(curl -sf "$CH_HTTP" --data-binary "SELECT uniqExact(stack) FROM tk_fleet.report_stacks" || echo FAILED)" "$(curl -sf "$CH_HTTP" --data-binary "SELECT count() FROM tk_fleet.stacks")"

# ---- a schema-5 store (before the session summary) migrates to 6: the summary the migration builds
# from the stored reports and the one kept at ingest are the same rows, and both equal the reports'
# own aggregate (the summary's definition, over reports, in SQL) ----
G5="$TMP/gen5"
"$STOREGEN" "$G5" 12 5 3 --cpu 1 --foreground --versions 3 --days 3 >/dev/null || notok "storegen (schema 5)"
V5="$TMP/v5.db" NEW5="$TMP/new5.db"
# a schema-8 store made to look older: its reports' stacks linked from report_stacks again, as before 8
UNDO8="CREATE TABLE report_stacks (report BLOB PRIMARY KEY, stack BLOB NOT NULL) WITHOUT ROWID; INSERT INTO report_stacks SELECT id, stack FROM reports WHERE stack IS NOT NULL; ALTER TABLE reports DROP COLUMN stack;"
"$TK" ingest -q --db "sqlite:$V5" "$G5"/s000000[0-5]
sqlite3 "$V5" "$UNDO8 DROP TABLE sessions_sum; DROP INDEX reports_values; CREATE INDEX reports_session ON reports(app, version, build, device, os, session, kind, duration, time); CREATE INDEX reports_app_version ON reports(kind, app, version, duration); PRAGMA user_version = 5;"
"$TK" ingest -q --db "sqlite:$V5" "$G5"
"$TK" ingest -q --db "sqlite:$V5" "$G5"/s000000[0-3]
"$TK" ingest -q --db "sqlite:$NEW5" "$G5"/s000000[6-9] "$G5"/s0000010
"$TK" ingest -q --db "sqlite:$NEW5" "$G5"
check_eq "sqlite: schema 5 migrates to 12" "12" "$(sqlite3 "$V5" "PRAGMA user_version")"
SUMQ="SELECT * FROM sessions_sum ORDER BY app, version, build, device, os, session, kind"
check_eq "sqlite: the migrated summary plus later ingests equals the one kept at ingest" \
	"$(sqlite3 "$NEW5" "$SUMQ")" "$(sqlite3 "$V5" "$SUMQ" || echo FAILED)"
check_eq "sqlite: the summary kept at ingest equals the reports' aggregate" \
	"$(sqlite3 "$NEW5" "SELECT app, version, build, device, os, session, kind, count(*), count(duration), min(CASE WHEN duration IS NOT NULL THEN time END), coalesce(sum(CAST(duration * 1000000.0 + 0.5 AS INTEGER)), 0), coalesce(sum(CASE WHEN duration >= 0.25 THEN CAST(duration * 1000000.0 + 0.5 AS INTEGER) END), 0) FROM reports GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7")" \
	"$(sqlite3 "$NEW5" "$SUMQ")"
check "sqlite: the summary has foreground and hang rows" test "$(sqlite3 "$NEW5" "SELECT count(DISTINCT kind) FROM sessions_sum WHERE kind IN ('foreground', 'hang')")" = 2
for a in "--metric hang.rate --by app,version" "--metric hang.rate --by day" "--overview --by app,version" "--metric hang.duration --by day,version"; do
	check_eq "sqlite: migrated and fresh stores answer $a the same" "$("$TK" stats --db "sqlite:$NEW5" $a --json)" "$("$TK" stats --db "sqlite:$V5" $a --json || echo FAILED)"
done

# ---- a schema-6 store (stacks WITHOUT ROWID, keyed by the hash) migrates to 7 (a rowid table, the
# hash unique): every stack text is kept, and a signature's merged stacks read the same ----
V6="$TMP/v6.db"
sqlite3 "$NEW5" ".backup '$V6'"
sqlite3 "$V6" "$UNDO8 CREATE TABLE s6 (hash BLOB PRIMARY KEY, folded TEXT NOT NULL) WITHOUT ROWID; INSERT INTO s6 SELECT hash, folded FROM stacks; DROP TABLE stacks; ALTER TABLE s6 RENAME TO stacks; PRAGMA user_version = 6;"
SIG6=$("$TK" top-hangs --db "sqlite:$NEW5" --json --limit 1 | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["signature"])')
"$TK" top-hangs --db "sqlite:$NEW5" --signature "$SIG6" --folded >"$TMP/sig7.folded"
"$TK" top-hangs --db "sqlite:$V6" --signature "$SIG6" --folded >"$TMP/sig6.folded" || notok "top-hangs on a schema-6 store"
check_eq "sqlite: schema 6 migrates to 12" "12" "$(sqlite3 "$V6" "PRAGMA user_version")"
check "sqlite: a signature's merged stacks are the same after the migration (and not empty)" \
	test -s "$TMP/sig7.folded" -a "$(md5sum <"$TMP/sig6.folded")" = "$(md5sum <"$TMP/sig7.folded")"
STQ="SELECT hex(hash), folded FROM stacks ORDER BY hash"
check_eq "sqlite: every stack text kept by the migration" "$(sqlite3 "$NEW5" "$STQ")" "$(sqlite3 "$V6" "$STQ")"

# ---- a schema-7 store (each report's stacks linked by a report_stacks row keyed by its random id)
# migrates to 8 (the report's own row names its stacks' hash): part of the fleet ingested before the
# migration, the rest after, and every report's text, a report's folded stacks and a signature's
# merged stacks read as from a store made at schema 8 with the same reports ----
V7="$TMP/v7.db"
"$TK" ingest -q --db "sqlite:$V7" "$G5"/s000000[0-5]
sqlite3 "$V7" "$UNDO8 PRAGMA user_version = 7;"
check "sqlite: the schema-7 copy links its reports' stacks from report_stacks" \
	test "$(sqlite3 "$V7" "SELECT count(*) FROM report_stacks")" -gt 0
"$TK" ingest -q --db "sqlite:$V7" "$G5"
check_eq "sqlite: schema 7 migrates to 12, report_stacks dropped" "12 0" \
	"$(sqlite3 "$V7" "PRAGMA user_version; SELECT count(*) FROM sqlite_master WHERE name = 'report_stacks'" | tr '\n' ' ' | sed 's/ $//')"
RSQ="SELECT hex(r.id), s.folded FROM reports r LEFT JOIN stacks s ON s.hash = r.stack ORDER BY r.id"
check_eq "sqlite: every hang has its stacks, foreground reports none (both kinds compared below)" "1 1" \
	"$(sqlite3 "$NEW5" "SELECT count(*) > 0 AND count(*) = count(stack) FROM reports WHERE kind = 'hang'; SELECT count(*) > 0 AND count(stack) = 0 FROM reports WHERE kind = 'foreground'" | tr '\n' ' ' | sed 's/ $//')"
check_eq "sqlite: each report's stacks text after the 7 → 8 migration is the one a schema-8 ingest stores" \
	"$(sqlite3 "$NEW5" "$RSQ")" "$(sqlite3 "$V7" "$RSQ" || echo FAILED)"
ID7=$(sqlite3 "$NEW5" "SELECT lower(hex(id)) FROM reports WHERE kind = 'hang' ORDER BY id LIMIT 1")
F7=$("$TK" report --db "sqlite:$NEW5" --folded "$ID7")
check "sqlite: a hang's folded stacks (tracekit report) are not empty" test -n "$F7"
check_eq "sqlite: tracekit report --folded reads the same after the 7 → 8 migration" \
	"$F7" "$("$TK" report --db "sqlite:$V7" --folded "$ID7" || echo FAILED)"
"$TK" top-hangs --db "sqlite:$V7" --signature "$SIG6" --folded >"$TMP/sig8.folded" || notok "top-hangs on a migrated schema-7 store"
check "sqlite: a signature's merged stacks are the same after the 7 → 8 migration" \
	test -s "$TMP/sig8.folded" -a "$(md5sum <"$TMP/sig8.folded")" = "$(md5sum <"$TMP/sig7.folded")"
