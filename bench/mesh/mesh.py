# SPDX-License-Identifier: MIT
"""`rnsc bench mesh`: many-node Reticulum topologies in network namespaces.

Each node is a network namespace holding one daemon (`rnsc daemon` or the reference's
`rnsd`, transport enabled) and one workload process (announcer.py, identical for both
daemons) attached to it over a local TCP interface. Links are veth pairs between the
namespaces, optionally shaped with tc netem. The runner announces every node's
destinations at once and measures, per run:

  convergence  time from the announce until every daemon has a path to every destination
               (polled over each daemon's shared-instance RPC, the reference's own protocol,
               which rnsc serves too), with the curve of known (node, destination) pairs;
  traffic      bytes on the mesh interfaces per node from the announce to convergence plus
               a settle period, and per minute;
  memory       resident set and its peak (VmRSS/VmHWM), private memory and CPU time of
               every daemon;
  path tables  read from each daemon's persisted table after a clean stop: every entry's
               hop count against the topology's shortest path (announcer -> daemon is one
               hop), and, between runs of the same shape, whether the tables agree (stated
               explicitly for a mixed run against an all-reference one);
  transfers    (--xfer N) links and one resource each between far-apart pairs (xfer.py):
               link establishment time and goodput by hop count, SHA-256 checked at the receiver;
  storm        (--storm N) a path-request storm (storm.py): half the nodes drop their paths
               to their N farthest destinations and a client of each asks for them all at
               once; path-request traffic per node, time to the answers, drops by reason;
  partition    (--partition S) the mesh cut in two for S seconds and healed: time until a
               probe across gets through and every link is back;
  recovery     the centre node killed and restarted (below).

Everything is bounded in time. Namespaces carry the runner's PID; a detached reaper removes
them when the runner exits for any reason (even SIGKILL), and every daemon gets
PR_SET_PDEATHSIG so it dies with the runner. --parallel runs the mixes side by side
(separate namespaces), for a quick check rather than for measurement.
"""
import argparse
import ctypes
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topology as topo_mod  # noqa: E402
import report as report_mod  # noqa: E402
import storm as storm_mod  # noqa: E402

MESH_PORT = 4242      # every link's server end
LOCAL_PORT = 4300     # the workload process's interface on the daemon
CLONE_NEWNET = 0x40000000
MESH_IFACE = re.compile(r"\blink\d+\b")  # the [[linkK]] interfaces and their children

libc = ctypes.CDLL(None, use_errno=True)


def log(msg):
    print(f"[mesh {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(*cmd, check=True, ns=None):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def in_ns_cmd(ns, cmd):
    """cmd run inside namespace ns, killed when the thread that started it goes away
    (setpriv sets PR_SET_PDEATHSIG, which survives the execs; no preexec_fn, so runs can
    start processes from several threads)."""
    return ["setpriv", "--pdeathsig", "KILL", "ip", "netns", "exec", ns] + list(cmd)


class InNs:
    """Runs the calling thread inside a namespace for the duration of a with-block: sockets
    created there stay in it."""
    _root = os.open("/proc/self/ns/net", os.O_RDONLY)  # at import, from the main thread

    def __init__(self, ns):
        self.ns = ns

    def __enter__(self):
        fd = os.open(f"/run/netns/{self.ns}", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {self.ns}")
        finally:
            os.close(fd)

    def __exit__(self, *exc):
        if libc.setns(InNs._root, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns back")


def ip4(k, end):
    """Addresses of link k: a /30 per link in 10.0.0.0/8."""
    v = (10 << 24) | (k * 4) + end
    return f"{v >> 24 & 255}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}"


class Node:
    def __init__(self, run, i, name, impl):
        self.run, self.i, self.name, self.impl = run, i, name, impl
        self.ns = f"{run.prefix}-{i}"
        self.dir = os.path.join(run.work, name)
        self.proc = None
        self.ann = None
        self.dests = []
        self.rpc_key = None

    # -- config ------------------------------------------------------------------------------
    def write_config(self):
        t = self.run.topo
        os.makedirs(self.dir, exist_ok=True)
        lines = ["[reticulum]", "  enable_transport = Yes", "  respond_to_probes = No",
                 "  share_instance = Yes", "  panic_on_interface_error = No",
                 "[logging]", "  loglevel = 2", "[interfaces]",
                 "  [[announcer]]", "    type = TCPServerInterface", "    enabled = Yes",
                 "    listen_ip = 127.0.0.1", f"    listen_port = {LOCAL_PORT}"]
        for k, (a, b, o) in enumerate(t.links):
            if self.i not in (a, b):
                continue
            mine, peer = (ip4(k, 1), ip4(k, 2)) if self.i == a else (ip4(k, 2), ip4(k, 1))
            lines += [f"  [[link{k}]]", "    enabled = Yes"]
            if o["iface"] == "udp":
                lines += ["    type = UDPInterface", f"    listen_ip = {mine}",
                          f"    listen_port = {MESH_PORT}", f"    forward_ip = {peer}",
                          f"    forward_port = {MESH_PORT}"]
            elif self.i == a:
                lines += ["    type = TCPServerInterface", f"    listen_ip = {mine}",
                          f"    listen_port = {MESH_PORT}"]
            else:
                lines += ["    type = TCPClientInterface", f"    target_host = {peer}",
                          f"    target_port = {MESH_PORT}"]
        with open(os.path.join(self.dir, "config"), "w") as f:
            f.write("\n".join(lines) + "\n")
        ad = os.path.join(self.dir, "announcer")
        os.makedirs(ad, exist_ok=True)
        with open(os.path.join(ad, "config"), "w") as f:
            f.write("\n".join([
                "[reticulum]", "  enable_transport = No", "  share_instance = No",
                "[logging]", "  loglevel = 2", "[interfaces]", "  [[daemon]]",
                "    type = TCPClientInterface", "    enabled = Yes",
                "    target_host = 127.0.0.1", f"    target_port = {LOCAL_PORT}"]) + "\n")

    # -- processes ---------------------------------------------------------------------------
    def start(self):
        if self.impl == "rnsc":
            cmd = [self.run.rnsc, "daemon", "--config", self.dir]
        else:
            cmd = [self.run.rnsd, "--config", self.dir]
        out = open(os.path.join(self.dir, "daemon.log"), "w")
        self.proc = subprocess.Popen(in_ns_cmd(self.ns, cmd), stdout=out,
                                     stderr=subprocess.STDOUT)

    def start_announcer(self, n):
        ad = os.path.join(self.dir, "announcer")
        out = open(os.path.join(ad, "announcer.log"), "w")
        self.ann = subprocess.Popen(in_ns_cmd(self.ns, [self.run.python, self.run.announcer, ad,
                                                        self.name, str(n)]),
                                    stdout=out, stderr=subprocess.STDOUT)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def established(self, port):
        out = sh("ss", "-Htn", "state", "established", ns=self.ns, check=False)
        return sum(1 for ln in out.splitlines() if f":{port} " in ln + " ")

    def client_dir(self, name):
        """A config directory for a short-lived client instance in this namespace, attached to
        the daemon like the workload process."""
        pd = os.path.join(self.dir, name)
        if not os.path.exists(os.path.join(pd, "config")):
            os.makedirs(pd, exist_ok=True)
            with open(os.path.join(self.dir, "announcer", "config")) as f:
                cfg = f.read()
            with open(os.path.join(pd, "config"), "w") as f:
                f.write(cfg)
        return pd

    def probe(self, dest_node, dest_hash, timeout):
        """The reference's rnprobe from this node's namespace (its own instance attached to
        the daemon like the workload) to a workload destination; True on a proof."""
        pd = self.client_dir("probe")
        try:
            r = subprocess.run(["ip", "netns", "exec", self.ns, self.run.rnprobe, "--config", pd,
                                f"rnscmesh.{dest_node}.0", dest_hash, "-t", str(timeout)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout + 20)
        except subprocess.TimeoutExpired:
            self.last_probe = "rnprobe did not exit"
            return False
        lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
        self.last_probe = f"exit {r.returncode}: {lines[-1] if lines else 'no output'}"
        return r.returncode == 0 and "Valid reply" in r.stdout

    def xfer(self, dest, size, seed, timeout):
        """xfer.py from this namespace: a link to dest's destination 0 and a resource of size
        bytes over it; its JSON line, checked against what dest's workload received."""
        pd = self.client_dir("xfer")
        cmd = ["ip", "netns", "exec", self.ns, self.run.python, self.run.xfer_py, pd, dest.name,
               dest.dests[0], str(size), str(seed), str(timeout)]
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=timeout + 30)
            out = json.loads(r.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, ValueError, IndexError) as e:
            return {"ok": False, "error": f"xfer.py gave no result ({type(e).__name__})"}
        if out.get("ok"):
            # the receiver appends its row when the resource has been assembled and proved
            rx = os.path.join(dest.dir, "announcer", "received.jsonl")
            end = time.monotonic() + 10
            got = None
            while got is None and time.monotonic() < end:
                try:
                    with open(rx) as f:
                        rows = [json.loads(ln) for ln in f if ln.strip()]
                    got = next((x for x in rows if x.get("sha256") == out["sha256"]), None)
                except (OSError, ValueError):
                    pass
                if got is None:
                    time.sleep(0.1)
            out["received_size"] = got["size"] if got else None
            out["sha256_equal"] = got is not None and got["size"] == size
            if not out["sha256_equal"]:
                out["ok"] = False
                out["error"] = "the receiver logged no resource with the sent size and SHA-256"
        return out

    def memory(self):
        m = {}
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for ln in f:
                    k, _, v = ln.partition(":")
                    if k in ("VmRSS", "VmHWM"):
                        m[k] = int(v.split()[0])
        except OSError:
            pass
        try:  # CPU time so far (utime + stime), seconds
            with open(f"/proc/{self.proc.pid}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            m["cpu_s"] = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
        # what the daemon itself owns (the rest of VmRSS is shared library text, shared by
        # every daemon of the same implementation on the host)
        try:
            with open(f"/proc/{self.proc.pid}/smaps_rollup") as f:
                for ln in f:
                    k, _, v = ln.partition(":")
                    if k in ("Private_Clean", "Private_Dirty"):
                        m["private"] = m.get("private", 0) + int(v.split()[0])
        except (OSError, ValueError, IndexError):
            pass
        return m

    # -- queries -----------------------------------------------------------------------------
    def _rpc(self, req):
        import multiprocessing.connection as mpc
        import RNS.vendor.umsgpack as mp
        if self.rpc_key is None:
            with open(os.path.join(self.dir, "storage", "transport_identity"), "rb") as f:
                self.rpc_key = hashlib.sha256(f.read()).digest()
        with InNs(self.ns):
            c = mpc.Client("\0rns/default/rpc", family="AF_UNIX", authkey=self.rpc_key)
        try:
            c.send_bytes(mp.packb(req))
            return mp.unpackb(c.recv_bytes())
        finally:
            c.close()

    def known(self, expected):
        """How many of the expected destinations this daemon has a path to (its path table
        over the shared-instance RPC, the query rnpath -t makes; rnsc serves it too)."""
        try:
            table = self._rpc({"get": "path_table", "max_hops": None})
            return sum(1 for e in table if e["hash"].hex() in expected)
        except Exception:
            return 0

    def traffic(self):
        """(rx, tx) bytes on the mesh interfaces, from the instance's interface_stats: the
        workload's interface is left out, and so are spawned children, whose bytes their
        parent server interface already counts."""
        rx = tx = 0
        per = {}
        try:
            st = self._rpc({"get": "interface_stats"})
            for f in st["interfaces"]:
                if "announcer" in f["name"] or f.get("parent_interface_name"):
                    continue
                rx += f["rxb"]
                tx += f["txb"]
                per[f["name"]] = f["txb"]
        except Exception as e:
            log(f"{self.name}: traffic query failed: {e}")
            return None
        return rx, tx, per

    def counters(self):
        """Path-request, announce and drop counters of the mesh interfaces (interface_stats
        over the RPC). Counted on spawned children and client interfaces, not on listeners:
        the reference's TCP server adds its children's path-request bytes to its own but not
        their counts. Drops: the reference's inbound queue drops by traffic class
        (rxq*d) and tx drops; rnsc's own transport and interface drop counters (it has no
        inbound queues and reports the rxq* fields as 0)."""
        try:
            st = self._rpc({"get": "interface_stats"})
        except Exception as e:
            log(f"{self.name}: interface_stats failed: {e}")
            return None
        c = dict.fromkeys(("prxc", "ptxc", "prxb", "ptxb", "arxc", "atxc", "arxb", "atxb",
                           "rxb", "txb"), 0)
        drops = {}
        bursts = 0
        ip_freq = 0.0
        for f in st["interfaces"]:
            names = f"{f.get('name', '')} {f.get('parent_interface_name') or ''}"
            if not MESH_IFACE.search(names) or f.get("clients") is not None:
                continue
            for k in c:
                c[k] += f.get(k) or 0
            drops["tx_dropped"] = drops.get("tx_dropped", 0) + (f.get("txdrp") or 0)
            for k, v in (f.get("rnsc_drops") or {}).items():
                drops[f"iface_{k}"] = drops.get(f"iface_{k}", 0) + v
            bursts += 1 if f.get("pr_burst_active") else 0
            ip_freq = max(ip_freq, float(f.get("incoming_pr_frequency") or 0))
        for k, name in (("rxqdd", "inbound_queue_data"), ("rxqad", "inbound_queue_announce"),
                        ("rxqpd", "inbound_queue_path_request"),
                        ("rxqild", "inbound_queue_ingress_limited")):
            if self.impl == "ref":
                drops[name] = st.get(k) or 0
        tr = (st.get("rnsc") or {}).get("transport") or {}
        for k, name in (("pr_duplicate", "pr_duplicate_tag"), ("duplicates", "packet_filter_duplicate"),
                        ("malformed", "malformed"), ("announces_ignored", "announce_not_taken")):
            if k in tr:
                drops[name] = tr[k]
        for k in ("pr_received", "pr_answered"):
            if k in tr:
                c[k] = tr[k]
        c["drops"] = drops
        c["pr_burst_active_ifaces"] = bursts
        c["max_incoming_pr_hz"] = round(ip_freq, 2)
        return c

    def drop_paths(self, hashes):
        """Drops paths over the RPC (what rnpath -d sends); how many the daemon had."""
        n = 0
        for h in hashes:
            try:
                if self._rpc({"drop": "path", "destination_hash": bytes.fromhex(h)}):
                    n += 1
            except Exception as e:
                log(f"{self.name}: drop path failed: {e}")
        return n

    def live_table(self):
        """{destination hash: hops} over the shared-instance RPC (the reference's rnpath -t
        query); None when the daemon does not answer it."""
        try:
            return {e["hash"].hex(): e["hops"]
                    for e in self._rpc({"get": "path_table", "max_hops": None})}
        except Exception:
            return None

    def persisted_table(self):
        import RNS.vendor.umsgpack as mp
        p = os.path.join(self.dir, "storage", "destination_table")
        try:
            with open(p, "rb") as f:
                rows = mp.unpackb(f.read())
        except (OSError, ValueError, TypeError) as e:
            log(f"{self.name}: no readable path table ({e})")
            return None
        return {r[0].hex(): r[3] for r in rows}

    def stop(self):
        for p in (self.ann, self.proc):
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in (self.ann, self.proc):
            if p:
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


class Run:
    def __init__(self, opts, topo, label, idx):
        self.opts, self.topo, self.label = opts, topo, label
        self.prefix = f"rm{os.getpid()}x{idx}"
        self.work = tempfile.mkdtemp(prefix=f"rnsc-mesh-{label}-", dir=opts.workdir)
        self.rnsc, self.rnsd, self.python = opts.rnsc, opts.rnsd, opts.python
        self.rnprobe = os.path.join(os.path.dirname(opts.python), "rnprobe")
        self.announcer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "announcer.py")
        self.xfer_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xfer.py")
        self.nodes = [Node(self, i, n, impl) for i, (n, impl) in enumerate(topo.nodes)]

    def reaper(self):
        names = " ".join(n.ns for n in self.nodes)
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                  f"for ns in {names}; do ip netns pids $ns 2>/dev/null | xargs -r kill -9; "
                  f"ip netns del $ns 2>/dev/null; done")
        subprocess.Popen(["setsid", "sh", "-c", script], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def build(self):
        self.reaper()
        for n in self.nodes:
            sh("ip", "netns", "add", n.ns)
            sh("ip", "-n", n.ns, "link", "set", "lo", "up")
        for k, (a, b, o) in enumerate(self.topo.links):
            na, nb = self.nodes[a], self.nodes[b]
            sh("ip", "link", "add", f"m{k}a", "netns", na.ns, "type", "veth", "peer", "name",
               f"m{k}b", "netns", nb.ns)
            for node, dev, end in ((na, f"m{k}a", 1), (nb, f"m{k}b", 2)):
                sh("ip", "-n", node.ns, "addr", "add", f"{ip4(k, end)}/30", "dev", dev)
                sh("ip", "-n", node.ns, "link", "set", dev, "up")
                netem = [x for kk in ("delay", "loss", "rate") if kk in o for x in (kk, o[kk])]
                if netem:
                    try:
                        sh("tc", "qdisc", "add", "dev", dev, "root", "netem", *netem, ns=node.ns)
                    except RuntimeError as e:
                        if "unknown" in str(e):
                            raise RuntimeError("tc netem is not available in this kernel (no "
                                               "sch_netem): links with delay, loss or rate "
                                               "cannot be shaped here") from None
                        raise

    def teardown(self):
        for n in self.nodes:
            if n.proc and n.proc.poll() is None:
                n.proc.kill()
            if n.ann and n.ann.poll() is None:
                n.ann.kill()
        for n in self.nodes:
            sh("ip", "netns", "del", n.ns, check=False)

    def wait_for(self, what, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            dead = [n.name for n in self.nodes if not n.alive()]
            if dead:
                raise RuntimeError(f"daemon(s) died while waiting for {what}: {', '.join(dead)}")
            time.sleep(0.25)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}")

    def recovery(self, o):
        """Kills the daemon at the topology's centre (SIGKILL), restarts it from its stored
        state and measures until its links are back and until a probe between two nodes whose
        shortest path crosses it gets a proof again (after the workload re-announces)."""
        t = self.topo
        hops = t.hops()
        n = len(self.nodes)
        centre = min(range(n), key=lambda i: (max(hops[i]), -t.degree(i)))
        pairs = [(hops[a][b], a, b) for a in range(n) for b in range(n)
                 if a != b and centre not in (a, b) and hops[a][centre] + hops[centre][b] == hops[a][b]]
        out = {"centre": self.nodes[centre].name, "ok": False}
        if not pairs:
            out["error"] = "no pair of nodes has a shortest path through the centre"
            return out
        _, a, b = max(pairs)
        na, nb, nc = self.nodes[a], self.nodes[b], self.nodes[centre]
        out.update({"from": na.name, "to": nb.name, "hops": hops[a][b]})
        # The baseline only shows the path works before the kill; one lost probe (a slow
        # client start on a loaded machine) is not the mesh's failure, three are.
        for attempt in range(1, 4):
            if na.probe(nb.name, nb.dests[0], 15):
                break
            log(f"{self.label}: recovery: baseline probe {na.name} -> {nb.name} attempt "
                f"{attempt} got no proof ({getattr(na, 'last_probe', '')})")
        else:
            out["error"] = f"baseline probe {na.name} -> {nb.name} failed 3 times"
            log(f"{self.label}: recovery FAILED: {out['error']}")
            return out
        out["baseline_attempts"] = attempt
        nc.proc.kill()
        nc.proc.wait()
        time.sleep(1)
        t0 = time.monotonic()
        nc.start()
        deg = sum(1 for x, y, f in t.links if centre in (x, y) and f["iface"] == "tcp")
        end = t0 + o.timeout
        while time.monotonic() < end and nc.established(MESH_PORT) < deg:
            time.sleep(0.25)
        out["links_s"] = round(time.monotonic() - t0, 2)
        # A restarted transport node knows no paths it had not yet stored, and nodes that
        # route through it keep their paths: nothing heals until the destinations announce
        # again (in both implementations). The workload re-announces once the links are up,
        # as applications do periodically.
        for x in self.nodes:
            x.ann.send_signal(signal.SIGUSR1)
        end = time.monotonic() + min(o.timeout, 60)
        while time.monotonic() < end:
            if na.probe(nb.name, nb.dests[0], 5):
                out["probe_s"] = round(time.monotonic() - t0, 2)
                out["ok"] = True
                break
        # ... and until every daemon knows every destination again (the restarted node's
        # interfaces are new: ingress control holds the re-announce burst and releases it
        # one announce per 5 s, IC_HELD_RELEASE_INTERVAL, so this takes minutes, not seconds)
        reconv = min(o.timeout, 600)
        while out["ok"] and time.monotonic() < end + reconv:
            if all(x.known(self.expected) >= len(self.expected) for x in self.nodes):
                out["reconverged_s"] = round(time.monotonic() - t0, 2)
                break
            time.sleep(o.poll)
        else:
            if out["ok"]:
                out["ok"] = False
                out["error"] = f"the mesh did not reconverge within {reconv:.0f} s of the probe"
        if not out["ok"] and "error" not in out:
            out["error"] = (f"no probe {na.name} -> {nb.name} got through within "
                            f"{min(o.timeout, 60)} s of the re-announce")
        log(f"{self.label}: recovery after killing {nc.name}: links {out['links_s']} s, "
            f"probe {out.get('probe_s', 'never')}, reconverged {out.get('reconverged_s', 'never')}")
        return out

    def transfers(self, o):
        """Links and resource transfers between far-apart pairs (seeded): one pair at the
        topology's diameter, the others spread over the longer distances; one transfer at a
        time so each measures the mesh alone."""
        import random
        hops = self.topo.hops()
        n = len(self.nodes)
        rng = random.Random(o.seed)
        by = {}
        for a in range(n):
            for b in range(n):
                if a != b:
                    by.setdefault(hops[a][b], []).append((a, b))
        dists = sorted(by, reverse=True)
        diam = dists[0]
        want = [diam]
        lo = max(1, (diam + 1) // 2)
        for k in range(1, o.xfer):
            want.append(round(diam - k * (diam - lo) / max(1, o.xfer - 1)))
        rows = []
        for k, d in enumerate(want):
            d = min((x for x in dists), key=lambda x: (abs(x - d), -x))
            a, b = rng.choice(by[d])
            na, nb = self.nodes[a], self.nodes[b]
            row = {"from": na.name, "to": nb.name, "node_hops": d,
                   "from_impl": na.impl, "to_impl": nb.impl}
            row.update(na.xfer(nb, o.xfer_size, o.seed * 1000 + k, o.xfer_timeout))
            rows.append(row)
            log(f"{self.label}: transfer {na.name} -> {nb.name} ({d} node hops): "
                + (f"link {row['link_s']} s, {o.xfer_size} B in {row['transfer_s']} s "
                   f"({row['goodput_Bps'] / 1024:.1f} KiB/s), SHA-256 equal"
                   if row["ok"] else f"FAILED: {row.get('error')}"))
        return rows

    def storm(self, o):
        """A path-request storm (storm.py): half the mesh forgets its paths and asks for them
        all at once.

        Requesters are a maximal independent set of the topology, picked greedily in node
        order (on a grid the checkerboard, on a line every other node), so every neighbour of a
        requester keeps its table and can answer: in the reference, and in rnsc, a transport
        node answers a path request from its path table or forwards it to its local clients,
        and forwards it to the other interfaces only when it comes from a local client; it does
        not search further (recursive discovery is for interfaces in access point, gateway,
        roaming or boundary mode, or with recursive_prs, none of which the mesh uses). So a
        request from a client whose daemon has no path goes out once on every mesh interface of
        that daemon and the neighbours answer with path responses after PATH_REQUEST_GRACE
        (0.4 s). Each requester's daemon drops the paths to its --storm N farthest destinations
        (RPC drop path, as rnpath -d; the drop takes effect at the daemon's next table cull,
        so the runner waits until they are gone), then a driver on its shared instance sends
        one request per destination, all at once, every requester at the same moment.

        Measured: path-request and announce packets and bytes on the mesh interfaces per node
        over the storm (interface_stats), time from the write to each answer at the client,
        answers missing at the storm timeout, drops by reason as the daemons report them, and
        whether path-request ingress control engaged (Interface.IC_PR_BURST_FREQ_NEW: more than
        3 requests/s on an interface younger than 2 h)."""
        import random
        t, n = self.topo, len(self.nodes)
        hops = t.hops()
        nbrs = {i: set() for i in range(n)}
        for a, b, _ in t.links:
            nbrs[a].add(b)
            nbrs[b].add(a)
        req, taken = [], set()
        for i in range(n):
            if i not in taken:
                req.append(i)
                taken |= {i} | nbrs[i]
        rng = random.Random(o.seed)
        owner_of = {h: x.i for x in self.nodes for h in x.dests}
        targets = {}
        for i in req:
            far = [h for x in self.nodes if x.i != i for h in x.dests]
            rng.shuffle(far)  # seeded tie-break between equally far destinations
            far.sort(key=lambda h: -hops[i][owner_of[h]])
            targets[i] = far[:o.storm]
        total = sum(len(v) for v in targets.values())
        out = {"requesters": [self.nodes[i].name for i in req], "per_requester": o.storm,
               "requests": total, "ok": False}
        if not total:
            out["error"] = "no destinations to request"
            return out
        base = {x.name: x.counters() for x in self.nodes}
        dropped = {i: self.nodes[i].drop_paths(targets[i]) for i in req}
        out["paths_dropped"] = sum(dropped.values())
        # A path an announce still in flight (a held announce released, a retransmission)
        # brings back is dropped again.
        t0 = time.monotonic()
        while True:
            time.sleep(1)
            left = 0
            for i in req:
                tab = self.nodes[i].live_table() or {}
                back = [h for h in targets[i] if h in tab]
                left += len(back)
                if back and time.monotonic() - t0 < 8:
                    self.nodes[i].drop_paths(back)
            if not left or time.monotonic() - t0 >= 10:
                break
        out["drop_wait_s"] = round(time.monotonic() - t0, 2)
        out["still_known_at_start"] = left
        log(f"{self.label}: storm: {len(req)} requesters dropped {out['paths_dropped']} paths "
            f"({left} still known after {out['drop_wait_s']} s); requesting {total} at once")
        drv = storm_mod.Storm({self.nodes[i].name: (self.nodes[i].ns, targets[i]) for i in req}, InNs)
        start = time.monotonic()
        res = drv.run(o.storm_timeout)
        ans_s = time.monotonic() - start
        # counters once the answers are in and the path responses settled
        time.sleep(max(0.0, o.storm_settle))
        window = time.monotonic() - start
        after = {x.name: x.counters() for x in self.nodes}
        times = sorted(v for r in res.values() for v in r["answered"].values())
        answered = len(times)
        out.update({"answered": answered, "unanswered": total - answered,
                    "all_answered_s": round(times[-1], 3) if answered == total else None,
                    "answer_median_s": times[len(times) // 2] if times else None,
                    "answer_p90_s": times[min(len(times) - 1, int(len(times) * 0.9))] if times else None,
                    "answer_max_s": times[-1] if times else None,
                    "answer_phase_s": round(ans_s, 2), "window_s": round(window, 2),
                    "disconnected_drivers": sum(1 for r in res.values() if r["disconnected"])})
        # paths back at the requesters' daemons
        back = 0
        for i in req:
            tab = self.nodes[i].live_table() or {}
            back += sum(1 for h in targets[i] if h in tab)
        out["restored_at_daemons"] = back
        out["unanswered_list"] = [f"{k} -> {self.nodes[owner_of[h]].name}.{self.nodes[owner_of[h]].dests.index(h)}"
                                  for k, r in res.items() for h in r["unanswered"]]
        if back < total:
            # what the storm left unanswered comes back when the destinations announce
            # again: every workload re-announces, so the later phases and the final tables
            # start from a converged mesh
            for x in self.nodes:
                x.ann.send_signal(signal.SIGUSR1)
            t1 = time.monotonic()
            while time.monotonic() - t1 < min(o.timeout, 180):
                if all(x.known(self.expected) >= len(self.expected) for x in self.nodes):
                    out["reconverged_after_reannounce_s"] = round(time.monotonic() - t1, 2)
                    break
                time.sleep(o.poll)
        per = []
        for x in self.nodes:
            b, a = base.get(x.name), after.get(x.name)
            row = {"name": x.name, "impl": x.impl, "requester": x.name in res}
            if b and a:
                for k in ("prxc", "ptxc", "prxb", "ptxb", "arxc", "atxc", "arxb", "atxb",
                          "rxb", "txb", "pr_received", "pr_answered"):
                    if k in a and k in b:
                        row[k] = a[k] - b[k]
                row["pr_bytes_per_min"] = round((row["prxb"] + row["ptxb"]) * 60 / window)
                row["pr_packets_per_min"] = round((row["prxc"] + row["ptxc"]) * 60 / window)
                row["drops"] = {k: v - b["drops"].get(k, 0) for k, v in a["drops"].items()
                                if v - b["drops"].get(k, 0)}
                row["pr_burst_active_ifaces"] = a["pr_burst_active_ifaces"]
                row["max_incoming_pr_hz"] = a["max_incoming_pr_hz"]
            if x.name in res:
                r = res[x.name]
                row["requested"] = len(targets[x.i])
                row["answered"] = len(r["answered"])
                row["answer_max_s"] = max(r["answered"].values()) if r["answered"] else None
                row["prs_forwarded_to_client"] = r["forwarded_prs"]
            per.append(row)
        out["per_node"] = per
        sums = {}
        for row in per:
            for k, v in row.get("drops", {}).items():
                sums[k] = sums.get(k, 0) + v
        out["drops"] = sums
        out["pr_burst_ifaces"] = sum(r.get("pr_burst_active_ifaces", 0) for r in per)
        for k in ("ptxc", "prxc", "ptxb", "prxb", "atxc", "atxb"):
            out[f"total_{k}"] = sum(r.get(k, 0) for r in per)
        out["ok"] = out["disconnected_drivers"] == 0
        if not out["ok"]:
            out["error"] = "a daemon closed a storm driver's connection"
        log(f"{self.label}: storm: {answered}/{total} answered (median "
            f"{out['answer_median_s']} s, max {out['answer_max_s']} s); {out['total_ptxc']} path "
            f"requests ({out['total_ptxb']} B) sent on mesh interfaces, {out['total_atxc']} announces "
            f"back; drops {sums or 'none'}")
        return out

    def partition(self, o):
        """Cuts the mesh in two (nodes 0..n/2-1 against the rest: for a grid, the upper rows
        against the lower) by setting every crossing veth down at both ends, has every
        workload re-announce while it is cut, waits o.partition seconds, heals it and measures
        until a probe between the farthest pair across the cut gets a proof, and until the
        daemons' links are all established again."""
        t, n = self.topo, len(self.nodes)
        side = set(range(n // 2))
        cut = [k for k, (a, b, _) in enumerate(t.links) if (a in side) != (b in side)]
        out = {"cut_links": len(cut), "partition_s": o.partition, "ok": False}
        hops = t.hops()
        a, b = max(((x, y) for x in side for y in range(n) if y not in side),
                   key=lambda p: hops[p[0]][p[1]])
        na, nb = self.nodes[a], self.nodes[b]
        out.update({"from": na.name, "to": nb.name, "hops": hops[a][b]})

        def setlinks(state):
            for k in cut:
                x, y, _ = t.links[k]
                sh("ip", "-n", self.nodes[x].ns, "link", "set", f"m{k}a", state)
                sh("ip", "-n", self.nodes[y].ns, "link", "set", f"m{k}b", state)
        setlinks("down")
        t0 = time.monotonic()
        for x in self.nodes:
            x.ann.send_signal(signal.SIGUSR1)
        out["probe_during_cut"] = na.probe(nb.name, nb.dests[0], min(5, o.partition))
        time.sleep(max(0, o.partition - (time.monotonic() - t0)))
        setlinks("up")
        t0 = time.monotonic()
        end = t0 + min(o.timeout, 120)
        tcp = [(x, y) for x, y, f in t.links if f["iface"] == "tcp"]
        while time.monotonic() < end:
            if all(x.established(MESH_PORT) >= sum(1 for p, q in tcp if x.i in (p, q))
                   for x in self.nodes):
                out["links_s"] = round(time.monotonic() - t0, 2)
                break
            time.sleep(0.5)
        # A cut longer than the TCP interfaces' dead-peer time (~30 s) tears the connections
        # down: the paths learnt over them go with the interfaces (the reference culls paths
        # whose interface is gone; rnsc was seen to lose them too),
        # and come back only when the destinations announce again. So: a probe without a
        # re-announce first (short cuts: the connections survive), then one after it.
        t1 = time.monotonic()
        while time.monotonic() < min(end, t1 + 15):
            if na.probe(nb.name, nb.dests[0], 3):
                out["probe_s"] = round(time.monotonic() - t0, 2)
                break
        out["reannounced"] = "probe_s" not in out
        if out["reannounced"]:
            for x in self.nodes:
                x.ann.send_signal(signal.SIGUSR1)
            while time.monotonic() < end:
                if na.probe(nb.name, nb.dests[0], 5):
                    out["probe_s"] = round(time.monotonic() - t0, 2)
                    break
        out["ok"] = "probe_s" in out and not out["probe_during_cut"]
        if "probe_s" not in out:
            out["error"] = f"no probe {na.name} -> {nb.name} got through after the heal"
        elif out["probe_during_cut"]:
            out["error"] = "a probe got across the cut while it was down"
        log(f"{self.label}: partition ({len(cut)} links cut for {o.partition} s) healed: probe "
            f"{na.name} -> {nb.name} after {out.get('probe_s', 'never')} s"
            f"{' (after a re-announce)' if out['reannounced'] else ''}, links "
            f"{out.get('links_s', 'not all')} s")
        return out

    def execute(self):
        o, t = self.opts, self.topo
        rec = {"label": self.label, "topology": t.name, "description": t.describe(),
               "nodes": len(t.nodes), "links": len(t.links),
               "impls": {i: sum(1 for _, x in t.nodes if x == i) for i in topo_mod.IMPLS},
               "destinations_per_node": o.destinations, "ok": False}
        t0 = time.monotonic()
        try:
            self.build()
            for n in self.nodes:
                n.write_config()
                n.start()
            tcp_links = [(a, b) for a, b, x in t.links if x["iface"] == "tcp"]

            def links_up():
                return all(n.established(MESH_PORT) >= sum(1 for a, b in tcp_links if n.i in (a, b))
                           for n in self.nodes)
            self.wait_for("every link to connect", links_up, o.setup_timeout)
            rec["setup_s"] = round(time.monotonic() - t0, 2)
            for n in self.nodes:
                n.start_announcer(o.destinations)

            def announcers_up():
                for n in self.nodes:
                    if not os.path.exists(os.path.join(n.dir, "announcer", "dests.json")):
                        return False
                    if n.established(LOCAL_PORT) < 2:
                        return False
                return True
            self.wait_for("the workload processes", announcers_up, o.setup_timeout)
            owner = {}
            for n in self.nodes:
                with open(os.path.join(n.dir, "announcer", "dests.json")) as f:
                    n.dests = json.load(f)
                for k, h in enumerate(n.dests):
                    owner[h] = (n.i, k)
            expected = set(owner)
            self.expected = expected
            base = {n.name: n.traffic() for n in self.nodes}
            log(f"{self.label}: {len(self.nodes)} nodes, {len(t.links)} links up in "
                f"{rec['setup_s']} s; announcing {len(expected)} destinations")
            start = time.monotonic()
            for n in self.nodes:
                n.ann.send_signal(signal.SIGUSR1)
            curve, total = [], len(expected) * len(self.nodes)
            known = {}
            converged = None
            while time.monotonic() - start < o.timeout:
                known = {n.name: n.known(expected) for n in self.nodes}
                el = time.monotonic() - start
                frac = sum(known.values()) / total
                curve.append([round(el, 3), round(frac, 5)])
                if frac >= 1.0:
                    converged = el
                    break
                if not all(n.alive() for n in self.nodes):
                    break
                time.sleep(o.poll)
            # per-interface transmit at convergence: the announce burst's rate, for the
            # comparison with the reference's announce cap (2 % of the interface's bitrate)
            conv_tr = {n.name: n.traffic() for n in self.nodes} if converged is not None else {}
            rec["curve"] = curve
            rec["converged"] = converged is not None
            rec["convergence_s"] = round(converged, 3) if converged is not None else None
            # Traffic over the same window for every run (and at least the settle time past
            # convergence), so bytes per minute compare across implementations.
            time.sleep(max(o.settle, o.window - (time.monotonic() - start)))
            window = time.monotonic() - start
            rec["traffic_window_s"] = round(window, 2)
            per = []
            for n in self.nodes:
                tr = n.traffic()
                b0 = base[n.name]
                row = {"name": n.name, "impl": n.impl, "alive": n.alive(),
                       "known": known.get(n.name, 0), "expected": len(expected)}
                mem = n.memory()
                row["rss_kib"], row["hwm_kib"] = mem.get("VmRSS"), mem.get("VmHWM")
                row["private_kib"] = mem.get("private")
                row["cpu_s"] = mem.get("cpu_s")
                if tr and b0:
                    row["rx_bytes"], row["tx_bytes"] = tr[0] - b0[0], tr[1] - b0[1]
                    row["bytes_per_min"] = round((row["rx_bytes"] + row["tx_bytes"]) * 60 / window)
                    row["max_iface_tx_Bps"] = round(max(
                        [(v - b0[2].get(k, 0)) / window for k, v in tr[2].items()] + [0]), 1)
                    ct = conv_tr.get(n.name)
                    if ct and converged:
                        row["max_iface_tx_Bps_to_convergence"] = round(max(
                            [(v - b0[2].get(k, 0)) / converged for k, v in ct[2].items()] + [0]), 1)
                per.append(row)
            if o.xfer and converged is not None:
                rec["transfers"] = self.transfers(o)
            # The recovery before the storm and the partition: each step starts from a mesh
            # where every daemon knows every destination (the recovery waits for that again).
            # After a storm the reference's own mesh has held paths on which three probes in
            # a row went unanswered, so a baseline probe there measured the storm's after-
            # effects, not the kill.
            if o.recovery:
                rec["recovery"] = self.recovery(o)
            if o.storm and converged is not None:
                try:
                    rec["storm"] = self.storm(o)
                except Exception as e:  # the storm's failure is its own, not the run's setup
                    log(f"{self.label}: storm FAILED: {e}")
                    rec["storm"] = {"ok": False, "error": f"storm: {e}", "requesters": [],
                                    "requests": 0, "per_requester": o.storm}
            if o.partition and converged is not None:
                rec["partition"] = self.partition(o)
            # Tables are read live where the daemon answers the reference's RPC (a daemon
            # that has stopped forgets paths learnt from peers already gone), else from
            # what it persisted at a clean stop.
            live = {n.i: n.live_table() for n in self.nodes}
            for n in self.nodes:
                n.stop()
            hops = t.hops()
            mism = 0
            tables = {}
            for n, row in zip(self.nodes, per):
                tab = live[n.i]
                row["table_source"] = "rpc" if tab is not None else "persisted"
                if tab is None:
                    tab = n.persisted_table()
                if tab is None:
                    row["table"] = None
                    continue
                mine = {}
                for h, hp in tab.items():
                    if h in owner:
                        j, k = owner[h]
                        mine[f"{j}.{k}"] = hp
                        if hp != hops[n.i][j] + 1:
                            mism += 1
                row["table_entries"] = len(mine)
                tables[n.i] = mine
            rec["per_node"] = per
            rec["tables"] = {str(k): v for k, v in tables.items()}
            rec["tables_complete"] = all(len(v) == len(expected) for v in tables.values()) and \
                len(tables) == len(self.nodes)
            rec["non_shortest_entries"] = mism
            rec["ok"] = rec["converged"] and rec["tables_complete"] and \
                all(r["alive"] for r in per) and rec.get("recovery", {"ok": True})["ok"] and \
                rec.get("partition", {"ok": True})["ok"] and \
                rec.get("storm", {"ok": True})["ok"] and \
                all(x["ok"] for x in rec.get("transfers", [])) and \
                (not o.xfer or "transfers" in rec)
        except Exception as e:
            rec["error"] = str(e)
            log(f"{self.label}: FAILED: {e}")
        finally:
            for n in self.nodes:
                if n.proc or n.ann:
                    try:
                        n.stop()
                    except Exception:
                        pass
            self.teardown()
            rec["elapsed_s"] = round(time.monotonic() - t0, 2)
            if not o.keep:
                shutil.rmtree(self.work, ignore_errors=True)
            else:
                rec["workdir"] = self.work
        return rec


def environment(opts):
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "kernel": platform.release(), "cpus": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        env["load_before"] = os.getloadavg()[0]
        env["reference"] = sh(opts.python, "-c", "import RNS; print(RNS.__version__)").strip()
        env["rnsc"] = sh(opts.rnsc, "--version", check=False).strip().splitlines()[0]
    except (RuntimeError, IndexError, OSError):
        pass
    return env


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="rnsc bench mesh",
        description="Build Reticulum meshes of rnsc and reference daemons in network namespaces "
                    "(needs root and iproute2), announce every node's destinations and measure "
                    "convergence, traffic, memory and path tables.",
        epilog="Topologies: line:N ring:N star:N grid:RxC random:N[:EXTRA], or --file with "
               "'node NAME rnsc|ref' and 'link A B [iface=tcp|udp delay=.. loss=.. rate=..]' lines. "
               "--quick runs a 10-node grid (2x5) mixed, all-reference and all-rnsc, "
               "compares their path tables, sends one 256 KiB resource across the diameter and "
               "has half the nodes drop and re-request their paths to the 2 farthest "
               "destinations (--storm 2); its timeouts are generous (convergence 240 s) because "
               "the three meshes share the machine.")
    ap.add_argument("--rnsc", required=True, help="the rnsc binary (set by `rnsc bench mesh`)")
    ap.add_argument("--python", default=sys.executable, help="the venv's python (reference)")
    ap.add_argument("--topology", default="grid:2x5", metavar="SPEC")
    ap.add_argument("--file", help="a topology description file (instead of --topology)")
    ap.add_argument("--mix", default="mixed", help="rnsc, ref, mixed or a comma list of them "
                    "(one run each on the same shape)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iface", default="tcp", choices=topo_mod.IFACES)
    ap.add_argument("--destinations", type=int, default=4, metavar="N",
                    help="destinations announced per node (default 4)")
    ap.add_argument("--timeout", type=float, default=120, help="convergence timeout, s")
    ap.add_argument("--setup-timeout", type=float, default=60)
    ap.add_argument("--settle", type=float, default=5, help="traffic window after convergence, s")
    ap.add_argument("--window", type=float, default=30,
                    help="traffic is counted from the announce for this long (or until "
                    "convergence plus --settle, if later), s")
    ap.add_argument("--no-recovery", dest="recovery", action="store_false",
                    help="skip killing and restarting the centre node")
    ap.add_argument("--xfer", type=int, default=0, metavar="N",
                    help="after convergence, N links with one resource each between far-apart "
                    "node pairs (seeded; one at the diameter), measuring link establishment and "
                    "goodput by hop count")
    ap.add_argument("--xfer-size", type=int, default=512 * 1024, metavar="BYTES")
    ap.add_argument("--xfer-timeout", type=float, default=120, metavar="S")
    ap.add_argument("--partition", type=float, default=0, metavar="S",
                    help="after convergence, cut the mesh in two for S seconds (crossing veths "
                    "down, a re-announce while cut), heal it and time a probe across")
    ap.add_argument("--storm", type=int, default=0, metavar="N",
                    help="after convergence (and the transfers), a path-request storm: half the "
                    "nodes (a maximal independent set) drop their paths to their N farthest "
                    "destinations (more than there are: all) and ask for them all at once from "
                    "a client of their shared instance; measures path-request traffic, time to "
                    "the answers and drops")
    ap.add_argument("--storm-timeout", type=float, default=30, metavar="S",
                    help="how long the drivers wait for the answers")
    ap.add_argument("--storm-settle", type=float, default=5, metavar="S",
                    help="counters are read this long after the last answer")
    ap.add_argument("--poll", type=float, default=0.25)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parallel", action="store_true",
                    help="run the mixes at the same time (a check, not a measurement)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--report", metavar="DIR", help="write mesh.md, mesh.json and SVGs here")
    ap.add_argument("--keep", action="store_true", help="keep the node directories")
    ap.add_argument("--workdir", default=None, help="where node directories go (default TMPDIR)")
    o = ap.parse_args(argv)
    if o.quick:
        o.topology, o.file, o.mix, o.parallel = "grid:2x5", None, "mixed,ref,rnsc", True
        o.destinations, o.timeout, o.settle, o.window = 2, 240, 2, 30
        o.xfer, o.xfer_size = max(o.xfer, 1), min(o.xfer_size, 256 * 1024)
        o.storm, o.storm_timeout, o.storm_settle = max(o.storm, 2), min(o.storm_timeout, 15), 2
    if os.geteuid() != 0:
        print("rnsc bench mesh: network namespaces need root", file=sys.stderr)
        return 2
    if not shutil.which("ip") or not shutil.which("tc") or not shutil.which("ss"):
        print("rnsc bench mesh: needs iproute2 (ip, tc, ss)", file=sys.stderr)
        return 2
    o.rnsd = os.path.join(os.path.dirname(o.python), "rnsd")
    for p in (o.rnsc, o.python, o.rnsd):
        if not os.access(p, os.X_OK):
            print(f"rnsc bench mesh: {p} is not executable", file=sys.stderr)
            return 2
    runs = []
    try:
        mixes = o.mix.split(",")
        for k, mix in enumerate(mixes):
            if o.file:
                with open(o.file) as f:
                    t = topo_mod.parse(f.read(), o.file)
                label = os.path.basename(o.file)
            else:
                t = topo_mod.generate(o.topology, mix, o.seed, o.iface)
                label = mix
            if mixes.count(mix) > 1:  # the same mix twice (e.g. ref,ref): ref-1, ref-2
                label = f"{label}-{mixes[:k + 1].count(mix)}"
            runs.append((label, t))
    except (topo_mod.TopologyError, OSError) as e:
        print(f"rnsc bench mesh: {e}", file=sys.stderr)
        return 2
    env = environment(o)
    out = {"environment": env, "settings": {k: getattr(o, k) for k in (
        "topology", "file", "mix", "seed", "iface", "destinations", "timeout", "settle", "window", "poll", "recovery", "parallel", "xfer", "xfer_size", "partition",
        "storm", "storm_timeout", "storm_settle", "quick")},
        "runs": []}
    def one(idx):
        label, t = runs[idx]
        log(f"run {label}: {t.name}")
        rec = Run(o, t, label, idx).execute()
        log(f"run {label}: {'converged in %.2f s' % rec['convergence_s'] if rec.get('converged') else 'did NOT converge'}"
            f"{'' if rec['ok'] else ' — FAILED: ' + rec.get('error', 'incomplete tables or a dead daemon')}")
        return rec
    if o.parallel and len(runs) > 1:
        import concurrent.futures as cf
        with cf.ThreadPoolExecutor(len(runs)) as ex:
            out["runs"] = list(ex.map(one, range(len(runs))))
    else:
        out["runs"] = [one(i) for i in range(len(runs))]
    report_mod.compare(out)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(out, f, indent=1)
    if o.report:
        report_mod.write(out, o.report)
    print(report_mod.markdown(out))
    return 0 if all(r["ok"] for r in out["runs"]) and out.get("tables_agree", True) else 1


if __name__ == "__main__":
    sys.exit(main())
