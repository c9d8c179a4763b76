package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "peer",
		Short:         "dhtsync: distributed locks and ordered objects on logical replicas in a libp2p DHT",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newSimCommand(), newTestnetCommand())
	return root
}
