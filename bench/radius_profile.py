#!/usr/bin/env python3
"""CPU profile of `xr serve` under the RADIUS yardstick's load (../shared/bench).

Usage (from the project root, machine otherwise quiet):
    python3 bench/radius_profile.py [--mode auth|acct] [--duration 10s] [--out /tmp/xr-radius.prof] [--core]
Sets xr up as compare.py does (10,000 imported subscribers, one NAS on loopback), runs radload at
64 in flight and takes a CPU profile through XR_PPROF while it runs; prints radload's figures (its
server_cpu_pct_of_one_core over responses_per_s is the CPU per request) and the profile's top
functions. Read it further with `go tool pprof PROFILE`.
--core serves the radiusd package alone with an in-memory backend instead (TestServeMemChild):
the cost of sockets, parsing, hashing and replies without the app's.
"""
import argparse, csv, json, os, subprocess, sys, threading, time, urllib.request

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench")
sys.path.insert(0, BENCH)
from xrharness import Harness  # noqa: E402

SECRET, USERS, PPROF = "radload-bench-secret", 10000, "127.0.0.1:16060"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="auth", choices=["auth", "acct"])
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--out", default="/tmp/xr-radius.prof")
    ap.add_argument("--core", action="store_true")
    a = ap.parse_args()
    rl = os.path.join(BENCH, ".bin", "radload")
    if subprocess.run(f"cd {BENCH}/radload && go build -o ../.bin/radload .", shell=True).returncode:
        return 1
    if a.core:
        return core(a, rl)
    h = Harness(".")
    os.environ["XR_PPROF"] = PPROF
    try:
        h.build()
        h.create_tenant("bench", max_users=20000, tier="max")
        h.xr("nas", "add", "--tenant", "bench", "--name", "bench", "--ip", "127.0.0.1", "--secret", SECRET,
             "--coa-port", str(h.coa_port))
        h.serve()
        tok = h.admin("bench")
        h.req("POST", "/admin/profiles", {"name": "bench", "price": 1, "duration_days": 365, "bytes_limit": 0,
                                          "rate_down_kbps": 10240, "rate_up_kbps": 10240, "simultaneous_use": 100000},
              token=tok, tenant="bench")
        exp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 365 * 86400))
        path = os.path.join(h.tmp, "users.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["username", "password", "profile", "expiration"])
            for i in range(1, USERS + 1):
                w.writerow([f"user{i:05d}", f"pass{i:05d}", "bench", exp])
        h.xr("import", "users", "--tenant", "bench", "--file", path, timeout=300)
        addr = f"127.0.0.1:{h.auth_port if a.mode == 'auth' else h.acct_port}"
        secs = int(a.duration.rstrip("s"))
        prof = {}

        def take():
            time.sleep(1)
            with urllib.request.urlopen(f"http://{PPROF}/debug/pprof/profile?seconds={secs - 2}") as r:
                prof["data"] = r.read()
        t = threading.Thread(target=take)
        t.start()
        r = subprocess.run([rl, "-mode", a.mode, "-addr", addr, "-secret", SECRET, "-users", str(USERS),
                            "-password", "pass{n}", "-concurrency", "64", "-duration", a.duration, "-json",
                            "-server-pid", str(h.proc.pid)], capture_output=True, text=True, timeout=120)
        t.join()
        print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:])
        m = h.req("GET", "/metrics", tenant=None)
        for line in (m.body.decode() if isinstance(m.body, bytes) else m.body).splitlines():
            if line.startswith(("radius_acct_batch_size_sum", "radius_acct_batch_size_count")):
                print(line)
        with open(a.out, "wb") as f:
            f.write(prof.get("data", b""))
        subprocess.run(["go", "tool", "pprof", "-top", "-nodecount", "40", h.bin, a.out])
        print(f"binary {h.bin}, profile {a.out}")
    finally:
        h.stop()
    return 0


def core(a, rl):
    """The radiusd core alone: its test binary serving the in-memory backend."""
    import signal, socket, tempfile
    tmp = tempfile.mkdtemp(prefix="xr-core-")
    binary = os.path.join(tmp, "radiusd.test")
    if subprocess.run(["go", "test", "-c", "-o", binary, "./radiusd"]).returncode:
        return 1
    ports = []
    for _ in range(2):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    env = dict(os.environ, XR_BENCH_SERVE=f"127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}", XR_BENCH_SECRET=SECRET)
    p = subprocess.Popen([binary, "-test.run=^TestServeMemChild$", f"-test.cpuprofile={a.out}"], env=env, cwd=tmp)
    time.sleep(1)
    addr = f"127.0.0.1:{ports[0] if a.mode == 'auth' else ports[1]}"
    r = subprocess.run([rl, "-mode", a.mode, "-addr", addr, "-secret", SECRET, "-users", str(USERS),
                        "-password", "pass{n}", "-concurrency", "64", "-duration", a.duration, "-json",
                        "-server-pid", str(p.pid)], capture_output=True, text=True, timeout=120)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:])
    subprocess.run(["go", "tool", "pprof", "-top", "-nodecount", "40", binary, a.out])
    return 0


if __name__ == "__main__":
    sys.exit(main())
