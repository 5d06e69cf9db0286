package authn

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkServiceAccountToken: the cost of authenticating a ServiceAccount token on
// every request: a token seen before skips the signature check (its expiry, audience and
// objects are still checked); a new token pays one ECDSA verification.
func BenchmarkServiceAccountToken(b *testing.B) {
	key, err := LoadOrCreateKey(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	sas, err := NewServiceAccounts(key, objects{"serviceaccounts/ns/sa": "uid"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	spec := TokenSpec{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "uid"}, Expiration: time.Hour}
	tok, _, err := sas.Issue(spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seen", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, ok := sas.AuthenticateToken(tok, nil); !ok {
					b.Fatal("refused")
				}
			}
		})
	})
	toks := make([]string, 256)
	for i := range toks {
		if toks[i], _, err = sas.Issue(spec); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sas.mu.Lock()
			clear(sas.verified)
			sas.mu.Unlock()
			if _, _, ok := sas.AuthenticateToken(toks[i%len(toks)], nil); !ok {
				b.Fatal(fmt.Sprint("refused ", i))
			}
		}
	})
}
