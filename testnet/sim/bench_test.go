package sim

import "testing"

// BenchmarkSimulator measures the simulator itself: simulated messages and
// critical sections per wall-clock second. Run it on one core with
// `go test ./testnet/sim -run '^$' -bench Simulator -cpu 1`.
func BenchmarkSimulator(b *testing.B) {
	for _, name := range []string{"failure-free", "contention", "lossy"} {
		b.Run(name, func(b *testing.B) {
			sc, err := Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			var msgs uint64
			var entries int
			for i := range b.N {
				m, err := Run(uint64(i), sc, nil)
				if err != nil || m.Overlaps > 0 {
					b.Fatalf("seed %d: err %v overlaps %d", i, err, m.Overlaps)
				}
				msgs += m.Messages
				entries += m.Entries
			}
			b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(entries)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
