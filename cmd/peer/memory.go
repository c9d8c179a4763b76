package main

import (
	"fmt"
	"runtime"
	"syscall"
)

// peakMemory is the process's peak resident set size, as the kernel counts it.
func peakMemory() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	kib := ru.Maxrss
	if runtime.GOOS == "darwin" {
		kib /= 1024 // bytes there
	}
	return fmt.Sprintf("%d MiB", kib/1024)
}
