package oracle

import "testing"

func TestOverlapsFoundAndDisjointAccepted(t *testing.T) {
	o := New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(o.Enter("a", 0))
	must(o.Exit("a", 10))
	must(o.Enter("b", 10)) // touching is not overlapping: intervals are half-open
	must(o.Exit("b", 20))
	if got := o.Overlaps(100); len(got) != 0 {
		t.Fatalf("disjoint intervals reported as overlapping: %v", got)
	}
	must(o.Enter("c", 15)) // inside b's [10,20)
	must(o.Exit("c", 30))
	must(o.Enter("d", 25)) // inside c's, still open at the check
	got := o.Overlaps(40)
	if len(got) != 2 || got[0].Later.Holder != "c" || got[0].Earlier.Holder != "b" || got[1].Later.Holder != "d" {
		t.Fatalf("overlaps = %v, want c-in-b and d-in-c", got)
	}
	if o.Entries() != 3 || !o.Inside("d") {
		t.Fatalf("entries %d inside(d)=%v", o.Entries(), o.Inside("d"))
	}
}

func TestMisuseIsAnError(t *testing.T) {
	o := New()
	if err := o.Exit("x", 1); err == nil {
		t.Fatal("exit without enter accepted")
	}
	_ = o.Enter("x", 1)
	if err := o.Enter("x", 2); err == nil {
		t.Fatal("double enter accepted")
	}
}
