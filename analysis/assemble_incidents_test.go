package analysis

import "testing"

// TestIncidentsFoldConsequences checks how stuck verdicts shape
// incidents: two groups in one wait-for cycle are one incident whatever
// their origins, and it carries every member's consequences, a group
// waiting for both members once; two groups stuck on their own are two
// incidents even when one function started both.
func TestIncidentsFoldConsequences(t *testing.T) {
	runner := Consequence{Location: "testing.(*T).Run", State: "chan receive", Count: 1, Relation: "waits for the test", Goids: []int64{7}}
	waiter := Consequence{Location: "main.collect", State: "sync.WaitGroup.Wait", Count: 1, Relation: "waits in WaitGroup.Wait", Goids: []int64{9}}
	sus := []Suspect{
		{ID: "G1", Kind: KindGoroutine, Location: "main.transferA", Verdict: "stuck", Score: 95, Count: 1,
			Origin: &Origin{Function: "main.run"}, Cycle: []string{"main.transferB"}, Consequences: []Consequence{runner, waiter}},
		{ID: "G2", Kind: KindGoroutine, Location: "main.transferB", Verdict: "stuck", Score: 94, Count: 1,
			Origin: &Origin{Function: "main.other"}, Cycle: []string{"main.transferA"}, Consequences: []Consequence{runner}},
		{ID: "G3", Kind: KindGoroutine, Location: "main.sendResult", Verdict: "stuck", Score: 80, Count: 3,
			Origin: &Origin{Function: "main.serve"}},
		{ID: "G4", Kind: KindGoroutine, Location: "main.readLoop", Verdict: "stuck", Score: 70, Count: 2,
			Origin: &Origin{Function: "main.serve"}},
	}
	incs := incidents(sus, nil, nil)
	if len(incs) != 3 {
		t.Fatalf("%d incidents %+v, want the cycle as one and the two groups of main.serve apart", len(incs), incs)
	}
	cyc := incs[0]
	if len(cyc.Suspects) != 2 || cyc.Suspects[0] != "G1" || cyc.Suspects[1] != "G2" {
		t.Fatalf("cycle incident members %v, want G1 and G2", cyc.Suspects)
	}
	if len(cyc.Consequences) != 2 || cyc.Consequences[0].Location != runner.Location || cyc.Consequences[1].Location != waiter.Location {
		t.Errorf("cycle incident consequences %+v, want the test runner once and the WaitGroup waiter", cyc.Consequences)
	}
	if cyc.Goroutines != 2 {
		t.Errorf("cycle incident counts %d goroutines, want its members' 2", cyc.Goroutines)
	}
	for _, s := range sus {
		if s.Incident == "" {
			t.Errorf("%s has no incident", s.ID)
		}
	}
	if sus[2].Incident == sus[3].Incident {
		t.Errorf("two groups stuck on their own share incident %s", sus[2].Incident)
	}
	// Groups that neither grow nor are stuck (kept by the runtime's marks
	// alone, say) still join by origin.
	calm := []Suspect{
		{ID: "G1", Kind: KindGoroutine, Location: "main.a", Score: 50, Origin: &Origin{Function: "main.serve"}},
		{ID: "G2", Kind: KindGoroutine, Location: "main.b", Score: 45, Origin: &Origin{Function: "main.serve"}},
	}
	if incs := incidents(calm, nil, nil); len(incs) != 1 {
		t.Errorf("%d incidents for two groups of one origin, want 1", len(incs))
	}
}

// TestIncidentsJoinCreatorOrigin checks that a group whose origin is only
// its creator goroutine's entry function (eBPF without creation stacks)
// joins the group, growing with it, whose creation stack shows the
// user's frame inside that goroutine, and that an unrelated group does
// not.
func TestIncidentsJoinCreatorOrigin(t *testing.T) {
	chain := []CreationHop{{Goid: 40, Function: "main.(*controller).worker", Basis: basisEBPF,
		Stack: []Frame{{Function: "k8s.io/client-go/util/workqueue.newDelayingQueue"}, {Function: "main.(*controller).reconcile", File: "/src/op/main.go", Line: 50}}}}
	sus := []Suspect{
		{ID: "G1", Kind: KindGoroutine, Location: "k8s.io/client-go/util/workqueue.(*delayingType).waitingLoop", Score: 90, GrowthPerMin: 600,
			Origin: &Origin{Function: "main.(*controller).reconcile", File: "/src/op/main.go", Line: 50, Basis: basisEBPF, Goid: 40}, CreationChain: chain},
		{ID: "G2", Kind: KindGoroutine, Location: "k8s.io/client-go/util/workqueue.(*Typed).updateUnfinishedWorkLoop", Score: 85, GrowthPerMin: 590,
			Origin: &Origin{Function: "main.(*controller).worker", Basis: basisEntry, Goid: 41}},
		{ID: "G3", Kind: KindGoroutine, Location: "main.other", Score: 80, GrowthPerMin: 600,
			Origin: &Origin{Function: "main.(*poller).run", Basis: basisEntry, Goid: 7}},
	}
	incs := incidents(sus, nil, nil)
	if len(incs) != 2 || len(incs[0].Suspects) != 2 || incs[0].Origin.Function != "main.(*controller).reconcile" {
		t.Fatalf("incidents %+v, want G1 and G2 as one from reconcile, G3 apart", incs)
	}
}
