#!/usr/bin/python3
"""The real kubectl (1.32) and python3-kubernetes against `aiperf-node sim-cluster --tls`.

Usage: conformance.py path/to/aiperf-node [unittest args]

Every check runs the clients as a user would and compares what they print or
raise with what they print against a real kube-apiserver. Exits 77 (ctest:
skipped) when kubectl or python3-kubernetes is missing; with CI=true that is a
failure instead.

Checks marked expectedFailure are behaviour the simulator does not serve yet;
when it starts to, unittest reports an unexpected success and the mark must go.
"""

import base64
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "support"))
from sim_cluster import KUBECTL, SimCluster, skip_or_fail  # noqa: E402

NODE_BIN = None


SIM = None


def kubectl(*args, stdin=None, check=False, timeout=60):
    r = subprocess.run([KUBECTL, *args], input=stdin, capture_output=True, text=True,
                       env=SIM.env, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("kubectl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return r


def manifest(obj):
    return json.dumps(obj)


def cm(name, ns="default", data=None, **meta):
    m = {"name": name, "namespace": ns}
    m.update(meta)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m, "data": data or {"a": "1"}}


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.conformance.example.com"},
    "spec": {
        "group": "conformance.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "listKind": "WidgetList", "shortNames": ["wdg"], "categories": ["gadgets"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                                                     "statusReplicasPath": ".status.replicas"}},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["size"],
                        "properties": {"size": {"type": "integer", "minimum": 1},
                                       "color": {"type": "string"}},
                        "x-kubernetes-validations": [{
                            "rule": "self.size <= 10",
                            "message": "size must be at most 10"}]},
                    "status": {"type": "object",
                               "properties": {"replicas": {"type": "integer"},
                                              "conditions": {"type": "array", "items": {
                                   "type": "object",
                                   "properties": {"type": {"type": "string"},
                                                  "status": {"type": "string"}}}}}}}}}}]}}


def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def role(name, verbs, ns="default"):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]}


class Watching:
    """`kubectl get -w ARGS` running, its output read as rows of words.

    Bounded twice: the request by --request-timeout, every read by a timeout.
    """

    def __init__(self, *args):
        self.proc = subprocess.Popen([KUBECTL, "get", "-w", "--request-timeout=30s", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=SIM.env)
        self.rows = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.rows.put(line.split())

    def row(self, timeout=15):
        try:
            return self.rows.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("kubectl get -w printed nothing in %ds" % timeout) from None

    def row_named(self, name, column=0):
        while True:
            r = self.row()
            if len(r) > column and r[column] == name:
                return r

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()


def widget(name, size, ns="default", **meta):
    m = {"name": name, "namespace": ns}
    m.update(meta)
    return {"apiVersion": "conformance.example.com/v1", "kind": "Widget", "metadata": m,
            "spec": {"size": size}}


_crd_ready = threading.Lock()
_crd_done = False


def ensure_crd():
    global _crd_done
    with _crd_ready:
        if _crd_done:
            return
        kubectl("apply", "-f", "-", stdin=manifest(CRD), check=True)
        kubectl("wait", "--for=condition=Established", "--timeout=30s",
                "crd/widgets.conformance.example.com", check=True)
        _crd_done = True


class Kubectl(unittest.TestCase):
    def test_create_get_and_already_exists(self):
        r = kubectl("create", "-f", "-", stdin=manifest(cm("k-cm1")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "configmap/k-cm1 created")
        got = json.loads(kubectl("get", "cm", "k-cm1", "-o", "json", check=True).stdout)
        self.assertEqual(got["data"], {"a": "1"})
        self.assertTrue(got["metadata"]["uid"])
        r = kubectl("create", "-f", "-", stdin=manifest(cm("k-cm1")))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(),
                         'Error from server (AlreadyExists): error when creating "STDIN": '
                         'configmaps "k-cm1" already exists')

    def test_generator_create_sends_protobuf(self):
        r = kubectl("create", "configmap", "k-gen", "--from-literal=x=y")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "configmap/k-gen created")
        self.assertEqual(kubectl("get", "cm", "k-gen", "-o", "jsonpath={.data.x}").stdout, "y")

    def test_not_found(self):
        r = kubectl("get", "cm", "k-nope")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), 'Error from server (NotFound): configmaps "k-nope" not found')
        r = kubectl("get", "frobnicators")
        self.assertEqual(r.returncode, 1)
        self.assertIn('the server doesn\'t have a resource type "frobnicators"', r.stderr)

    def assert_applies(self, flags, shown, configs, outcomes, path, want):
        """`kubectl apply FLAGS` of each config prints SHOWN OUTCOME; then PATH reads WANT."""
        for obj, outcome in zip(configs, outcomes):
            r = kubectl("apply", *flags, "-f", "-", stdin=manifest(obj))
            self.assertEqual(r.stdout.strip(), shown + " " + outcome, r.stderr)
        self.assertEqual(kubectl("get", shown, "-o", "jsonpath=" + path).stdout, want)

    def test_apply_client_side(self):
        cases = [
            ("configmap/k-apply", cm("k-apply"), cm("k-apply", data={"a": "2"}),
             "{.data.a}", "2"),
            ("namespace/k-ns-apply", namespace("k-ns-apply", tier="a"),
             namespace("k-ns-apply", tier="b"), "{.metadata.labels.tier}", "b"),
            ("role.rbac.authorization.k8s.io/k-role-apply", role("k-role-apply", ["get"]),
             role("k-role-apply", ["get", "list"]), "{.rules[0].verbs}", '["get","list"]'),
        ]
        for shown, first, changed, path, want in cases:
            with self.subTest(shown):
                self.assert_applies([], shown, [first, first, changed],
                                    ["created", "unchanged", "configured"], path, want)

    def test_apply_server_side(self):
        ensure_crd()
        cases = [
            ("configmap/k-ssa", cm("k-ssa"), cm("k-ssa", data={"a": "2"}), "{.data.a}", "2"),
            ("role.rbac.authorization.k8s.io/k-role-ssa", role("k-role-ssa", ["get"]),
             role("k-role-ssa", ["get", "list"]), "{.rules[0].verbs}", '["get","list"]'),
            ("widget.conformance.example.com/k-w-ssa", widget("k-w-ssa", 1),
             widget("k-w-ssa", 2), "{.spec.size}", "2"),
        ]
        for shown, first, changed, path, want in cases:
            with self.subTest(shown):
                self.assert_applies(["--server-side"], shown, [first, changed],
                                    ["serverside-applied"] * 2, path, want)
                got = json.loads(kubectl("get", shown, "-o", "json", "--show-managed-fields",
                                         check=True).stdout)
                managers = [m["manager"] for m in got["metadata"].get("managedFields", [])]
                self.assertIn("kubectl", managers)
        # Another manager changing kubectl's field conflicts, unless it forces.
        r = kubectl("apply", "--server-side", "--field-manager=other", "-f", "-",
                    stdin=manifest(widget("k-w-ssa", 3)))
        self.assertEqual(r.returncode, 1)
        self.assertIn('error: Apply failed with 1 conflict: conflict with "kubectl": .spec.size',
                      r.stderr)
        self.assert_applies(["--server-side", "--field-manager=other", "--force-conflicts"],
                            "widget.conformance.example.com/k-w-ssa", [widget("k-w-ssa", 3)],
                            ["serverside-applied"], "{.spec.size}", "3")

    def assert_patches(self, shown, merge, json_patch, path, want):
        """A merge then a JSON patch of SHOWN are applied; then PATH reads WANT."""
        for kind, body in (("merge", merge), ("json", json_patch)):
            r = kubectl("patch", shown, "--type", kind, "-p", json.dumps(body))
            self.assertEqual(r.stdout.strip(), shown + " patched", r.stderr)
        self.assertEqual(kubectl("get", shown, "-o", "jsonpath=" + path).stdout, want)

    def test_patch_merge_and_json(self):
        kubectl("create", "-f", "-", stdin=manifest(cm("k-patch")), check=True)
        self.assert_patches("configmap/k-patch", {"data": {"b": "2"}},
                            [{"op": "replace", "path": "/data/a", "value": "9"}],
                            "{.data.a}{.data.b}", "92")
        r = kubectl("patch", "cm", "k-patch", "--type", "json",
                    "-p", '[{"op":"test","path":"/data/a","value":"0"},'
                          '{"op":"replace","path":"/data/a","value":"X"}]')
        self.assertEqual(r.returncode, 1)
        self.assertIn("the server rejected our request due to an error in our request", r.stderr)
        self.assertEqual(json.loads(kubectl("get", "cm", "k-patch", "-o", "json").stdout)["data"],
                         {"a": "9", "b": "2"})

    def test_patch_a_role_and_a_custom_resource(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(role("k-role-patch", ["get"])), check=True)
        self.assert_patches(
            "role.rbac.authorization.k8s.io/k-role-patch",
            {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
            [{"op": "add", "path": "/rules/0/verbs/-", "value": "list"}],
            "{.rules[0].resources}{.rules[0].verbs}", '["pods"]["get","list"]')
        kubectl("create", "-f", "-", stdin=manifest(widget("k-w-patch", 1)), check=True)
        self.assert_patches("widget.conformance.example.com/k-w-patch",
                            {"spec": {"color": "red"}},
                            [{"op": "replace", "path": "/spec/size", "value": 5}],
                            "{.spec.color} {.spec.size}", "red 5")

    def test_conflict_on_stale_resource_version(self):
        kubectl("create", "-f", "-", stdin=manifest(cm("k-conflict")), check=True)
        stale = json.loads(kubectl("get", "cm", "k-conflict", "-o", "json").stdout)
        kubectl("patch", "cm", "k-conflict", "--type", "merge", "-p", '{"data":{"a":"2"}}',
                check=True)
        r = kubectl("replace", "-f", "-", stdin=manifest(stale))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(
            r.stderr.strip(),
            'Error from server (Conflict): error when replacing "STDIN": Operation cannot be '
            'fulfilled on configmaps "k-conflict": the object has been modified; please apply '
            'your changes to the latest version and try again')

    def test_invalid_name(self):
        r = kubectl("create", "-f", "-", stdin=manifest(cm("Bad_Name")))
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith(
            'The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
            'a lowercase RFC 1123 subdomain must consist of'), r.stderr)

    def test_delete_and_wait_for_delete(self):
        kubectl("create", "-f", "-", stdin=manifest(cm("k-del")), check=True)
        r = kubectl("delete", "cm", "k-del")
        self.assertEqual(r.stdout.strip(), 'configmap "k-del" deleted', r.stderr)
        r = kubectl("wait", "--for=delete", "cm/k-del", "--timeout=10s")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_get_watch_sees_a_create(self):
        with Watching("cm", "-n", "default") as w:
            # A listed row: the watch starts from that list's resourceVersion.
            w.row_named("kube-root-ca.crt")
            kubectl("create", "-f", "-", stdin=manifest(cm("k-watched")), check=True)
            w.row_named("k-watched")

    def test_get_watch_on_a_custom_resource_sees_added_then_modified(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w-watch", 1)), check=True)
        with Watching("wdg", "w-watch", "--output-watch-events") as w:
            self.assertEqual(w.row()[:3], ["EVENT", "NAME", "SIZE"])
            self.assertEqual(w.row()[:3], ["ADDED", "w-watch", "1"])
            kubectl("patch", "wdg", "w-watch", "--type", "merge", "-p", '{"spec":{"size":2}}',
                    check=True)
            self.assertEqual(w.row()[:3], ["MODIFIED", "w-watch", "2"])

    def test_namespace_deletion_removes_its_contents(self):
        r = kubectl("create", "namespace", "k-ns1")
        self.assertEqual(r.stdout.strip(), "namespace/k-ns1 created", r.stderr)
        kubectl("create", "-f", "-", stdin=manifest(cm("inner", ns="k-ns1")), check=True)
        r = kubectl("delete", "namespace", "k-ns1", "--timeout=30s")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = kubectl("get", "namespace", "k-ns1")
        self.assertEqual(r.stderr.strip(), 'Error from server (NotFound): namespaces "k-ns1" not found')

    def test_every_namespace_holds_the_cluster_ca(self):
        with open(SIM.kubeconfig) as f:
            config = f.read()
        data = [l.split(":", 1)[1].strip() for l in config.splitlines()
                if l.strip().startswith("certificate-authority-data:")]
        self.assertEqual(len(data), 1, config)
        ca = base64.b64decode(data[0]).decode()
        self.assertTrue(ca.startswith("-----BEGIN CERTIFICATE-----"), ca)
        kubectl("create", "namespace", "k-ca", check=True)
        for ns in ("default", "kube-system", "kube-public", "k-ca"):
            r = kubectl("get", "cm", "kube-root-ca.crt", "-n", ns, "-o",
                        "jsonpath={.data.ca\\.crt}", check=True)
            self.assertEqual(r.stdout, ca, ns)

    def test_owner_garbage_collection(self):
        kubectl("create", "-f", "-", stdin=manifest(cm("k-owner")), check=True)
        uid = kubectl("get", "cm", "k-owner", "-o", "jsonpath={.metadata.uid}").stdout
        child = cm("k-child", ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap",
                                                 "name": "k-owner", "uid": uid}])
        kubectl("create", "-f", "-", stdin=manifest(child), check=True)
        kubectl("delete", "cm", "k-owner", check=True)
        r = kubectl("wait", "--for=delete", "cm/k-child", "--timeout=20s")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_roles_and_forbidden(self):
        kubectl("create", "namespace", "k-rbac", check=True)
        r = kubectl("create", "role", "reader", "--verb=get,list", "--resource=configmaps",
                    "-n", "k-rbac")
        self.assertEqual(r.stdout.strip(), "role.rbac.authorization.k8s.io/reader created", r.stderr)
        r = kubectl("get", "roles", "-n", "k-rbac")
        self.assertIn("reader", r.stdout)
        r = kubectl("get", "cm", "-n", "k-rbac", "--as", "system:serviceaccount:k-rbac:default")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(
            r.stderr.strip(),
            'Error from server (Forbidden): configmaps is forbidden: User '
            '"system:serviceaccount:k-rbac:default" cannot list resource "configmaps" in API '
            'group "" in the namespace "k-rbac"')

    def test_pod_security_levels_as_kubectl_shows_them(self):
        kubectl("create", "namespace", "k-psa", check=True)
        kubectl("label", "namespace", "k-psa", "pod-security.kubernetes.io/enforce=restricted",
                "pod-security.kubernetes.io/warn=restricted", check=True)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "k-psa"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        r = kubectl("apply", "-f", "-", stdin=manifest(pod))
        self.assertEqual(r.returncode, 1)
        self.assertIn('Error from server (Forbidden): error when creating "STDIN": pods "bare" is '
                      'forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation '
                      '!= false (container "c" must set securityContext.allowPrivilegeEscalation='
                      'false)', r.stderr)
        dep = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "namespace": "k-psa"},
               "spec": {"selector": {"matchLabels": {"app": "d"}},
                        "template": {"metadata": {"labels": {"app": "d"}},
                                     "spec": pod["spec"]}}}
        r = kubectl("apply", "-f", "-", stdin=manifest(dep))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('Warning: would violate PodSecurity "restricted:latest": '
                      'allowPrivilegeEscalation != false', r.stderr)

    def test_auth_can_i(self):
        r = kubectl("auth", "can-i", "delete", "configmaps")
        self.assertEqual(r.stdout.strip(), "yes", r.stderr)
        r = kubectl("auth", "can-i", "delete", "configmaps", "-n", "default",
                    "--as", "system:serviceaccount:default:default")
        self.assertEqual(r.stdout.strip(), "no", r.stderr)

    def test_scale_a_deployment(self):
        kubectl("create", "namespace", "k-scale", check=True)
        dep = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "x", "namespace": "k-scale"},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                        "template": {"metadata": {"labels": {"app": "x"}},
                                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
        kubectl("apply", "-f", "-", stdin=manifest(dep), check=True)
        r = kubectl("scale", "deployment/x", "-n", "k-scale", "--replicas=3")
        self.assertEqual(r.stdout.strip(), "deployment.apps/x scaled", r.stderr)
        self.assertEqual(kubectl("get", "deployment", "x", "-n", "k-scale", "-o",
                                 "jsonpath={.spec.replicas}").stdout, "3")
        scale = json.loads(kubectl("get", "--raw",
                                   "/apis/apps/v1/namespaces/k-scale/deployments/x/scale",
                                   check=True).stdout)
        self.assertEqual(scale["kind"], "Scale")
        self.assertEqual(scale["apiVersion"], "autoscaling/v1")
        self.assertEqual(scale["spec"], {"replicas": 3})
        self.assertEqual(scale["status"]["selector"], "app=x")
        # A precondition makes kubectl read the Scale and replace it.
        r = kubectl("scale", "deployment/x", "-n", "k-scale", "--current-replicas=3",
                    "--replicas=4")
        self.assertEqual(r.stdout.strip(), "deployment.apps/x scaled", r.stderr)
        r = kubectl("scale", "deployment/x", "-n", "k-scale", "--current-replicas=3",
                    "--replicas=5")
        self.assertEqual(r.returncode, 1)
        self.assertIn("Expected replicas to be 3, was 4", r.stderr)
        self.assertEqual(kubectl("get", "deployment", "x", "-n", "k-scale", "-o",
                                 "jsonpath={.spec.replicas}").stdout, "4")
        r = kubectl("auth", "can-i", "update", "deployments/scale", "-n", "k-scale")
        self.assertEqual(r.stdout.strip(), "yes", r.stderr)
        r = kubectl("auth", "can-i", "update", "deployments/scale", "-n", "k-scale",
                    "--as", "system:serviceaccount:k-scale:default")
        self.assertEqual(r.stdout.strip(), "no", r.stderr)

    def test_scale_a_custom_resource(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w-scale", 2)), check=True)
        r = kubectl("scale", "wdg/w-scale", "--replicas=4")
        self.assertEqual(r.stdout.strip(), "widget.conformance.example.com/w-scale scaled",
                         r.stderr)
        self.assertEqual(kubectl("get", "wdg", "w-scale", "-o", "jsonpath={.spec.size}").stdout,
                         "4")
        # The schema and CEL rules still hold for a write through /scale.
        r = kubectl("scale", "wdg/w-scale", "--replicas=11")
        self.assertEqual(r.returncode, 1)
        self.assertIn('The Widget "w-scale" is invalid: spec: Invalid value: "object": size must '
                      'be at most 10', r.stderr)

    def test_crd_short_names_and_categories(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w0", 3)), check=True)
        for name in ("wdg", "widget", "widgets", "widgets.conformance.example.com", "gadgets"):
            r = kubectl("get", name)
            self.assertEqual(r.returncode, 0, name + ": " + r.stderr)
            self.assertIn("w0", r.stdout, name)

    def test_crd_printer_columns(self):
        ensure_crd()
        r = kubectl("create", "-f", "-", stdin=manifest(widget("w1", 3)))
        self.assertEqual(r.stdout.strip(), "widget.conformance.example.com/w1 created", r.stderr)
        for name in ("wdg", "widget", "widgets", "widgets.conformance.example.com", "gadgets"):
            r = kubectl("get", name)
            self.assertEqual(r.returncode, 0, name + ": " + r.stderr)
            self.assertIn("w1", r.stdout, name)
        header = kubectl("get", "wdg").stdout.splitlines()[0].split()
        self.assertEqual(header, ["NAME", "SIZE", "AGE"])
        self.assertEqual(kubectl("get", "wdg", "w1").stdout.splitlines()[1].split()[:2], ["w1", "3"])

    def test_crd_schema_and_cel_messages(self):
        ensure_crd()
        r = kubectl("create", "-f", "-", stdin=manifest(widget("w-big", 11)))
        self.assertEqual(r.returncode, 1)
        self.assertIn('The Widget "w-big" is invalid: spec: Invalid value: "object": size must be '
                      'at most 10', r.stderr)
        r = kubectl("create", "-f", "-", stdin=manifest(widget("w-zero", 0)))
        self.assertEqual(r.returncode, 1)
        self.assertIn('spec.size: Invalid value: 0: spec.size in body should be greater than or '
                      'equal to 1', r.stderr)

    def test_custom_resource_finalizers_and_wait(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w-fin", 2, finalizers=["example.com/hold"])),
                check=True)
        r = kubectl("delete", "wdg", "w-fin", "--wait=false")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(kubectl("get", "wdg", "w-fin", "-o", "json", check=True).stdout)
        self.assertIn("deletionTimestamp", got["metadata"])
        kubectl("patch", "wdg", "w-fin", "--type", "merge", "-p", '{"metadata":{"finalizers":null}}',
                check=True)
        r = kubectl("wait", "--for=delete", "wdg/w-fin", "--timeout=10s")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_wait_for_condition_on_status(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w-cond", 1)), check=True)
        r = kubectl("patch", "wdg", "w-cond", "--subresource=status", "--type", "merge",
                    "-p", '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}')
        self.assertEqual(r.returncode, 0, r.stderr)
        r = kubectl("wait", "--for=condition=Ready", "wdg/w-cond", "--timeout=10s")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "widget.conformance.example.com/w-cond condition met")

    def test_strategic_patch_on_a_custom_resource_is_415(self):
        ensure_crd()
        kubectl("create", "-f", "-", stdin=manifest(widget("w-smp", 1)), check=True)
        r = kubectl("patch", "wdg", "w-smp", "-p", '{"spec":{"size":2}}')
        self.assertEqual(r.returncode, 1)
        self.assertEqual(
            r.stderr.strip(),
            "error: application/strategic-merge-patch+json is not supported by "
            "conformance.example.com/v1, Kind=Widget: the body of the request was in an unknown "
            "format - accepted media types include: application/json-patch+json, "
            "application/merge-patch+json, application/apply-patch+yaml")


class Python(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from kubernetes import client, config
        cls.client_mod = client
        cls.api_client = config.new_client_from_config(config_file=SIM.kubeconfig)
        cls.core = client.CoreV1Api(cls.api_client)
        cls.custom = client.CustomObjectsApi(cls.api_client)

    def test_configmap_crud_and_errors(self):
        from kubernetes.client.rest import ApiException
        body = self.client_mod.V1ConfigMap(api_version="v1", kind="ConfigMap",
                                           metadata=self.client_mod.V1ObjectMeta(name="py-cm1"),
                                           data={"k": "v"})
        created = self.core.create_namespaced_config_map("default", body)
        self.assertEqual(created.data, {"k": "v"})
        got = self.core.read_namespaced_config_map("py-cm1", "default")
        self.assertEqual(got.metadata.uid, created.metadata.uid)
        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map("default", body)
        self.assertEqual(e.exception.status, 409)
        self.assertEqual(json.loads(e.exception.body)["reason"], "AlreadyExists")
        with self.assertRaises(ApiException) as e:
            self.core.read_namespaced_config_map("py-nope", "default")
        self.assertEqual(e.exception.status, 404)
        names = [c.metadata.name for c in self.core.list_namespaced_config_map("default").items]
        self.assertIn("py-cm1", names)
        self.core.delete_namespaced_config_map("py-cm1", "default")

    def test_watch_stream(self):
        from kubernetes import watch
        w = watch.Watch()
        seen = []

        def consume():
            for ev in w.stream(self.core.list_namespaced_config_map, "default",
                               timeout_seconds=15):
                seen.append((ev["type"], ev["object"].metadata.name))
                if ev["object"].metadata.name == "py-watched":
                    w.stop()

        t = threading.Thread(target=consume, daemon=True)
        t.start()
        time.sleep(1.0)
        self.core.create_namespaced_config_map(
            "default", self.client_mod.V1ConfigMap(
                api_version="v1", kind="ConfigMap",
                metadata=self.client_mod.V1ObjectMeta(name="py-watched")))
        t.join(timeout=20)
        self.assertIn(("ADDED", "py-watched"), seen)

    def test_create_without_kind(self):
        made = self.core.create_namespaced_config_map(
            "default", self.client_mod.V1ConfigMap(
                metadata=self.client_mod.V1ObjectMeta(name="py-nokind")))
        self.assertEqual(made.kind, "ConfigMap")
        self.assertEqual(made.api_version, "v1")

    def test_custom_objects(self):
        ensure_crd()
        obj = widget("py-w1", 4)
        self.custom.create_namespaced_custom_object("conformance.example.com", "v1", "default",
                                                    "widgets", obj)
        got = self.custom.get_namespaced_custom_object("conformance.example.com", "v1", "default",
                                                       "widgets", "py-w1")
        self.assertEqual(got["spec"]["size"], 4)
        patched = self.custom.patch_namespaced_custom_object(
            "conformance.example.com", "v1", "default", "widgets", "py-w1", {"spec": {"size": 5}})
        self.assertEqual(patched["spec"]["size"], 5)
        self.assertGreater(int(patched["metadata"]["resourceVersion"]),
                           int(got["metadata"]["resourceVersion"]))


class Audit(unittest.TestCase):
    def test_every_line_is_an_audit_event(self):
        kubectl("get", "ns", check=True)
        lines = SIM.audit()
        self.assertGreater(len(lines), 0)
        for ev in lines:
            self.assertEqual(ev["kind"], "Event")
            self.assertEqual(ev["apiVersion"], "audit.k8s.io/v1")
            self.assertNotIn("/sim/v1", ev["requestURI"])
        self.assertTrue(any(ev["verb"] == "list" and ev.get("objectRef", {}).get("resource")
                            == "namespaces" for ev in lines))


def main():
    global NODE_BIN, SIM
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    NODE_BIN = sys.argv.pop(1)
    if not os.access(KUBECTL, os.X_OK):
        skip_or_fail("kubectl is missing at " + KUBECTL + "; install Google Cloud SDK's kubectl package")
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        skip_or_fail("python3-kubernetes is missing; apt-get install python3-kubernetes")
    workdir = tempfile.mkdtemp(prefix="sim-conformance-")
    SIM = SimCluster(workdir, NODE_BIN, audit=True)
    try:
        prog = unittest.main(exit=False, verbosity=2)
        ok = prog.result.wasSuccessful()
    finally:
        rc = SIM.stop()
    if rc != 0:
        print("sim-cluster exited %d on SIGTERM" % rc, file=sys.stderr)
        ok = False
    if ok:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print("simulator log and audit kept in " + workdir, file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
