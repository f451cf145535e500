package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// A pod of the Job stores its shard's results where they outlast it: a
// ConfigMap in the Job's namespace, created once (cluster.Creator), named
// by the Job, the Job's UID and the shard's index. A drained node, a
// deleted pod or a Job's TTL takes the pods and their logs; the
// ConfigMap stays until someone deletes it. The pods may create
// ConfigMaps in that namespace and do nothing else with them: they cannot
// read, change or delete one, another shard's or their own. A retried
// shard whose earlier pod stored its results before it died finds the
// name taken: the first stored results stand, and no learner is graded
// twice into the report.

// The labels of a results ConfigMap, which fleet collect selects them by.
const (
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	componentValue = "results"
)

// shardKey is the key of a results ConfigMap that holds the shard's own
// record (Stored without its results); every other key is a target's
// index, holding its result line.
const shardKey = "shard"

// Stored is one shard's results as its pod stored them.
type Stored struct {
	// Job and JobUID are the Job's name and UID (the pod's
	// batch.kubernetes.io/controller-uid label): a Job made again under
	// the same name has another UID, so its shards store afresh.
	Job    string `json:"job"`
	JobUID string `json:"jobUID"`
	// Shard is the shard's index and the Job's count of them; Targets
	// is the class's size, which says the shard's targets.
	Shard   int `json:"shard"`
	Shards  int `json:"shards"`
	Targets int `json:"targets"`
	// Attempt is the pod's attempt at the shard, from 0 (the Job's
	// failure count of the index when the pod was made).
	Attempt int    `json:"attempt"`
	Pod     string `json:"pod,omitempty"`
	// Results are the shard's targets' results.
	Results []Result `json:"-"`
	// Created is the ConfigMap's creation time, as read back.
	Created string `json:"-"`
}

// StoredName is the name of the ConfigMap of shard index of the Job job
// whose UID is uid.
func StoredName(job, uid string, index int) string {
	return fmt.Sprintf("%s-%.8s-%d", job, uid, index)
}

// ConfigMap is s as the ConfigMap its pod creates in namespace.
func (s Stored) ConfigMap(namespace string) (map[string]any, error) {
	head, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	data := map[string]any{shardKey: string(head)}
	for _, r := range s.Results {
		line, err := r.Line()
		if err != nil {
			return nil, err
		}
		data[strconv.Itoa(r.Index)] = string(line)
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      StoredName(s.Job, s.JobUID, s.Shard),
			"namespace": namespace,
			"labels": map[string]any{
				"app.kubernetes.io/name": "labrun",
				labelInstance:            s.Job,
				labelComponent:           componentValue,
			},
		},
		"data": data,
	}, nil
}

// ErrStoredBefore is Store's error when an earlier attempt at the shard
// stored its results: those stand.
var ErrStoredBefore = errors.New("an earlier attempt at this shard stored its results; they stand")

// Store creates s's ConfigMap in namespace through c, which must be a
// cluster.Creator. A ConfigMap of that name already there is
// ErrStoredBefore.
func Store(ctx context.Context, c cluster.Cluster, namespace string, s Stored) error {
	creator, ok := c.(cluster.Creator)
	if !ok {
		return fmt.Errorf("the connection cannot create objects")
	}
	cm, err := s.ConfigMap(namespace)
	if err != nil {
		return err
	}
	err = creator.Create(ctx, cm)
	var exists *cluster.ExistsError
	if errors.As(err, &exists) {
		return ErrStoredBefore
	}
	return err
}

// ReadStored reads a results ConfigMap back. A result whose key is not
// its index, or that does not parse, is an error: the ConfigMap is not
// one a pod stored.
func ReadStored(cm map[string]any) (Stored, error) {
	name := k8sobj.String(cm, "metadata", "name")
	data := k8sobj.StringMap(cm, "data")
	var s Stored
	if err := json.Unmarshal([]byte(data[shardKey]), &s); err != nil {
		return Stored{}, fmt.Errorf("ConfigMap %s: no shard record: %v", name, err)
	}
	s.Created = k8sobj.String(cm, "metadata", "creationTimestamp")
	keys := slices.Collect(maps.Keys(data))
	slices.SortFunc(keys, func(a, b string) int { return atoi(a) - atoi(b) })
	for _, k := range keys {
		if k == shardKey {
			continue
		}
		r, err := ParseLine([]byte(data[k]))
		if err != nil {
			return Stored{}, fmt.Errorf("ConfigMap %s, key %s: %v", name, k, err)
		}
		if strconv.Itoa(r.Index) != k {
			return Stored{}, fmt.Errorf("ConfigMap %s, key %s: the result of index %d", name, k, r.Index)
		}
		s.Results = append(s.Results, r)
	}
	return s, nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
