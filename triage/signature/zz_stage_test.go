package signature

import "testing"

func BenchmarkZZStages(b *testing.B) {
	for _, m := range benchMessages {
		s := []byte(m.msg)
		buf := make([]byte, 0, 8192)
		passes := []struct {
			name string
			f    func(dst, src []byte) ([]byte, bool)
		}{{"url", replaceURLs}, {"email", replaceEmails}, {"uuid", replaceUUIDs}, {"time", replaceTimes}, {"ip", replaceIPs},
			{"unix", replaceUnixPaths}, {"win", replaceWindowsPaths}, {"list", replaceLists}, {"sq", replaceSingleQuoted},
			{"dq", replaceDoubleQuoted}, {"0x", replaceHexLiterals}, {"hextok", replaceHexIDsAndTokens}}
		for _, p := range passes {
			b.Run(m.name+"/"+p.name, func(b *testing.B) {
				for b.Loop() {
					p.f(buf[:0], s)
				}
			})
		}
		b.Run(m.name+"/finish", func(b *testing.B) {
			for b.Loop() {
				finishNumbersAndSpace(buf[:0], s)
			}
		})
		b.Run(m.name+"/all", func(b *testing.B) {
			for b.Loop() {
				Normalize(m.msg)
			}
		})
	}
}
