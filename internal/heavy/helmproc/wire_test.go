package helmproc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// A failure crosses the pipe as the type it was, so the runner classes it
// the same on either side; its text stays labrun-helm's.
func TestErrorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"change", fmt.Errorf("x: %w", &cluster.HelmChangeError{Err: errors.New("Invalid (422)")}), func(e error) bool { var x *cluster.HelmChangeError; return errors.As(e, &x) }},
		{"connect", &cluster.HelmConnectError{Err: errors.New("no kubeconfig")}, func(e error) bool { var x *cluster.HelmConnectError; return errors.As(e, &x) }},
		{"transient", &cluster.TransientError{Err: errors.New("refused"), Reason: "connection refused"}, func(e error) bool {
			var x *cluster.TransientError
			return errors.As(e, &x) && x.Reason == "connection refused"
		}},
		{"forbidden", &cluster.ForbiddenError{Err: errors.New("403")}, func(e error) bool { var x *cluster.ForbiddenError; return errors.As(e, &x) }},
		{"timeout", fmt.Errorf("hooks: %w", context.DeadlineExceeded), func(e error) bool { return errors.Is(e, context.DeadlineExceeded) }},
		{"canceled", context.Canceled, func(e error) bool { return errors.Is(e, context.Canceled) }},
		{"other", errors.New(`release "r" in namespace "n": release: not found`), func(e error) bool {
			var c *cluster.HelmChangeError
			return !errors.As(e, &c) && !errors.Is(e, context.Canceled)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeError(tc.err).Decode()
			if !tc.check(got) || got.Error() != tc.err.Error() {
				t.Errorf("%v (%T) came back as %v (%T)", tc.err, tc.err, got, got)
			}
		})
	}
}
