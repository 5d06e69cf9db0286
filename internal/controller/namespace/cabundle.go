package namespace

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"time"
)

// caBundle is the kube-root-ca.crt bundle to publish given the one published (cur) and
// this replica's CA (mine): the CA certificates of cur that are still valid, then mine if
// cur lacks it. Replicas sharing one etcd with CAs of their own (each signs its own serving
// certificate) so converge on a bundle holding every CA, which pods need to trust whichever
// replica answers, instead of each rewriting the other's; anything else in cur
// (non-certificates, leaf or expired certificates) is dropped, as upstream's publisher
// restores the bundle. It returns cur itself when nothing changes.
func caBundle(cur string, mine []byte, now time.Time) string {
	var out bytes.Buffer
	seen := map[string]bool{}
	keep := func(b *pem.Block) {
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil || !c.IsCA || now.After(c.NotAfter) || seen[string(b.Bytes)] {
			return
		}
		seen[string(b.Bytes)] = true
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
	}
	blocks := func(data []byte, f func(*pem.Block)) {
		for {
			var b *pem.Block
			b, data = pem.Decode(data)
			if b == nil {
				return
			}
			if b.Type == "CERTIFICATE" {
				f(b)
			}
		}
	}
	blocks([]byte(cur), keep)
	blocks(mine, keep)
	if out.String() == cur {
		return cur
	}
	if out.Len() == 0 {
		return string(mine)
	}
	return out.String()
}
