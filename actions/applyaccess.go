package actions

import (
	"fmt"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// applyAccess is what applying the spec's objects asks (Apply, for each
// object): their kinds and namespaces come from the manifest files, the
// inline objects and the manifest text, which must be known before the
// run as far as they decide them.
func applyAccess(spec *ApplySpec, ac *AccessContext) ([]cluster.Access, error) {
	if err := ac.known("files", "manifest", "namespace"); err != nil {
		return nil, err
	}
	objs, err := inlineObjects(spec, ac)
	if err != nil {
		return nil, err
	}
	for i, f := range spec.Files {
		ms, err := ac.Manifests(cluster.ManifestSource{Path: f}, ac.Spec.Lookup("files").Items()[i].Pos)
		if err != nil {
			return nil, err
		}
		objs = append(objs, ms...)
	}
	if spec.Manifest != "" {
		ms, err := ac.Manifests(cluster.ManifestSource{Text: spec.Manifest, Label: "manifest"}, ac.Spec.Lookup("manifest").Pos)
		if err != nil {
			return nil, err
		}
		objs = append(objs, ms...)
	}
	var out []cluster.Access
	for _, o := range objs {
		if ac.Applied != nil {
			ac.Applied(o)
		}
		if o.Kind == "" {
			return nil, diag.Errorf(o.Pos, "an object to apply has no kind")
		}
		r, err := ac.resource(o.APIVersion, o.Kind, o.Pos)
		if err != nil {
			return nil, err
		}
		ns := o.Namespace
		if ns == "" {
			ns = spec.Namespace
		}
		if ns == "" {
			ns = ac.Namespace
		}
		out = append(out, cluster.ApplyAccess(r, ns)...)
	}
	return out, nil
}

// inlineObjects reads the apiVersion, kind and namespace of each of the
// spec's objects; the rest of an object may be known only when the step
// runs.
func inlineObjects(spec *ApplySpec, ac *AccessContext) ([]ManifestObject, error) {
	list := ac.Spec.Lookup("objects")
	if list == nil {
		return nil, nil
	}
	items := list.Items()
	if items == nil { // the whole list is one expression
		if ac.Unknown("objects") {
			return nil, unknownError(list, "objects")
		}
		var out []ManifestObject
		for _, o := range spec.Objects {
			out = append(out, plainObject(o, list.Pos))
		}
		return out, nil
	}
	var out []ManifestObject
	for i, item := range items {
		o, err := inlineObject(item, fmt.Sprintf("objects[%d]", i), ac)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// inlineObject reads one object of the spec, named name in messages.
func inlineObject(item *eval.Value, name string, ac *AccessContext) (ManifestObject, error) {
	if item.Keys() == nil { // one expression
		x, known, err := ac.Eval(item)
		if err != nil || !known {
			return ManifestObject{}, orUnknown(err, item, name)
		}
		return plainObject(x, item.Pos), nil
	}
	o := ManifestObject{Pos: item.Pos}
	if kind := item.Lookup("kind"); kind != nil {
		o.Pos = kind.Pos
	}
	for _, f := range []struct {
		key  string
		v    *eval.Value
		into *string
	}{
		{"apiVersion", item.Lookup("apiVersion"), &o.APIVersion},
		{"kind", item.Lookup("kind"), &o.Kind},
		{"metadata.namespace", item.Lookup("metadata").Lookup("namespace"), &o.Namespace},
	} {
		if f.v == nil {
			continue
		}
		x, known, err := ac.Eval(f.v)
		if err != nil || !known {
			return ManifestObject{}, orUnknown(err, f.v, name+"."+f.key)
		}
		*f.into = eval.Format(x)
	}
	// The name is not needed for the permissions: one known only when
	// the step runs is left empty.
	if v := item.Lookup("metadata").Lookup("name"); v != nil {
		if x, known, err := ac.Eval(v); err == nil && known {
			o.Name = eval.Format(x)
		}
	}
	return o, nil
}

// plainObject reads an object rendered from an expression.
func plainObject(x any, pos diag.Pos) ManifestObject {
	m, _ := eval.Plain(x).(map[string]any)
	return ManifestObject{APIVersion: k8sobj.String(m, "apiVersion"), Kind: k8sobj.String(m, "kind"),
		Namespace: k8sobj.String(m, "metadata", "namespace"), Name: k8sobj.String(m, "metadata", "name"), Pos: pos}
}

// orUnknown is err, or else the error that v, named name, is only known
// when the step runs.
func orUnknown(err error, v *eval.Value, name string) error {
	if err != nil {
		return err
	}
	return unknownError(v, name)
}
