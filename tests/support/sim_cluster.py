"""One `aiperf-node sim-cluster` for a Python end-to-end test, and the
kubectl / CLI calls against it.

    sim = SimCluster(workdir, node_bin, workloads=True, audit=True)
    sim.kubectl("get", "pods")          # KUBECONFIG and HOME point into workdir
    sim.kube("list")                    # aiperf-node kube ...
    sim.stop()                          # SIGTERM; returns the exit code

The simulator prints `listening on http[s]://127.0.0.1:PORT` first and,
with --workloads, a second line naming the pod network; both are awaited
(30 s) before the constructor returns. Its stderr goes to workdir/sim.log
(`sim.log()` returns the tail, for failure messages).
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def skip_or_fail(why):
    """Exit 77 (ctest: skipped), or 1 under CI=true, where a skip is a failure."""
    if os.environ.get("CI") == "true":
        print("CI=true, so this test fails instead of skipping: " + why, file=sys.stderr)
        sys.exit(1)
    print("skipped: " + why, file=sys.stderr)
    sys.exit(77)


def require_root_and_kubectl(workloads=True):
    if workloads and os.geteuid() != 0:
        skip_or_fail("needs root for the simulator's pod sandbox (network namespaces)")
    if not os.path.exists(KUBECTL):
        skip_or_fail("kubectl not found (tools/bootstrap installs it)")


class SimCluster:
    def __init__(self, workdir, node_bin, tls=True, workloads=False, audit=False,
                 extra_args=()):
        self.node_bin = node_bin
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.audit_path = os.path.join(workdir, "audit.log") if audit else None
        self.home = os.path.join(workdir, "home")
        self.cwd = os.path.join(workdir, "cwd")
        self.log_path = os.path.join(workdir, "sim.log")
        # Pod files go to a temporary folder under TMPDIR: the test's, so
        # that what a SIGKILL leaves behind goes with it.
        self.tmp = tmp = os.path.join(workdir, "tmp")
        for d in (self.home, self.cwd, tmp):
            os.makedirs(d, exist_ok=True)
        args = [node_bin, "sim-cluster", "--kubeconfig", self.kubeconfig]
        if tls:
            args.append("--tls")
        if workloads:
            args.append("--workloads")
        if audit:
            args += ["--audit-log", self.audit_path]
        args += list(extra_args)
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, bufsize=0,
                                         env=dict(os.environ, TMPDIR=tmp))
        first = self.readline(30)
        prefix = "listening on http%s://127.0.0.1:" % ("s" if tls else "")
        if not first.startswith(prefix):
            raise RuntimeError("sim-cluster printed %r; log:\n%s" % (first, self.log()))
        self.url = first[len("listening on "):]
        # "pod network 10.x.0.0/16 gateway 10.x.0.1"
        self.pod_network = self.readline(30) if workloads else None
        self.env = dict(os.environ, KUBECONFIG=self.kubeconfig, HOME=self.home)

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.proc.stdout], [], [],
                                        max(deadline - time.monotonic(), 0))
            if not ready:
                raise RuntimeError("sim-cluster printed %r within %d s" % (line, timeout))
            byte = os.read(self.proc.stdout.fileno(), 1)
            if not byte:
                raise RuntimeError("sim-cluster exited; log:\n%s" % self.log())
            line += byte
        return line.decode().strip()

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def run(self, args, timeout=60, stdin=None, env=None):
        return subprocess.run(args, capture_output=True, text=True,
                              env=dict(self.env, **(env or {})), cwd=self.cwd, timeout=timeout,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)

    def popen(self, args, env=None):
        """A process against the simulator whose output is collected later."""
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(self.env, **(env or {})), cwd=self.cwd,
                                stdin=subprocess.DEVNULL)

    def kube(self, *args, timeout=60):
        return self.run([self.node_bin, "kube", *args], timeout=timeout)

    def kubectl(self, *args, stdin=None):
        return self.run([KUBECTL, *args], stdin=stdin)

    def kubectl_ok(self, *args, stdin=None):
        """kubectl that must succeed (AssertionError with its stderr otherwise)."""
        r = self.kubectl(*args, stdin=stdin)
        if r.returncode != 0:
            raise AssertionError("kubectl %s: %s" % (" ".join(args), r.stderr))
        return r

    def kubectl_json(self, *args):
        r = self.kubectl(*args, "-o", "json")
        if r.returncode != 0:
            raise AssertionError("kubectl %s: %s" % (" ".join(args), r.stderr))
        return json.loads(r.stdout)

    def ctl(self, *args):
        """`aiperf-node sim-cluster ctl ...`: the simulator's fault injection."""
        return self.run([self.node_bin, "sim-cluster", "ctl", "--kubeconfig", self.kubeconfig,
                         *args])

    def audit(self):
        with open(self.audit_path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)

    def stop_ok(self):
        """SIGTERM, which the simulator must answer by exiting 0."""
        code = self.stop()
        if code != 0:
            raise AssertionError("sim-cluster exited %d; log:\n%s" % (code, self.log()))
