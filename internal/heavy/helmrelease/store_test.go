package helmrelease

import (
	"testing"

	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// A revision the store keeps is handed out as a copy of what Helm
// writes into a release it read (its status, labels, hooks' last runs):
// an upgrade marking the release it found superseded must not change the
// kept one, which stands for the Secret as it was listed.
func TestCopyRelease(t *testing.T) {
	kept := &release.Release{
		Name: "r", Version: 2,
		Info:   &release.Info{Status: common.StatusDeployed, Description: "Upgrade complete"},
		Labels: map[string]string{"tier": "front"},
		Hooks:  []*release.Hook{{Name: "h", LastRun: release.HookExecution{Phase: release.HookPhaseSucceeded}}},
		Config: map[string]any{"a": 1},
	}
	got := copyRelease(kept)
	got.Info.Status = common.StatusSuperseded
	got.Labels["tier"] = "back"
	got.Hooks[0].LastRun.Phase = release.HookPhaseFailed
	if kept.Info.Status != common.StatusDeployed || kept.Labels["tier"] != "front" || kept.Hooks[0].LastRun.Phase != release.HookPhaseSucceeded {
		t.Errorf("writing into the copy changed the kept revision: %+v %v %+v", kept.Info, kept.Labels, kept.Hooks[0].LastRun)
	}
	if got.Version != 2 || got.Config["a"] != 1 {
		t.Errorf("the copy lost the revision's content: %+v", got)
	}
}
