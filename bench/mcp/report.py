#!/usr/bin/env python3
"""The table and goal line of bench/mcp/run.sh, from the load reports it
leaves in a directory: <target>.<method>.r<round>.json for each round a
target ran, or a .err file with the reason it did not.

    report.py DIR RATE ROUNDS "TARGETS" HARNESS_CPUS

RATE is empty for an unpaced run; HARNESS_CPUS is taskset's list of the
CPUs load and the upstream ran on ("0", "0,2-7"; empty when unpinned).
bench/mcp/report_test.go runs it on reports it writes.
"""
import json, os, statistics, sys
tmp, rate, rounds, targets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
def cpu_list(spec):
    """taskset's list ("0,2-7") as /proc/stat names; CPU 0 when unpinned."""
    out = []
    for part in filter(None, spec.split(",")):
        lo, _, hi = part.partition("-")
        out += [f"cpu{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return out or ["cpu0"]
harness = cpu_list(sys.argv[5])
def harness_busy(r):
    """The harness CPUs' mean busy share over one run's window."""
    b = r.get("cpu_busy") or {}
    vals = [b[c] for c in harness if c in b]
    return sum(vals) / len(vals) if vals else None
names = [n for n in ["direct", "sluice", "cached", "revproxy", "gosdkproxy", "nginx", "haproxy"] if n in targets]
def results(name, method):
    """Every round's report for name and method, and the reason of the
    first round that has none."""
    got, why = [], None
    for r in range(1, rounds + 1):
        base = os.path.join(tmp, f"{name}.{method.replace('/', '_')}.r{r}")
        if os.path.exists(base + ".json"):
            with open(base + ".json") as f:
                got.append(json.load(f))
            continue
        got.append(None)
        if why is None:
            why = "not run"
            if os.path.exists(base + ".err"):
                with open(base + ".err") as f:
                    why = f.read().strip() or "failed"
    return got, why
def median(rs, get):
    vals = [v for v in (get(r) for r in rs) if v is not None]
    return statistics.median(vals) if vals else None
def merged(rs):
    """The median of each number over the rounds; errors are summed."""
    ok = [r for r in rs if r is not None]
    if not ok:
        return None
    m = {"rps": median(ok, lambda r: r["rps"]), "p50_us": median(ok, lambda r: r["p50_us"]),
         "p99_us": median(ok, lambda r: r["p99_us"]), "errors": sum(r["errors"] for r in ok),
         "rounds": len(ok)}
    keys = set().union(*[(r.get("cpu_us_per_req") or {}).keys() for r in ok])
    m["cpu_us_per_req"] = {k: median(ok, lambda r: (r.get("cpu_us_per_req") or {}).get(k)) for k in keys}
    m["proxy_range"] = [v for v in ((r.get("cpu_us_per_req") or {}).get("proxy") for r in ok) if v is not None]
    m["cpus"] = {k: median(ok, lambda r: (r.get("cpus") or {}).get(k)) for k in ("load", "upstream")}
    m["cpu_busy"] = {"harness": median(ok, harness_busy), "cpu1": median(ok, lambda r: (r.get("cpu_busy") or {}).get("cpu1"))}
    return m
# The harness CPUs (CPU 0 on 2 CPUs) carry load and the upstream; above
# this busy share they, not the proxy, may be what limits requests/s.
SATURATED = 0.80
def pct(v):
    return "-" if v is None else f"{100*v:.0f}%"
print()
if rounds > 1:
    print(f"medians over {rounds} rounds; 'proxy range' is the lowest and highest proxy µs/req of the rounds")
print(f"{'target':<12} {'method':<11} {'req/s':>7} {'p50 µs':>8} {'p99 µs':>8} {'errors':>6} "
      f"{'proxy µs/req':>12} {'proxy range':>13} {'upstream µs/req':>15} {'load µs/req':>11} {'load+up CPUs':>12} {'harness busy':>12} {'CPU1 busy':>9}")
res, per_round = {}, {}
capped = []
for method in ("tools/call", "tools/list"):
    for n in names:
        if n == "cached" and method != "tools/list":
            continue
        rs, why = results(n, method)
        per_round[(n, method)] = rs
        r = merged(rs)
        res[(n, method)] = r
        if r is None:
            print(f"{n:<12} {method:<11} FAILED: {why[:90]}")
            continue
        cpu = r["cpu_us_per_req"]
        f = lambda k: f"{cpu[k]:.1f}" if cpu.get(k) is not None else "-"
        rng = r["proxy_range"]
        rng = f"{min(rng):.0f}–{max(rng):.0f}" if len(rng) > 1 else "-"
        b0 = r["cpu_busy"]["harness"]
        cpus = r["cpus"]
        lu = f"{cpus['load'] + cpus['upstream']:.2f}" if cpus.get("load") is not None and cpus.get("upstream") is not None else "-"
        mark = ""
        if b0 is not None and b0 > SATURATED and n != "direct":
            mark = " *"
            capped.append(f"{n} {method}")
        if r["rounds"] < rounds:
            mark += f" ({r['rounds']} of {rounds} rounds; first failure: {why[:60]})"
        print(f"{n:<12} {method:<11} {r['rps']:>7.0f} {r['p50_us']:>8.0f} {r['p99_us']:>8.0f} {r['errors']:>6} "
              f"{f('proxy'):>12} {rng:>13} {f('upstream'):>15} {f('load'):>11} {lu:>12} {pct(b0):>12} {pct(r['cpu_busy']['cpu1']):>9}{mark}")
print()
if capped:
    print(f"* harness CPUs ({', '.join(harness)}) above {100*SATURATED:.0f}% busy (load+up CPUs is the harness's share, the rest other processes): "
          f"that run's req/s may be set by the harness, not the proxy, and is a lower bound for it: {', '.join(capped)}")
def verdict(s, rp, busy):
    """The goal on one pair of results: (verdict, req/s ratio, CPU ratio),
    where verdict is PASS, FAIL or NOT JUDGED. busy is the harness CPUs'
    busy share in revproxy's run: above SATURATED the harness, not
    revproxy, may have set revproxy's requests/s, so the req/s ratio says
    nothing about the proxies either way and its half is not judged. A
    failed CPU half fails the goal all the same."""
    ratio = s["rps"] / rp["rps"] if rp["rps"] else 0
    cs, cr = s["cpu_us_per_req"].get("proxy"), rp["cpu_us_per_req"].get("proxy")
    cpu = cs / cr if cs is not None and cr else float("inf")
    if cpu > 1/3 or s["errors"] != 0:
        return "FAIL", ratio, cpu
    if rate:
        return "PASS", ratio, cpu
    if busy is not None and busy > SATURATED:
        return "NOT JUDGED", ratio, cpu
    return ("PASS" if ratio >= 1.5 else "FAIL"), ratio, cpu
s, rp = res.get(("sluice", "tools/call")), res.get(("revproxy", "tools/call"))
if "sluice" not in names or "revproxy" not in names:
    print("goal: not judged (TARGETS lacks sluice or revproxy)")
elif s is None or rp is None:
    print("goal (sluice ≥ 1.5× revproxy req/s, ≤ 1/3 its CPU/req): FAIL (no %s result)" % ("sluice" if s is None else "revproxy"))
else:
    b0 = rp["cpu_busy"]["harness"]
    v, ratio, cpu = verdict(s, rp, b0)
    rounds_note = ""
    if rounds > 1:
        # Each round's sluice run against the same round's revproxy run.
        pairs = [(a, b) for a, b in zip(per_round[("sluice", "tools/call")], per_round[("revproxy", "tools/call")]) if a and b]
        vs = [verdict(a, b, harness_busy(b)) for a, b in pairs]
        counts = ", ".join(f"{k} {sum(1 for x in vs if x[0] == k)}" for k in ("PASS", "FAIL", "NOT JUDGED") if any(x[0] == k for x in vs))
        cpus = ", ".join(f"{x[2]:.2f}" for x in vs)
        rounds_note = f"; judged on the medians; round by round of {len(pairs)}: {counts} (CPU/req ratios {cpus})"
    if rate:
        # Paced: both proxies carry the same requests/s, so only the CPU
        # half of the goal is measured here.
        print(f"goal, CPU half at the same offered load ({rate} req/s; sluice {s['rps']:.0f}, revproxy {rp['rps']:.0f} req/s; "
              f"the req/s half needs an unpaced run): sluice ≤ 1/3 of revproxy's CPU/req: {v} "
              f"(CPU/req {cpu:.2f}×, sluice errors {s['errors']}{rounds_note})")
    else:
        note = ""
        if v == "NOT JUDGED":
            note = (f"; the CPU half passes, the req/s half is not judged: revproxy's run had the harness CPUs at {pct(b0)}, "
                    f"so its req/s may be the harness's and the ratio says nothing about the proxies (more harness CPUs or PROXY_CPU; README.md)")
        elif b0 is not None and b0 > SATURATED:
            note = f"; revproxy's run had the harness CPUs at {pct(b0)}"
        print(f"goal (sluice ≥ 1.5× revproxy req/s, ≤ 1/3 its CPU/req): {v} "
              f"(req/s {ratio:.2f}×, CPU/req {cpu:.2f}×, sluice errors {s['errors']}{note}{rounds_note})")
# The C references beside the goal: where revproxy's third lies against
# proxies that only relay HTTP.
refs = []
for n in ("nginx", "haproxy"):
    r = res.get((n, "tools/call"))
    c = r and r["cpu_us_per_req"].get("proxy")
    if not c:
        continue
    line = f"{n} {c:.1f} µs/req, {r['rps']:.0f} req/s"
    if rp and rp["cpu_us_per_req"].get("proxy"):
        line += f", {c / rp['cpu_us_per_req']['proxy']:.2f}× revproxy's CPU/req"
    if s and s["cpu_us_per_req"].get("proxy"):
        line += f", sluice at {s['cpu_us_per_req']['proxy'] / c:.2f}× its CPU/req"
    refs.append(line)
if refs:
    print("references (tools/call): " + "; ".join(refs))
# The cache goal: a tools/list served from the proxy's cache against the
# same list fanned out to both routes, and against a tools/call's CPU.
if "cached" in names:
    c, f, call = res.get(("cached", "tools/list")), res.get(("sluice", "tools/list")), res.get(("sluice", "tools/call"))
    head = "cache goal (cached tools/list ≥ 10× fanned-out req/s, CPU/req ≤ a tools/call's): "
    if c is None or f is None or call is None:
        print(head + "FAIL (no %s result)" % ("cached tools/list" if c is None else "sluice tools/list" if f is None else "sluice tools/call"))
    else:
        ratio = c["rps"] / f["rps"] if f["rps"] else float("inf")
        cc, ck = c["cpu_us_per_req"].get("proxy"), call["cpu_us_per_req"].get("proxy")
        cpu = cc / ck if cc is not None and ck else float("inf")
        busy = c["cpu_busy"]["harness"]
        if cpu > 1 or c["errors"] != 0:
            v = "FAIL"
        elif rate:
            v = "PASS"
        elif ratio >= 10:
            v = "PASS"
        elif busy is not None and busy > SATURATED:
            v = "NOT JUDGED"
        else:
            v = "FAIL"
        note = ""
        if v == "NOT JUDGED":
            note = f"; the CPU half passes, the req/s half is not judged: the cached run had the harness CPUs at {pct(busy)}, so its req/s is the harness's"
        if rate:
            note = f"; paced at {rate} req/s: only the CPU half is judged"
        fc = f["cpu_us_per_req"].get("proxy")
        per_cpu = f"; proxy CPU/req fanned-out ÷ cached {fc / cc:.2f}×" if fc and cc else ""
        print(head + f"{v} (req/s {ratio:.2f}×, CPU/req {cpu:.2f}× a tools/call's: {cc if cc is not None else float('nan'):.1f} vs "
              f"{ck if ck is not None else float('nan'):.1f} µs{per_cpu}, cached errors {c['errors']}{note})")
