package payload

import "testing"

func BenchmarkJobClassTruncatedHead(b *testing.B) {
	raw := fixture(b, "closure.json")[:2048]
	for b.Loop() {
		if JobClass(raw) == "" {
			b.Fatal("no class")
		}
	}
}

func BenchmarkParse(b *testing.B) {
	raw := fixture(b, "object_job.json")
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
