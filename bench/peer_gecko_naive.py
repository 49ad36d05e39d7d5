#!/usr/bin/env python3
"""The instruments-to-gecko layout of a profile, for bench/bench_gecko.sh: rewrite tracekit's
Firefox Profiler file (processed format, shared tables, per-sample weights) as a Gecko-format
profile the way instruments-to-gecko writes one: every thread with its own string, frame and stack
tables, one sample per exported row, and no weights (each row counts as one interval).

usage: peer_gecko_naive.py IN.json OUT.json"""
import json, sys

p = json.load(open(sys.argv[1]))
sh = p['shared']
S, ft, fn, st, rt = sh['stringArray'], sh['frameTable'], sh['funcTable'], sh['stackTable'], sh['resourceTable']


def location(f):
    func = ft['func'][f]
    name = S[fn['name'][func]]
    r = fn['resource'][func]
    return f'{name} (in {S[rt["name"][r]]})' if r >= 0 else name


threads = []
for th in p['threads']:
    strings, sidx, frames, fidx, stacks, kidx = [], {}, [], {}, [], {}

    def frame(f):
        if f not in fidx:
            loc = location(f)
            if loc not in sidx:
                sidx[loc] = len(strings)
                strings.append(loc)
            fidx[f] = len(frames)
            line = ft['line'][f]
            frames.append([sidx[loc], False, None, None, line, None, ft['category'][f], 0])
        return fidx[f]

    def stack(s):
        if s is None:
            return None
        if s not in kidx:
            parent = stack(st['prefix'][s])
            kidx[s] = len(stacks)
            stacks.append([parent, frame(st['frame'][s])])
        return kidx[s]

    sm = th['samples']
    data = [[stack(s), t, 0] for s, t in zip(sm['stack'], sm['time'])]
    threads.append({
        'name': th['name'], 'processType': 'default', 'processName': th.get('processName', ''),
        'registerTime': 0, 'unregisterTime': None, 'tid': th['tid'], 'pid': int(th['pid']),
        'markers': {'schema': {'name': 0, 'startTime': 1, 'endTime': 2, 'phase': 3, 'category': 4, 'data': 5},
                    'data': []},
        'samples': {'schema': {'stack': 0, 'time': 1, 'eventDelay': 2}, 'data': data},
        'stackTable': {'schema': {'prefix': 0, 'frame': 1}, 'data': stacks},
        'frameTable': {'schema': {'location': 0, 'relevantForJS': 1, 'innerWindowID': 2, 'implementation': 3,
                                  'line': 4, 'column': 5, 'category': 6, 'subcategory': 7}, 'data': frames},
        'stringTable': strings})

m = p['meta']
out = {'meta': {'version': 36, 'startTime': 0, 'shutdownTime': None, 'interval': m['interval'], 'stackwalk': 1,
                'debug': 0, 'gcpoison': 0, 'asyncstack': 0, 'processType': 0, 'product': m['product'],
                'presymbolicated': True, 'categories': m['categories'], 'markerSchema': []},
       'libs': [], 'pausedRanges': [], 'processes': [], 'threads': threads}
json.dump(out, open(sys.argv[2], 'w'), separators=(',', ':'))
