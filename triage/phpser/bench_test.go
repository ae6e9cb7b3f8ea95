package phpser

import "testing"

func BenchmarkDecodeAndFormat(b *testing.B) {
	s := fixture(b, "closure.ser")
	for b.Loop() {
		v, err := Decode(s)
		if err != nil {
			b.Fatal(err)
		}
		FormatWith(v, FormatOptions{HideNoise: true})
	}
}
