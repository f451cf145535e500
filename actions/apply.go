package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// ApplySpec creates or updates objects with server-side apply.
type ApplySpec struct {
	Files     []string `yaml:"files" doc:"Manifest files or directories (*.yaml, *.yml, *.json), relative to the playbook."`
	Objects   []any    `yaml:"objects" doc:"Inline objects as YAML mappings; values may use ${{ }}."`
	Manifest  string   `yaml:"manifest" doc:"Inline manifest text, one or more YAML documents."`
	Namespace string   `yaml:"namespace" doc:"Namespace for namespaced objects that name none."`
	Force     bool     `yaml:"force" doc:"Take over fields another field manager owns."`
	// FieldManager lets one step own a few fields beside the ones the
	// usual manager owns, e.g. a rollout's restart annotation applied as a
	// partial object, without taking the rest of the object away from it.
	FieldManager string `yaml:"fieldManager" doc:"Server-side apply field manager (default labrun). Apply a partial object under another manager to change only its fields: those the other manager owns stay as they are."`
}

// ApplyResult lists the applied objects.
type ApplyResult struct {
	// Objects are the objects applied, in the order of the step's files,
	// objects and manifest (and of the documents in each); when the
	// step failed, those applied before the failure.
	Objects []cluster.AppliedObject `json:"objects" expr:"objects"`
	// Created, Configured and Unchanged count the objects by their
	// action: new, changed by the apply, or already as the manifest says.
	Created    int `json:"created" expr:"created"`
	Configured int `json:"configured" expr:"configured"`
	Unchanged  int `json:"unchanged" expr:"unchanged"`
}

func init() {
	Register(Def[ApplySpec, ApplyResult]{
		Name:    "apply",
		Cost:    RoundTrip,
		Doc:     "Create or update Kubernetes objects from files, directories or inline YAML with server-side apply (field manager labrun unless fieldManager says otherwise); CRDs are usable right after they are established.",
		Mutates: true,
		Changes: "the cluster: creates or updates objects",
		Run:     applyObjects,
		Access:  applyAccess,
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			var errs diag.List
			if spec.Lookup("files") == nil && spec.Lookup("objects") == nil && spec.Lookup("manifest") == nil {
				errs.Add(spec.Pos, "apply needs files, objects or manifest")
			}
			return append(errs, checkManifests(spec, sc)...)
		},
	})
}

func applyObjects(ctx context.Context, rt *Runtime, spec *ApplySpec) (*ApplyResult, error) {
	// nothing is sent while an object does not fit its kind's schema
	if err := checkRendered(rt, spec); err != nil {
		return nil, err
	}
	c, err := rt.cluster()
	if err != nil {
		return nil, err
	}
	var sources []cluster.ManifestSource
	var origins []origin
	for i, f := range spec.Files {
		sources = append(sources, cluster.ManifestSource{Path: rt.ResolveInput(f)})
		origins = append(origins, origin{"files", i})
	}
	for i, o := range spec.Objects {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		sources = append(sources, cluster.ManifestSource{Text: string(b), Label: fmt.Sprintf("objects[%d]", i)})
		origins = append(origins, origin{"objects", i})
	}
	if spec.Manifest != "" {
		sources = append(sources, cluster.ManifestSource{Text: spec.Manifest, Label: "manifest"})
		origins = append(origins, origin{"manifest", 0})
	}
	applied, err := c.Apply(ctx, sources, cluster.ApplyRequest{Namespace: spec.Namespace, Force: spec.Force, FieldManager: spec.FieldManager})
	var invalid *cluster.InvalidObjectError
	if errors.As(err, &invalid) {
		err = placeInvalid(spec, origins, invalid)
	}
	res := &ApplyResult{Objects: applied}
	if res.Objects == nil {
		res.Objects = []cluster.AppliedObject{}
	}
	for _, a := range applied {
		switch a.Action {
		case "created":
			res.Created++
		case "configured":
			res.Configured++
		default:
			res.Unchanged++
		}
	}
	return res, err
}
