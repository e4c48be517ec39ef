package engine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kwatch/kwatch/internal/bench/wire"
)

func TestCtlProbeRound(t *testing.T) {
	var patched, plain string
	for i := 0; patched == "" || plain == ""; i++ {
		if name := fmt.Sprintf("pod-%d", i); wire.Patched(name) {
			patched = name
		} else {
			plain = name
		}
	}
	p := &ctlProbe{}
	fin := p.arm("r1", 2)
	round := map[string]string{wire.RoundKey: "r1"}
	if b := p.seen("ns", plain, map[string]string{wire.RoundKey: "r0"}); b != nil {
		t.Fatalf("stale plain pod: patch %s, want none", b)
	}
	if b := p.seen("ns", plain, round); b != nil {
		t.Fatalf("plain pod: patch %s, want none", b)
	}
	p.seen("ns", plain, round) // a second reconcile of a complete key counts once
	body := p.seen("ns", patched, round)
	var m struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Metadata.Annotations[wire.ReconciledKey] != "r1" || m.Metadata.Annotations[wire.CountKey] != "4" {
		t.Fatalf("patch %s (%v): want the round r1 and the count 4", body, err)
	}
	select {
	case <-fin:
		t.Fatal("round finished before the patched pod's echo was reconciled")
	default:
	}
	if got := p.result().keys; got != 1 {
		t.Fatalf("keys complete = %d, want 1", got)
	}
	echo := map[string]string{wire.RoundKey: "r1", wire.ReconciledKey: "r1"}
	if b := p.seen("ns", patched, echo); b != nil {
		t.Fatalf("echo: patch %s, want none", b)
	}
	<-fin
	if d := p.result(); d.keys != 2 || d.calls != 5 || d.patches != 1 || d.ns == 0 {
		t.Errorf("result = %+v, want 2 keys after 5 calls and 1 patch", d)
	}
}
