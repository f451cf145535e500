package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Discovery is done here rather than with client-go's discovery and
// restmapper packages: those link client-go's scheme of every built-in API
// group (some 50 packages whose init functions register thousands of
// types), and Go runs every linked package's init in every process. That
// cost each labrun process about 7 ms at start, a third of it, including
// `labrun validate`, which never talks to a cluster. Discovery itself is
// small: aggregated discovery (apidiscovery.k8s.io/v2, GA in Kubernetes
// 1.30) answers with every group, version and resource in two requests;
// older servers get the per-group-version documents.

// acceptAggregated asks for aggregated discovery and takes the legacy
// documents from servers that do not have it.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// apiResource is one resource the server serves.
type apiResource struct {
	gvr        schema.GroupVersionResource
	kind       string
	singular   string
	shortNames []string
	namespaced bool
}

// discoverFunc lists the server's resources in priority order: the core
// group first, then the groups in the server's order, and within a group
// its versions from preferred to least preferred.
type discoverFunc func(ctx context.Context) ([]apiResource, error)

// discoverer returns the discoverFunc that asks the server behind rc.
func discoverer(rc rest.Interface) discoverFunc { return discoverAccepting(rc, acceptAggregated) }

// discoverAccepting asks for the discovery documents with the given Accept
// header; tests ask for the legacy ones only to compare both.
func discoverAccepting(rc rest.Interface, accept string) discoverFunc {
	return func(ctx context.Context) ([]apiResource, error) {
		var out []apiResource
		for _, root := range []string{"/api", "/apis"} {
			body, aggregated, err := getDiscovery(ctx, rc, root, accept)
			if err != nil {
				return nil, err
			}
			var res []apiResource
			if aggregated {
				res, err = parseAggregated(body)
			} else {
				res, err = legacyDiscovery(ctx, rc, root, body)
			}
			if err != nil {
				return nil, fmt.Errorf("discovery %s: %w", root, err)
			}
			out = append(out, res...)
		}
		return out, nil
	}
}

// getDiscovery fetches a discovery document and tells whether the server
// answered with the aggregated form.
func getDiscovery(ctx context.Context, rc rest.Interface, path, accept string) ([]byte, bool, error) {
	var ct string
	body, err := rc.Get().AbsPath(path).SetHeader("Accept", accept).Do(ctx).ContentType(&ct).Raw()
	if err != nil {
		return nil, false, fmt.Errorf("discovery %s: %w", path, err)
	}
	base, params, err := mime.ParseMediaType(ct)
	aggregated := err == nil && base == "application/json" &&
		params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
	return body, aggregated, nil
}

// The parts of apidiscovery.k8s.io/v2's APIGroupDiscoveryList that a
// RESTMapper needs.
type groupDiscoveryList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource     string `json:"resource"`
				ResponseKind *struct {
					Kind string `json:"kind"`
				} `json:"responseKind"`
				Scope            string   `json:"scope"`
				SingularResource string   `json:"singularResource"`
				ShortNames       []string `json:"shortNames"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// parseAggregated reads an aggregated discovery document. Versions the
// server marks Stale (an aggregated API server that did not answer) are
// left out, as client-go does.
func parseAggregated(body []byte) ([]apiResource, error) {
	var list groupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	var out []apiResource
	for _, g := range list.Items {
		for _, v := range g.Versions {
			if v.Freshness == "Stale" {
				continue
			}
			for _, r := range v.Resources {
				if r.ResponseKind == nil || r.ResponseKind.Kind == "" {
					continue
				}
				out = append(out, apiResource{
					gvr:        schema.GroupVersionResource{Group: g.Metadata.Name, Version: v.Version, Resource: r.Resource},
					kind:       r.ResponseKind.Kind,
					singular:   r.SingularResource,
					shortNames: r.ShortNames,
					namespaced: r.Scope == "Namespaced",
				})
			}
		}
	}
	return out, nil
}

// legacyDiscovery reads /api's APIVersions or /apis's APIGroupList, then
// each group version's resource list.
func legacyDiscovery(ctx context.Context, rc rest.Interface, root string, body []byte) ([]apiResource, error) {
	var gvs []schema.GroupVersion
	if root == "/api" {
		var versions metav1.APIVersions
		if err := json.Unmarshal(body, &versions); err != nil {
			return nil, err
		}
		for _, v := range versions.Versions {
			gvs = append(gvs, schema.GroupVersion{Version: v})
		}
	} else {
		var groups metav1.APIGroupList
		if err := json.Unmarshal(body, &groups); err != nil {
			return nil, err
		}
		for _, g := range groups.Groups {
			// the preferred version first, then the others in the
			// server's order
			pref := g.PreferredVersion.Version
			if pref != "" {
				gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: pref})
			}
			for _, v := range g.Versions {
				if v.Version != pref {
					gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: v.Version})
				}
			}
		}
	}
	var out []apiResource
	for _, gv := range gvs {
		path := root + "/" + gv.Version
		if gv.Group != "" {
			path = root + "/" + gv.Group + "/" + gv.Version
		}
		var list metav1.APIResourceList
		b, err := rc.Get().AbsPath(path).SetHeader("Accept", "application/json").Do(ctx).Raw()
		if err == nil {
			err = json.Unmarshal(b, &list)
		}
		if err != nil {
			if gv.Group == "" {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			// An aggregated API server that does not answer hides its
			// own group only, as with kubectl.
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") { // a subresource such as pods/log
				continue
			}
			out = append(out, apiResource{
				gvr:        gv.WithResource(r.Name),
				kind:       r.Kind,
				singular:   r.SingularName,
				shortNames: r.ShortNames,
				namespaced: r.Namespaced,
			})
		}
	}
	return out, nil
}
