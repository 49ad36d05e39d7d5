#!/usr/bin/env python3
"""Compare a Firefox Profiler file as the profiler's own code reads it (profiler-cli, already
loaded in the current session) with tracekit's numbers for the same input.

usage: gecko_compare.py TRACEKIT INPUT

Checks, printing TAP-ish lines: the thread count and (tid, name) set equal `tracekit tree --json`'s;
for every thread, each function's self weight from `profiler-cli thread functions --json` equals
`tracekit top --json --thread TID` (ratio within 0.1 %), matched by (name, library), samples with an
empty stack as the function "(no stack)"; every thread's total in the profiler's call tree (the root,
idle samples included) equals the thread's total in `tracekit tree`, so every percentage agrees.

The questions go to the current session's profiler-cli daemon (the profiler's own code, which
computes every answer) over its socket, as the `profiler-cli` client sends them: one JSON line
{"type":"command","command":…} answered by one JSON line {"type":"success","result":…}, whose result
is what `profiler-cli … --json` prints. A client process per question cost ~0.5 s of CPU (node
loading the whole bundle), two per thread. gecko_profiler.sh checks that these answers equal the
client's own output (`gecko_compare.py --query …`).

usage: gecko_compare.py --query list|functions HANDLE|top-down HANDLE   one answer, as JSON"""
import json, os, re, socket, subprocess, sys

# the profiler-cli command line each question stands for, as the client builds its command object
# (thread list --limit 0; thread functions --thread H --limit 0; thread samples-top-down --thread H
# --include-idle --max-lines 1)
def pc_command(what, handle=None):
    if what == 'list':
        return {'command': 'thread', 'subcommand': 'list', 'threadListOptions': {'limit': 0}}
    if what == 'functions':
        return {'command': 'thread', 'subcommand': 'functions', 'thread': handle, 'functionFilters': {}}
    if what == 'top-down':
        return {'command': 'thread', 'subcommand': 'samples-top-down', 'thread': handle, 'includeIdle': True,
                'callTreeOptions': {'maxNodes': 1}}
    sys.exit('gecko_compare.py: unknown question ' + what)


def pc(what, handle=None):
    d = os.environ.get('PROFILER_CLI_SESSION_DIR') or os.path.join(os.environ['HOME'], '.profiler-cli')
    session = open(os.path.join(d, 'current.txt')).read().strip()
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(os.path.join(d, session + '.sock'))
        s.sendall((json.dumps({'type': 'command', 'command': pc_command(what, handle)}) + '\n').encode())
        buf = b''
        while b'\n' not in buf:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
    r = json.loads(buf.split(b'\n', 1)[0])
    if r.get('type') != 'success':
        sys.exit('gecko_compare.py: the daemon answered %s' % json.dumps(r)[:400])
    return r['result']


if sys.argv[1] == '--query':
    print(json.dumps(pc(*sys.argv[2:])))
    sys.exit()

tk, inp = sys.argv[1], sys.argv[2]
label = inp.rsplit('/', 1)[-1]


def tkj(*args):
    return json.loads(subprocess.run([tk, *args, '--json', inp], check=True, capture_output=True,
                                     text=True).stdout)


def report(ok, name, detail=''):
    print(('ok - ' if ok else 'not ok - ') + f'{label}: {name}')
    if not ok and detail:
        print('    ' + detail[:600])


tree = tkj('tree', '--max-depth', '1')
ours = sorted((g['tid'], g['name'] or g.get('process') or f"thread {g['tid']}") for g in tree['threads'])
tl = pc('list')
theirs = sorted((t['tid'], t['name']) for t in tl['threads'])
report(ours == theirs, f'{len(theirs)} threads with the same tids and names', f'ours {ours} theirs {theirs}')

unit = tree['unit']
scale = 1e6 if unit == 'ns' else 1.0  # tracing-ms for ns, raw counts otherwise
byname = {(g['tid'], g['name'] or g.get('process') or f"thread {g['tid']}"): g for g in tree['threads']}
# every thread's `tracekit top --json --thread TID` at once: one tk_batch process (tests/lib.sh exports
# TK_BATCH; each command's output ends at its mark) rather than a tracekit process per thread
tops = {}
if os.environ.get('TK_BATCH') and os.access(os.environ['TK_BATCH'], os.X_OK):
    tids = [str(t['tid']) for t in tl['threads']]
    lst = subprocess.run(['mktemp'], check=True, capture_output=True, text=True).stdout.strip()
    with open(lst, 'w') as f:
        for tid in tids:
            f.write('\t'.join(['top', '--json', '--thread', tid, inp]) + '\n')
    out = subprocess.run([os.environ['TK_BATCH'], lst], check=True, capture_output=True, text=True,
                         env=dict(os.environ, TK_BATCH_MARK='1')).stdout
    os.unlink(lst)
    seg = []
    for line in out.split('\n'):
        m = re.fullmatch(r'tk_batch: line (\d+): exit (\d+)', line)
        if m:
            tops[tids[int(m.group(1)) - 1]] = '\n'.join(seg)
            seg = []
        else:
            seg.append(line)
bad = []
badtot = []
nfun = 0
for t in tl['threads']:
    g = byname.get((t['tid'], t['name']))
    td = pc('top-down', t['threadHandle'])
    got_total = td['regularCallTree']['totalSamples']
    if g is None or abs(got_total - g['total'] / scale) > 1e-6 * max(1, g['total'] / scale):
        badtot.append(f"{t['name']}: profiler {got_total} tracekit {g and g['total'] / scale}")
    fs = pc('functions', t['threadHandle'])
    got = {}
    for f in fs['functions']:
        key = (f['name'], f.get('library') or '')
        got[key] = got.get(key, 0) + f['selfSamples']
    top = tops.get(str(t['tid'])) or subprocess.run([tk, 'top', '--json', '--thread', str(t['tid']), inp], check=True,
                                                   capture_output=True, text=True).stdout
    want = {}
    for f in json.loads(top)['functions']:
        key = (f['name'], f.get('binary') or '')
        want[key] = want.get(key, 0) + f['self'] / scale
    if g is not None and g['self']:  # a thread's own self weight: its samples with an empty stack
        want[('(no stack)', '')] = want.get(('(no stack)', ''), 0) + g['self'] / scale
    for key in set(got) | set(want):
        a, b = got.get(key, 0), want.get(key, 0)
        if a == 0 and b == 0:
            continue
        nfun += 1
        if abs(a - b) > 0.001 * max(abs(a), abs(b)):
            bad.append(f'{t["name"]} {key}: profiler {a} tracekit {b}')
report(not bad and nfun > 0, f'self weight of {nfun} (thread, function) pairs equal tracekit top',
       '; '.join(bad[:5]))
report(not badtot, f"every thread's total in the profiler's call tree equals tracekit tree's", '; '.join(badtot[:5]))

# The file itself: per thread, one sample per exported row (the per-sample list), in time order, and
# the weights add up to the thread's total.
if len(sys.argv) > 3:
    prof = json.load(open(sys.argv[3]))
    byt = {g['tid']: g for g in tree['threads']}
    bad = []
    for th in prof['threads']:
        s, g = th['samples'], byt.get(th['tid'])
        total = sum(s['weight']) * (scale if s['weightType'] == 'tracing-ms' else 1)
        if g is None or s['length'] != g['samples'] or any(b < a for a, b in zip(s['time'], s['time'][1:])) \
                or abs(total - g['total']) > 1e-6 * max(1, g['total']):
            bad.append(f"tid {th['tid']}: {s['length']} samples, total {total}, ours {g and (g['samples'], g['total'])}")
    report(not bad, 'one sample per row in time order, weights summing to the thread totals', '; '.join(bad[:3]))
