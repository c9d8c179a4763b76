package mutex

import (
	"fmt"
	"testing"

	"github.com/dhtsync/dhtsync/core"
)

func TestFinishedRemembersAndStaysBounded(t *testing.T) {
	f := Finished{Max: 10}
	f.Done(1, "a", 5)
	if !f.Stale("a", 5) || !f.Stale("a", 4) || f.Stale("a", 6) || f.Stale("b", 1) {
		t.Fatal("wrong staleness")
	}
	f.Done(2, "a", 3) // an older release changes nothing
	if f.Stale("a", 6) || !f.Stale("a", 5) {
		t.Fatal("older release lowered the mark")
	}
	for i := range 100 {
		f.Done(core.Time(10+i), core.ClientID(fmt.Sprint("c", i)), 1)
	}
	if len(f.last) > 10 {
		t.Fatalf("holds %d clients, bound 10", len(f.last))
	}
	if !f.Stale("c99", 1) {
		t.Fatal("forgot the newest client")
	}
}
