// Package kube is labrun's only way to talk to a Kubernetes cluster.
//
// Every lab step that touches the cluster (apply, get, list, scale, wait,
// delete, logs, exec) goes through client-go in-process: labrun never runs
// kubectl. Keeping one connection (one rest.Config, one HTTP/2 transport, one
// cached discovery/RESTMapper) for a whole lab run makes steps fast and makes
// failures uniform: every server error is an *APIError that quotes the
// server's reason and message, and no error or log line ever carries a token,
// key or certificate (see Redact).
//
// Results are plain structs whose exported fields carry both `json` and
// `expr` tags, so playbook expressions can read them directly; objects are
// returned as map[string]any (unstructured .Object) so that expressions can
// read paths such as .spec.clusterIP without knowing Go types.
//
// The pieces:
//
//   - Connect finds a kubeconfig (flag, KUBECONFIG, ~/.kube/config, k3s) and
//     builds a Client.
//   - DecodeFiles / DecodeText turn manifests into Manifests; Client.Apply
//     server-side-applies them with field manager "labrun".
//   - Client.Get, Client.List read objects; Client.Wait watches a set of
//     objects until a condition holds.
//   - Client.Scale, Client.Delete, Client.Logs do what their names say.
//   - Client.ResolvePod finds a pod by name, selector or workload reference
//     (ds/cilium, deploy/web, ...) the way kubectl does.
//   - Client.Exec runs a command in a container (WebSocket, SPDY fallback,
//     bounded retries of transport failures), optionally through a reused
//     shell session (see ExecOptions.Reuse).
package kube
