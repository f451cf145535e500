package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// jobTimeline is where a Job's wall went, from the timestamps the API
// server keeps on its pods (whole seconds: Kubernetes writes them without
// fractions, so each phase is known to about a second). It says what of
// a Job's time is the cluster starting pods and what is grading.
type jobTimeline struct {
	pods int
	// created: kubectl apply's start to each pod's creation (the Job
	// controller making it); scheduled to started: its creation to its
	// labrun container's start (scheduling, sandbox, image, container);
	// ran: the container's start to its end (labrun's start, the
	// shard's checks, storing the results).
	created, started, ran []float64
	// lastEnd: apply's start to the last container's end; wall: to
	// collect's end.
	lastEnd, wall float64
}

// readJobTimeline reads the Job's pods' timestamps; start is when kubectl
// apply began and end when collect ended.
func (b *bench) readJobTimeline(ctx context.Context, namespace, job string, start, end time.Time) (jobTimeline, error) {
	out, err := b.kubectlRun(ctx, nil, "get", "pods", "-n", namespace, "-l", "batch.kubernetes.io/job-name="+job, "-o", "json")
	if err != nil {
		return jobTimeline{}, err
	}
	// kept beside the reports, for a look at the pods afterwards
	if err := os.WriteFile(filepath.Join(b.work, job+".pods.json"), out, 0o644); err != nil {
		return jobTimeline{}, err
	}
	return parseJobTimeline(out, start, end)
}

// parseJobTimeline is readJobTimeline's reading of the pod list.
func parseJobTimeline(podList []byte, start, end time.Time) (jobTimeline, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string
				CreationTimestamp time.Time
			}
			Status struct {
				ContainerStatuses []struct {
					State struct {
						Terminated *struct{ StartedAt, FinishedAt time.Time }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(podList, &list); err != nil {
		return jobTimeline{}, err
	}
	tl := jobTimeline{wall: end.Sub(start).Seconds()}
	start = start.Truncate(time.Second) // as the pods' timestamps
	var last time.Time
	for _, p := range list.Items {
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			return jobTimeline{}, fmt.Errorf("pod %s of the Job has no ended container", p.Metadata.Name)
		}
		t := p.Status.ContainerStatuses[0].State.Terminated
		tl.created = append(tl.created, p.Metadata.CreationTimestamp.Sub(start).Seconds())
		tl.started = append(tl.started, t.StartedAt.Sub(p.Metadata.CreationTimestamp).Seconds())
		tl.ran = append(tl.ran, t.FinishedAt.Sub(t.StartedAt).Seconds())
		if t.FinishedAt.After(last) {
			last = t.FinishedAt
		}
	}
	if len(list.Items) == 0 {
		return jobTimeline{}, fmt.Errorf("the Job has no pods")
	}
	tl.pods = len(list.Items)
	tl.lastEnd = last.Sub(start).Seconds()
	for _, s := range [][]float64{tl.created, tl.started, tl.ran} {
		slices.Sort(s)
	}
	return tl, nil
}

// String is the timeline for a row's note.
func (tl jobTimeline) String() string {
	span := func(s []float64) string {
		if s[0] == s[len(s)-1] {
			return fmt.Sprintf("%.0f s", s[0])
		}
		return fmt.Sprintf("%.0f-%.0f s", s[0], s[len(s)-1])
	}
	return fmt.Sprintf("its %s' timestamps (whole seconds): created %s after apply's start, the labrun container started %s after that, ran %s; "+
		"the last ended %.0f s after apply's start, collect %.1f s after it", plural(tl.pods, "pod"), span(tl.created), span(tl.started), span(tl.ran),
		tl.lastEnd, tl.wall-tl.lastEnd)
}
