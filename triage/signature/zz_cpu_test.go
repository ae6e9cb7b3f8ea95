package signature

import (
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	for _, m := range benchMessages {
		for _, f := range []struct {
			name string
			fn   func(string) string
			n    int
		}{{"new", Normalize, 200000}, {"ref", normalizeReference, 3000}} {
			n := f.n
			if len(m.msg) > 1000 {
				n /= 10
			}
			f.fn(m.msg)
			start := cpuNow()
			for i := 0; i < n; i++ {
				f.fn(m.msg)
			}
			t.Logf("%-8s %-4s %8.0f ns/op (cpu)", m.name, f.name, float64(cpuNow()-start)/float64(n))
		}
	}
}
