#!/usr/bin/env python3
"""Helpers of scripts/flink-observe (see there):

  flink-observe.py poll BIN BOOTSTRAP PREFIX OUT STOPFILE   one JSON line per ~1 s `BIN snapshot -o json`,
                                                           the prefix's transactions and job only
  flink-observe.py timeline DIR                            actions, job events and every change of an id, merged
  flink-observe.py trace DIR SCENARIO VERSION TEXT OUT     the compact trace of model/testdata/flink/
"""
import datetime, glob, json, os, subprocess, sys, time


def poll(bin_, boot, prefix, out, stop):
    with open(out, 'a') as f:
        while not os.path.exists(stop):
            t0 = time.time()
            try:
                r = subprocess.run([bin_, 'snapshot', '-o', 'json', '-b', boot], capture_output=True, timeout=20)
                d = json.loads(r.stdout)
            except Exception as e:  # a failed poll is a line too: gaps must show
                f.write(json.dumps({"t": int(t0 * 1000), "error": str(e)}) + "\n"); f.flush(); time.sleep(1); continue
            keep = ('transactional_id', 'state', 'producer_id', 'producer_epoch', 'timeout_ms', 'start_time', 'partitions')
            tx = [{k: x.get(k) for k in keep} for x in d.get('transactions') or []
                  if x['transactional_id'].startswith(prefix + '-')]
            jobs = [j for j in (d.get('jobs') or []) if j.get('name') == prefix]
            f.write(json.dumps({"t": int(t0 * 1000), "taken_at": d.get('taken_at'), "txns": tx, "jobs": jobs}) + "\n")
            f.flush()
            time.sleep(max(0, 1 - (time.time() - t0)))


def prefix_of(d):
    return open(os.path.join(d, 'prefix')).read().strip()


def timeline(d):
    ev = []
    for l in open(os.path.join(d, 'actions.txt')):
        t, rest = l.split(' ', 1); ev.append((int(t), 'ACT  ' + rest.strip()))
    for f in sorted(glob.glob(os.path.join(d, '*.out'))):
        n = os.path.basename(f)[:-4]
        for l in open(f):
            t, rest = l.split(' ', 1)
            if rest.startswith('checkpoint '):
                rest = ' '.join(rest.split()[:4])
            ev.append((int(t), f'JOB{n} ' + rest.strip()))
    prev, prevjob = {}, None
    for l in open(os.path.join(d, 'snap.jsonl')):
        s = json.loads(l)
        if 'error' in s:
            ev.append((s['t'], 'ERR ' + s['error'])); continue
        cur = {x['transactional_id']: (x['state'], x['producer_id'], x['producer_epoch'], len(x['partitions'] or []))
               for x in s['txns']}
        for i, v in sorted(cur.items()):
            if prev.get(i) != v:
                ev.append((s['t'], f'TXN  {i} {v[0]} pid={v[1]} ep={v[2]} parts={v[3]}'))
        for i in prev:
            if i not in cur:
                ev.append((s['t'], f'TXN  {i} GONE'))
        for j in s['jobs']:
            key = (j.get('ids'), len(j.get('open') or []), len(j.get('lingering') or []), j.get('prefix_shared'),
                   j.get('fences_5m'), j.get('newest_checkpoint'))
            if key != prevjob:
                ev.append((s['t'], f"JOBV ids={key[0]} open={key[1]} lingering={key[2]} shared={key[3]} "
                                   f"fences5m={key[4]} newest_ckpt={key[5]} "
                                   f"problems={[p.get('kind') or p.get('what') for p in (j.get('problems') or [])]}"))
                prevjob = key
        prev = cur
    ev.sort(key=lambda e: e[0])
    p = prefix_of(d)
    for t, e in ev:
        print(f'{(t - ev[0][0]) / 1000:7.1f} {e.replace(p, "P")}')


def iso_ms(s):
    if not s:
        return None
    s = s.replace('Z', '+00:00')
    if '.' in s:
        head, rest = s.split('.', 1)
        i = rest.index('+')
        s = head + '.' + (rest[:i] + '000000')[:6] + rest[i:]
    return int(datetime.datetime.fromisoformat(s).timestamp() * 1000)


def trace(d, scn, ver, desc, out):
    prefix = prefix_of(d)
    acts = [l.split(' ', 1) for l in open(os.path.join(d, 'actions.txt'))]
    t0 = int(acts[0][0])
    events = [{'t_ms': int(t) - t0, 'what': a.strip().replace(prefix, 'job')} for t, a in acts]
    for f in sorted(glob.glob(os.path.join(d, '*.out'))):
        n = os.path.basename(f)[:-4]
        for l in open(f):
            t, rest = l.split(' ', 1)
            w = rest.split()
            if w[0] in ('checkpoint', 'status', 'failure', 'restored', 'restore', 'started', 'taskmanager'):
                if w[0] == 'checkpoint':
                    w = w[:4]
                if w[0] in ('restore', 'started'):
                    w = w[:2]
                events.append({'t_ms': int(t) - t0, 'what': f'run {n}: ' + ' '.join(w).replace(prefix, 'job')})
    events.sort(key=lambda e: e['t_ms'])
    snaps, prev, base = [], {}, None
    rows = [json.loads(l) for l in open(os.path.join(d, 'snap.jsonl'))]
    for s in rows:
        for x in s.get('txns') or []:
            base = x['producer_id'] if base is None else min(base, x['producer_id'])
    for s in rows:
        if 'error' in s:
            continue
        cur = {}
        for x in s['txns']:
            st = iso_ms(x['start_time'])
            cur[x['transactional_id'].replace(prefix, 'job', 1)] = [
                x['state'], x['producer_id'] - base, x['producer_epoch'], None if st is None else st - t0,
                sorted(p['partition'] for p in (x['partitions'] or []))]
        ch = {i: v for i, v in cur.items() if prev.get(i) != v}
        gone = [i for i in prev if i not in cur]
        if ch or gone or not snaps:
            e = {'t_ms': s['t'] - t0}
            if ch:
                e['set'] = {i: ch[i] for i in sorted(ch)}
            if gone:
                e['gone'] = sorted(gone)
            snaps.append(e)
        prev = cur
    flink = {'1.20': 'Flink 1.20.5 + flink-connector-kafka 3.4.0-1.20 (kafka-clients 3.4.0)',
             '2.2': 'Flink 2.2.1 + flink-connector-kafka 5.0.0-2.2 (kafka-clients 4.2.0)'}[ver]
    doc = {'scenario': scn, 'flink': flink, 'kafka': 'Apache Kafka 4.4.0, one KRaft node (scripts/kafka-up)',
           'description': desc,
           'format': "events: actions and the job's event lines; snapshots: ListTransactions+DescribeTransactions "
                     "about every 1 s (txnscope snapshot -o json), only the ids that changed: id -> [state, "
                     "producer id - smallest seen, epoch, start ms (same clock as t_ms) or null, partitions]; "
                     "gone: ids no longer listed",
           'events': events, 'snapshots': snaps}
    json.dump(doc, open(out, 'w'), separators=(',', ':'))
    print(out, os.path.getsize(out))


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'poll': poll, 'timeline': timeline, 'trace': trace}[cmd](*args)
