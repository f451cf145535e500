package cluster

import (
	"context"
	"fmt"
)

// Creator makes an object that must not exist yet: a create of a name
// already taken is refused (*ExistsError), never turned into an update,
// so the first write of a name stands. A pod of labrun fleet render's
// Job stores its shard's results so: it may create ConfigMaps in its own
// namespace and nothing more, and a retried shard cannot overwrite, nor
// add to, what an earlier attempt stored. *kube.Client implements it.
type Creator interface {
	// Create creates obj (a whole object: apiVersion, kind, metadata
	// with its name and namespace).
	Create(ctx context.Context, obj map[string]any) error
}

// ConfigMaps is the resource of the ConfigMaps a Job's pods store their
// results in.
var ConfigMaps = Resource{Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}

// ExistsError is Create's error when an object of that name exists.
type ExistsError struct {
	Kind, Namespace, Name string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s %s/%s exists already", e.Kind, e.Namespace, e.Name)
}
