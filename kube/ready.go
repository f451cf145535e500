package kube

import (
	"context"

	"github.com/labrun/labrun/internal/k8sobj"
)

// Conditions for the waits labs do most, over the objects Wait passes
// them, with kubectl's rules (package k8sobj).

// AllPodsReady is a CondFunc: at least min pods exist and all are Ready.
// min below 1 is taken as 1, since "all of no pods" is never what a lab
// means.
func AllPodsReady(min int) CondFunc {
	min = max(min, 1)
	return func(objs []map[string]any) (bool, error) {
		if len(objs) < min {
			return false, nil
		}
		for _, p := range objs {
			if !k8sobj.PodReady(p) {
				return false, nil
			}
		}
		return true, nil
	}
}

// AllRolledOut is a CondFunc: at least one object exists and every one has
// completed its rollout (see RolloutComplete).
func AllRolledOut(objs []map[string]any) (bool, error) {
	if len(objs) == 0 {
		return false, nil
	}
	for _, o := range objs {
		ok, err := k8sobj.RolloutComplete(o)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// EndpointsReady is a CondFunc over a Service's EndpointSlices: at least
// min ready addresses (min below 1 is taken as 1).
func EndpointsReady(min int) CondFunc {
	min = max(min, 1)
	return func(objs []map[string]any) (bool, error) {
		return len(k8sobj.ReadyAddresses(objs)) >= min, nil
	}
}

// WaitPodsReady waits until at least min pods match selector in namespace
// and all of them are Ready.
func (c *Client) WaitPodsReady(ctx context.Context, namespace, selector string, min int) ([]map[string]any, error) {
	return c.Wait(ctx, ListOptions{APIVersion: "v1", Kind: "Pod", Namespace: namespace, LabelSelector: selector}, AllPodsReady(min), nil)
}

// WaitRollout waits until a Deployment, DaemonSet or StatefulSet has rolled
// out (see RolloutComplete); it may not exist yet when the wait starts.
func (c *Client) WaitRollout(ctx context.Context, ref ObjectRef) (map[string]any, error) {
	objs, err := c.Wait(ctx, ListOptions{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}, AllRolledOut, nil)
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// WaitServiceEndpoints waits until a Service has at least min ready
// endpoint addresses and returns them.
func (c *Client) WaitServiceEndpoints(ctx context.Context, namespace, service string, min int) ([]string, error) {
	objs, err := c.Wait(ctx, ListOptions{
		APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: namespace,
		LabelSelector: "kubernetes.io/service-name=" + service,
	}, EndpointsReady(min), nil)
	if err != nil {
		return nil, err
	}
	return k8sobj.ReadyAddresses(objs), nil
}
