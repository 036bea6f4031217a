package reliability_test

import (
	"runtime/metrics"
	"strings"
)

// goClasses are the Go runtime's memory classes the load run reports, in this order: what
// of the resident set the Go runtime holds, by kind. The rest of the resident set is the
// binary and what SQLite's C allocator (modernc's libc) has mapped.
var goClasses = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes",
}

// memParts returns the Go runtime's mapped memory not returned to the OS, in KiB, and the
// same split by goClasses (short names).
func memParts() (goKiB int64, parts map[string]int64) {
	m := make([]metrics.Sample, len(goClasses))
	for i, n := range goClasses {
		m[i].Name = n
	}
	metrics.Read(m)
	parts = map[string]int64{}
	for i, s := range m {
		if s.Value.Kind() != metrics.KindUint64 {
			continue
		}
		v := int64(s.Value.Uint64() / 1024)
		name := strings.TrimSuffix(strings.TrimPrefix(goClasses[i], "/memory/classes/"), ":bytes")
		parts[name] = v
		goKiB += v
	}
	return goKiB, parts
}
