package oracle

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dhtsync/dhtsync/core"
)

// Interval is one critical section: holder was inside during [Start, End).
type Interval struct {
	Holder     string
	Start, End core.Time
}

// Overlap is a critical section that began while another holder was still inside.
type Overlap struct {
	Earlier, Later Interval
}

func (o Overlap) String() string {
	return fmt.Sprintf("%s entered at %v while %s held [%v, %v)",
		o.Later.Holder, o.Later.Start, o.Earlier.Holder, o.Earlier.Start, o.Earlier.End)
}

// Oracle records critical sections. It is not safe for concurrent use; a
// concurrent runtime serializes its calls.
type Oracle struct {
	open map[string]core.Time
	done []Interval
}

// New returns an empty oracle.
func New() *Oracle { return &Oracle{open: make(map[string]core.Time)} }

// Enter records that holder entered its critical section at t.
func (o *Oracle) Enter(holder string, t core.Time) error {
	if _, in := o.open[holder]; in {
		return fmt.Errorf("oracle: %s entered at %v while already inside", holder, t)
	}
	o.open[holder] = t
	return nil
}

// Exit records that holder left its critical section at t.
func (o *Oracle) Exit(holder string, t core.Time) error {
	start, in := o.open[holder]
	if !in {
		return fmt.Errorf("oracle: %s left at %v without having entered", holder, t)
	}
	delete(o.open, holder)
	o.done = append(o.done, Interval{Holder: holder, Start: start, End: t})
	return nil
}

// Inside reports whether holder is in its critical section.
func (o *Oracle) Inside(holder string) bool {
	_, in := o.open[holder]
	return in
}

// Entries is the number of critical sections completed so far.
func (o *Oracle) Entries() int { return len(o.done) }

// Overlaps returns every critical section that started before an earlier one of
// another holder had ended. Sections still open count as ending at now.
func (o *Oracle) Overlaps(now core.Time) []Overlap {
	all := slices.Clone(o.done)
	for h, start := range o.open {
		all = append(all, Interval{Holder: h, Start: start, End: now})
	}
	slices.SortFunc(all, func(a, b Interval) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.Holder, b.Holder))
	})
	var found []Overlap
	var reach Interval // the interval that reaches furthest so far
	for i, iv := range all {
		if i > 0 && iv.Start < reach.End && iv.Holder != reach.Holder && iv.Start < iv.End {
			found = append(found, Overlap{Earlier: reach, Later: iv})
		}
		if i == 0 || iv.End > reach.End {
			reach = iv
		}
	}
	return found
}
