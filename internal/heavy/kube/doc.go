// Package kube is labrun's only way to talk to a Kubernetes cluster: the
// client-go implementation of cluster.Cluster, the interface the actions
// call (apply, get, wait, scale, delete, logs, exec and cilium).
//
// Everything goes through client-go in-process: labrun never runs kubectl.
// One Client (one rest.Config, one HTTP/2 transport, one discovery cache
// and RESTMapper) serves a whole lab run, which makes steps fast and
// failures uniform: every server error is an *APIError that quotes the
// server's reason and message, and no error or log line ever carries a
// token, key or certificate (see Redact). Objects are map[string]any (an
// unstructured object's content), so that expressions read any path such
// as items[0].spec.clusterIP without knowing Go types. The requests and
// results are package cluster's, so the actions and validation never link
// this package.
//
// The pieces:
//
//   - Connect finds a kubeconfig (flag, KUBECONFIG, ~/.kube/config, k3s) and
//     builds a Client; Lazy connects on the first step that needs it.
//   - Client.Apply decodes manifests (DecodeFiles, DecodeText) and
//     server-side-applies them with field manager "labrun", waiting for
//     CRDs to be Established.
//   - Client.Get and Client.List read objects; Client.Wait lists and then
//     watches a set of objects until a condition holds.
//   - Client.Scale and Client.Delete do what their names say.
//   - Client.ResolvePod finds a pod by name, selector or workload reference
//     (ds/cilium, deploy/web, ...) the way kubectl does; Client.Logs and
//     Client.Exec read a log or run a command in the pod it picks.
//   - Exec streams over WebSocket with a SPDY fallback and bounded retries
//     of transport failures, or through a reused shell session in the
//     container (cluster.ExecRequest.Reuse, session.go).
//
// The waits only tests need (pods ready, a rollout done, a Service's
// endpoints) are in kube/kubetest.
package kube
