// The JobSet CRD. The schema is written for the simulator: the fields of
// kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go with their
// types, enums and list types; what the mutating webhook defaults
// (pkg/webhooks/jobset_webhook.go Default) is a schema `default` wherever a
// default can sit (an absent parent object is defaulted to {} so that its
// members' defaults apply); the validating webhook's generated-name length
// checks are CEL rules at the root, where `self.metadata.name` is known,
// and so is its update check that replicatedJobs do not change — unless the
// JobSet is or becomes suspended, when upstream lets the pod template's
// labels, annotations, nodeSelector, tolerations and schedulingGates change
// (for Kueue); here anything in them may change then.
#include "k8s/sim/jobs/jobs.hpp"

namespace aiperf::k8s::sim {

namespace {

// Upstream's messages (jobset_webhook.go jobNameTooLongErrorMsg,
// podNameTooLongErrorMsg).
constexpr const char* crd_text = R"json({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "jobsets.jobset.x-k8s.io"},
  "spec": {
    "group": "jobset.x-k8s.io",
    "names": {"kind": "JobSet", "listKind": "JobSetList", "plural": "jobsets",
              "singular": "jobset"},
    "scope": "Namespaced",
    "versions": [{
      "name": "v1alpha2",
      "served": true,
      "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [
        {"description": "Final state of JobSet", "jsonPath": ".status.terminalState",
         "name": "TerminalState", "type": "string"},
        {"description": "Number of restarts", "jsonPath": ".status.restarts",
         "name": "Restarts", "type": "string"},
        {"jsonPath": ".status.conditions[?(@.type==\"Completed\")].status",
         "name": "Completed", "type": "string"},
        {"description": "JobSet suspended", "jsonPath": ".spec.suspend",
         "name": "Suspended", "type": "string"},
        {"description": "Time this JobSet was created",
         "jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}
      ],
      "schema": {"openAPIV3Schema": {
        "description": "JobSet is the Schema for the jobsets API",
        "type": "object",
        "properties": {
          "apiVersion": {"type": "string"},
          "kind": {"type": "string"},
          "metadata": {"type": "object"},
          "spec": {
            "type": "object",
            "properties": {
              "coordinator": {
                "type": "object",
                "required": ["replicatedJob"],
                "properties": {
                  "jobIndex": {"type": "integer"},
                  "podIndex": {"type": "integer"},
                  "replicatedJob": {"type": "string"}
                }
              },
              "failurePolicy": {
                "type": "object",
                "properties": {
                  "maxRestarts": {"type": "integer", "format": "int32"},
                  "restartStrategy": {"type": "string", "default": "Recreate",
                    "enum": ["Recreate", "BlockingRecreate", "InPlaceRestart"]},
                  "rules": {
                    "type": "array",
                    "items": {
                      "type": "object",
                      "required": ["action", "name"],
                      "properties": {
                        "action": {"type": "string", "enum": ["FailJobSet",
                          "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts",
                          "RestartJob", "RestartJobAndIgnoreMaxRestarts"]},
                        "name": {"type": "string", "maxLength": 128,
                                 "pattern": "^[a-zA-Z]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$"},
                        "onJobFailureMessagePatterns": {"type": "array",
                          "items": {"type": "string"},
                          "x-kubernetes-list-type": "atomic"},
                        "onJobFailureReasons": {"type": "array",
                          "items": {"type": "string"},
                          "x-kubernetes-list-type": "atomic"},
                        "targetReplicatedJobs": {"type": "array",
                          "items": {"type": "string"},
                          "x-kubernetes-list-type": "atomic"}
                      }
                    }
                  }
                },
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]
              },
              "managedBy": {"type": "string",
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]},
              "network": {
                "type": "object",
                "default": {},
                "properties": {
                  "enableDNSHostnames": {"type": "boolean", "default": true},
                  "publishNotReadyAddresses": {"type": "boolean", "default": true},
                  "subdomain": {"type": "string"}
                },
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]
              },
              "replicatedJobs": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                  "type": "object",
                  "required": ["name", "template"],
                  "properties": {
                    "dependsOn": {
                      "type": "array",
                      "maxItems": 5,
                      "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {
                        "type": "object",
                        "required": ["name", "status"],
                        "properties": {
                          "name": {"type": "string"},
                          "status": {"type": "string", "enum": ["Ready", "Complete"]}
                        }
                      },
                      "x-kubernetes-validations": [
                        {"message": "Value is immutable", "rule": "self == oldSelf"}]
                    },
                    "groupName": {"type": "string", "default": "default"},
                    "name": {"type": "string"},
                    "replicas": {"type": "integer", "format": "int32",
                                 "minimum": 0, "default": 1},
                    "template": {
                      "type": "object",
                      "properties": {
                        "metadata": {
                          "type": "object",
                          "properties": {
                            "annotations": {"type": "object",
                              "additionalProperties": {"type": "string"}},
                            "labels": {"type": "object",
                              "additionalProperties": {"type": "string"}},
                            "name": {"type": "string"},
                            "namespace": {"type": "string"},
                            "finalizers": {"type": "array",
                              "items": {"type": "string"}}
                          }
                        },
                        "spec": {
                          "type": "object",
                          "x-kubernetes-preserve-unknown-fields": true,
                          "properties": {
                            "activeDeadlineSeconds": {"type": "integer",
                                                      "format": "int64"},
                            "backoffLimit": {"type": "integer", "format": "int32"},
                            "completionMode": {"type": "string",
                              "default": "Indexed",
                              "enum": ["NonIndexed", "Indexed"]},
                            "completions": {"type": "integer", "format": "int32"},
                            "parallelism": {"type": "integer", "format": "int32"},
                            "suspend": {"type": "boolean"},
                            "ttlSecondsAfterFinished": {"type": "integer",
                                                        "format": "int32"},
                            "template": {
                              "type": "object",
                              "x-kubernetes-preserve-unknown-fields": true,
                              "properties": {
                                "metadata": {"type": "object",
                                  "x-kubernetes-preserve-unknown-fields": true},
                                "spec": {
                                  "type": "object",
                                  "x-kubernetes-preserve-unknown-fields": true,
                                  "default": {},
                                  "properties": {
                                    "restartPolicy": {"type": "string",
                                      "default": "OnFailure"}
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              },
              "startupPolicy": {
                "type": "object",
                "default": {"startupPolicyOrder": "AnyOrder"},
                "required": ["startupPolicyOrder"],
                "properties": {
                  "startupPolicyOrder": {"type": "string",
                                         "enum": ["AnyOrder", "InOrder"]}
                },
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]
              },
              "successPolicy": {
                "type": "object",
                "default": {"operator": "All"},
                "required": ["operator"],
                "properties": {
                  "operator": {"type": "string", "enum": ["All", "Any"]},
                  "targetReplicatedJobs": {"type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "atomic"}
                },
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]
              },
              "suspend": {"type": "boolean"},
              "ttlSecondsAfterFinished": {"type": "integer", "format": "int32",
                                          "minimum": 0},
              "volumeClaimPolicies": {
                "type": "array",
                "maxItems": 50,
                "x-kubernetes-list-type": "atomic",
                "items": {"type": "object",
                          "x-kubernetes-preserve-unknown-fields": true},
                "x-kubernetes-validations": [
                  {"message": "Value is immutable", "rule": "self == oldSelf"}]
              }
            },
            "x-kubernetes-validations": [
              {"message": "StartupPolicy and DependsOn APIs are mutually exclusive",
               "rule": "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && has(self.replicatedJobs) && self.replicatedJobs.exists(x, has(x.dependsOn)))"}
            ]
          },
          "status": {
            "type": "object",
            "properties": {
              "conditions": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
                "items": {
                  "type": "object",
                  "required": ["lastTransitionTime", "message", "reason",
                               "status", "type"],
                  "properties": {
                    "lastTransitionTime": {"type": "string", "format": "date-time"},
                    "message": {"type": "string", "maxLength": 32768},
                    "observedGeneration": {"type": "integer", "format": "int64",
                                           "minimum": 0},
                    "reason": {"type": "string", "maxLength": 1024, "minLength": 1},
                    "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                    "type": {"type": "string", "maxLength": 316}
                  }
                }
              },
              "currentInPlaceRestartAttempt": {"type": "integer", "format": "int32"},
              "previousInPlaceRestartAttempt": {"type": "integer", "format": "int32"},
              "replicatedJobsStatus": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                  "type": "object",
                  "required": ["active", "failed", "name", "ready", "succeeded",
                               "suspended"],
                  "properties": {
                    "active": {"type": "integer", "format": "int32"},
                    "failed": {"type": "integer", "format": "int32"},
                    "jobRestarts": {"type": "array", "maxItems": 1024,
                      "items": {"type": "integer", "format": "int32"},
                      "x-kubernetes-list-type": "atomic"},
                    "jobRestartsCountTowardsMax": {"type": "array", "maxItems": 1024,
                      "items": {"type": "integer", "format": "int32"},
                      "x-kubernetes-list-type": "atomic"},
                    "name": {"type": "string"},
                    "ready": {"type": "integer", "format": "int32"},
                    "succeeded": {"type": "integer", "format": "int32"},
                    "suspended": {"type": "integer", "format": "int32"}
                  }
                }
              },
              "restarts": {"type": "integer", "format": "int32"},
              "restartsCountTowardsMax": {"type": "integer", "format": "int32"},
              "terminalState": {"type": "string"}
            }
          }
        },
        "x-kubernetes-validations": [
          {"rule": "!has(self.spec) || !has(self.spec.replicatedJobs) || size(self.spec.replicatedJobs) == 0 || !has(self.spec.replicatedJobs[0].dependsOn)",
           "message": "DependsOn can't be set for the first ReplicatedJob",
           "fieldPath": ".spec.replicatedJobs"},
          {"rule": "!has(self.spec) || !has(self.spec.successPolicy) || !has(self.spec.successPolicy.targetReplicatedJobs) || self.spec.successPolicy.targetReplicatedJobs.all(t, has(self.spec.replicatedJobs) && self.spec.replicatedJobs.exists(r, r.name == t))",
           "messageExpression": "'invalid replicatedJob name \\'' + self.spec.successPolicy.targetReplicatedJobs.filter(t, !has(self.spec.replicatedJobs) || !self.spec.replicatedJobs.exists(r, r.name == t))[0] + '\\' does not appear in .spec.ReplicatedJobs'",
           "fieldPath": ".spec.successPolicy"},
          {"rule": "(has(self.spec) && has(self.spec.suspend) && self.spec.suspend) || (has(oldSelf.spec) && has(oldSelf.spec.suspend) && oldSelf.spec.suspend) || (has(self.spec) ? (has(self.spec.replicatedJobs) ? self.spec.replicatedJobs : []) : []) == (has(oldSelf.spec) ? (has(oldSelf.spec.replicatedJobs) ? oldSelf.spec.replicatedJobs : []) : [])",
           "message": "field is immutable",
           "fieldPath": ".spec.replicatedJobs",
           "reason": "FieldValueInvalid"},
          {"rule": "!has(self.spec) || !has(self.spec.replicatedJobs) || self.spec.replicatedJobs.all(r, size(self.metadata.name) + size(r.name) + size(string(r.replicas - 1)) + 2 <= 63)",
           "message": "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
           "fieldPath": ".spec.replicatedJobs",
           "reason": "FieldValueInvalid"},
          {"rule": "!has(self.spec) || !has(self.spec.replicatedJobs) || self.spec.replicatedJobs.all(r, !has(r.template.spec) || !has(r.template.spec.completionMode) || r.template.spec.completionMode != 'Indexed' || !has(r.template.spec.completions) || size(self.metadata.name) + size(r.name) + size(string(r.replicas - 1)) + size(string(int(r.template.spec.completions) - 1)) + 9 <= 63)",
           "message": "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
           "fieldPath": ".spec.replicatedJobs",
           "reason": "FieldValueInvalid"}
        ]
      }}
    }]
  }
})json";

} // namespace

json jobset_crd() {
  return json::parse(crd_text);
}

} // namespace aiperf::k8s::sim
