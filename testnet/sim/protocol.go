package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

// Behaviour is how a Byzantine replica misbehaves.
type Behaviour string

const (
	// AlwaysFree grants every request (a liar that says "free").
	AlwaysFree Behaviour = "free"
	// AlwaysLocked refuses every request.
	AlwaysLocked Behaviour = "locked"
	// RandomAnswer answers each request at random.
	RandomAnswer Behaviour = "random"
	// Slow runs the protocol correctly but sends every reply SlowBy late.
	Slow Behaviour = "slow"
)

// Behaviours lists the Byzantine behaviours every protocol supports.
var Behaviours = []Behaviour{AlwaysFree, AlwaysLocked, RandomAnswer, Slow}

// ParseBehaviour checks a behaviour name.
func ParseBehaviour(s string) (Behaviour, error) {
	for _, b := range Behaviours {
		if string(b) == s {
			return b, nil
		}
	}
	names := make([]string, len(Behaviours))
	for i, b := range Behaviours {
		names[i] = string(b)
	}
	return "", fmt.Errorf("sim: unknown Byzantine behaviour %q (known: %s)", s, strings.Join(names, ", "))
}

// Protocol builds the nodes of one mutual-exclusion protocol.
type Protocol interface {
	// Name labels reports.
	Name() string
	// Replicas is the number of replicas (servers).
	Replicas() int
	// NewReplica returns replica i in a fresh incarnation starting at now; rng
	// draws what the incarnation needs (its id).
	NewReplica(i int, now core.Time, rng *rand.Rand) (core.Node, error)
	// NewClient returns a client core.
	NewClient(id core.ClientID, rng *rand.Rand) (mutex.Client, error)
	// Liar returns a Byzantine replica that answers by behaviour b (AlwaysFree,
	// AlwaysLocked or RandomAnswer; Slow is built by the simulator).
	Liar(i int, b Behaviour, rng *rand.Rand) (core.Node, error)
}

// grants is a liar's answer: yes when it always says free, a coin toss when it
// answers at random, no when it always says locked.
func grants(how Behaviour, rng *rand.Rand) bool {
	return how == AlwaysFree || (how == RandomAnswer && rng.IntN(2) == 0)
}
