package wire

import (
	"fmt"
	"testing"
)

func TestControllerRule(t *testing.T) {
	var patched, plain string
	for i := 0; patched == "" || plain == ""; i++ {
		name := fmt.Sprintf("pod-%d", i)
		if Patched(name) {
			patched = name
		} else {
			plain = name
		}
	}
	for _, c := range []struct {
		name          string
		ann           map[string]string
		round         string
		complete      bool
		patch         bool
		patchForRound string
	}{
		{plain, nil, "", true, false, ""},
		{patched, nil, "", true, false, ""},
		{plain, map[string]string{RoundKey: "r1"}, "r1", true, false, ""},
		{plain, map[string]string{RoundKey: "r0"}, "r1", false, false, ""},
		{patched, map[string]string{RoundKey: "r1"}, "r1", false, true, "r1"},
		{patched, map[string]string{RoundKey: "r1", ReconciledKey: "r0"}, "r1", false, true, "r1"},
		{patched, map[string]string{RoundKey: "r1", ReconciledKey: "r1"}, "r1", true, false, ""},
	} {
		if got := Complete(c.name, c.ann, c.round); got != c.complete {
			t.Errorf("Complete(%s, %v, %q) = %v, want %v", c.name, c.ann, c.round, got, c.complete)
		}
		round, ok := NeedsPatch(c.name, c.ann)
		if ok != c.patch || (ok && round != c.patchForRound) {
			t.Errorf("NeedsPatch(%s, %v) = %q, %v; want %q, %v", c.name, c.ann, round, ok, c.patchForRound, c.patch)
		}
	}
}
