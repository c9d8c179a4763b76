package sim

import (
	"strings"
	"testing"
)

// Every named scenario runs; the oracle's verdict is the one the scenario is
// about (only colluding-liars is built to break exclusion).
func TestCatalogScenariosRun(t *testing.T) {
	for _, n := range Catalog() {
		sc, err := Lookup(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		violations := 0
		for seed := range uint64(5) {
			m, err := Run(seed, sc, nil)
			if err != nil {
				t.Fatalf("%s: %v", n.Name, err)
			}
			if !m.Completed || m.Entries == 0 {
				t.Errorf("%s seed %d: completed %v with %d entries", n.Name, seed, m.Completed, m.Entries)
			}
			violations += m.Overlaps
		}
		if wantViolations := n.Name == "colluding-liars"; (violations > 0) != wantViolations {
			t.Errorf("%s: %d overlaps over 5 seeds", n.Name, violations)
		}
	}
}

func TestUnknownScenarioIsAClearError(t *testing.T) {
	_, err := Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), "unknown scenario") || !strings.Contains(err.Error(), DefaultScenario) {
		t.Fatalf("Lookup(nope) = %v", err)
	}
}
