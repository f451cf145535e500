package kube

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestWrapServerErrors(t *testing.T) {
	c := &Client{secrets: &secretSet{values: []string{secretToken}}}
	pods := schema.GroupResource{Resource: "pods"}
	deploys := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name  string
		err   error
		op    string
		tgt   string
		want  string
		check func(error) bool
	}{
		{
			name:  "403 forbidden",
			err:   apierrors.NewForbidden(pods, "", errors.New(`User "system:serviceaccount:x:y" cannot list resource "pods" in API group "" in the namespace "x"`)),
			op:    "list",
			tgt:   `pods in namespace "x"`,
			want:  `list pods in namespace "x": Forbidden (403): pods is forbidden: User "system:serviceaccount:x:y" cannot list resource "pods" in API group "" in the namespace "x"`,
			check: apierrors.IsForbidden,
		},
		{
			name:  "404 not found",
			err:   apierrors.NewNotFound(deploys, "web"),
			op:    "get",
			tgt:   `Deployment "web" in namespace "lab"`,
			want:  `get Deployment "web" in namespace "lab": NotFound (404): deployments.apps "web" not found`,
			check: IsNotFound,
		},
		{
			name:  "409 conflict",
			err:   apierrors.NewConflict(deploys, "web", errors.New("the object has been modified; please apply your changes to the latest version and try again")),
			op:    "apply",
			tgt:   `Deployment "web"`,
			want:  `apply Deployment "web": Conflict (409): Operation cannot be fulfilled on deployments.apps "web": the object has been modified`,
			check: apierrors.IsConflict,
		},
		{
			name: "422 invalid with causes",
			err: apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0"),
			}),
			op:    "apply",
			tgt:   `Deployment "web"`,
			want:  `apply Deployment "web": Invalid (422): Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			check: apierrors.IsInvalid,
		},
		{
			name:  "server message echoing a token is redacted",
			err:   apierrors.NewUnauthorized("bad token " + secretToken),
			op:    "list",
			tgt:   "pods",
			want:  "list pods: Unauthorized (401): bad token [REDACTED]",
			check: apierrors.IsUnauthorized,
		},
		{
			name: "plain error keeps op and target",
			err:  fmt.Errorf("dial tcp 10.0.0.1:6443: connect: connection refused"),
			op:   "get",
			tgt:  `Pod "x"`,
			want: `get Pod "x": dial tcp 10.0.0.1:6443: connect: connection refused`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.wrap(tt.err, tt.op, tt.tgt)
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got  %q\nwant %q", err, tt.want)
			}
			if tt.check != nil && !tt.check(err) {
				t.Errorf("wrapped error lost its kind: %v", err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("errors.Is(wrapped, original) is false")
			}
		})
	}
}

func TestAPIErrorCauses(t *testing.T) {
	// An apply conflict: the causes name the other manager and are not in
	// the message, so they are appended.
	st := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Message: "Apply failed with 1 conflict",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-edit"`, Field: ".spec.replicas"}}},
	}}
	err := (&Client{}).wrap(st, "apply", `Deployment "web"`)
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an *APIError: %T", err)
	}
	want := `apply Deployment "web": Conflict (409): Apply failed with 1 conflict; .spec.replicas: conflict with "kubectl-edit"`
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
	if ae.Code != 409 || ae.Reason != "Conflict" || len(ae.Causes) != 1 {
		t.Errorf("fields: %+v", ae)
	}
}

func TestRedact(t *testing.T) {
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	pem := "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG...\n-----END CERTIFICATE-----"
	b64 := "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND"
	tests := []struct {
		in, mustNot, want string
	}{
		{in: "Authorization: Bearer abcdefghijklmnop", mustNot: "abcdefghijklmnop"},
		{in: "token " + jwt + " rejected", mustNot: jwt},
		{in: "bad cert " + pem + " end", mustNot: "MIIBkTCB"},
		{in: "client-key-data: " + b64, mustNot: b64},
		{in: `{"token":"plainsecret"}`, mustNot: "plainsecret"},
		{in: "password=hunter22 user=x", mustNot: "hunter22"},
		// What must survive: ordinary messages, container IDs (hex), paths.
		{in: "invalid bearer token", want: "invalid bearer token"},
		{in: "container 3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100 not found", want: "container 3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100 not found"},
		{in: `pods "web-0" is forbidden`, want: `pods "web-0" is forbidden`},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		if tt.mustNot != "" && strings.Contains(got, tt.mustNot) {
			t.Errorf("Redact(%q) = %q still contains the secret", tt.in, got)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("Redact(%q) = %q, want unchanged", tt.in, got)
		}
	}
}

func TestMissingServiceAccount(t *testing.T) {
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "box",
		errors.New(`error looking up service account lab-1/default: serviceaccount "default" not found`))
	sa, ok := missingServiceAccount(err)
	if !ok || sa.Namespace != "lab-1" || sa.Name != "default" || sa.Kind != "ServiceAccount" {
		t.Errorf("got %+v %v", sa, ok)
	}
	if _, ok := missingServiceAccount(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "box", errors.New("RBAC says no"))); ok {
		t.Errorf("an RBAC refusal is not a missing service account")
	}
}
