package main

import (
	"math/big"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ratOf returns q exactly as a rational number.
func ratOf(q resource.Quantity) *big.Rat {
	d := q.AsDec()
	r := new(big.Rat).SetInt(d.UnscaledBig())
	scale := int64(d.Scale())
	if scale == 0 {
		return r
	}
	abs := scale
	if abs < 0 {
		abs = -abs
	}
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs), nil))
	if scale > 0 {
		return r.Quo(r, p)
	}
	return r.Mul(r, p)
}

// pressure is used/hard: nil when hard is zero and used is not (infinitely over).
func pressure(used, hard resource.Quantity) *big.Rat {
	if hard.Sign() == 0 {
		if used.Sign() <= 0 {
			return new(big.Rat)
		}
		return nil
	}
	return new(big.Rat).Quo(ratOf(used), ratOf(hard))
}

// cmpPressure orders pressures, nil (infinite) highest.
func cmpPressure(a, b *big.Rat) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Cmp(b)
}

// percent is floor(100·p); p is not nil.
func percent(p *big.Rat) int64 {
	v := new(big.Rat).Mul(p, big.NewRat(100, 1))
	q := new(big.Int).Quo(v.Num(), v.Denom()) // truncates toward zero
	if v.Sign() < 0 && new(big.Int).Mul(q, v.Denom()).Cmp(v.Num()) != 0 {
		q.Sub(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 1 << 62
	}
	return q.Int64()
}

// barWidth is how many cells a usage bar has.
const barWidth = 10

// bar draws p as [#####-----]: one # per full tenth, full above 100%.
func bar(p *big.Rat) string {
	n := int64(barWidth)
	if p != nil {
		n = min(max(percent(p)/10, 0), barWidth)
	}
	return "[" + strings.Repeat("#", int(n)) + strings.Repeat("-", barWidth-int(n)) + "]"
}

// percentText renders p as "90%", ">100%" for infinite pressure.
func percentText(p *big.Rat) string {
	if p == nil {
		return ">100%"
	}
	return big.NewInt(percent(p)).String() + "%"
}

// listText renders a resource list as "a=1, b=2", names sorted.
func listText(list corev1.ResourceList) string {
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		q := list[corev1.ResourceName(n)]
		parts[i] = n + "=" + q.String()
	}
	return strings.Join(parts, ", ")
}

// namesText renders names comma-separated ("nothing" for none).
func namesText(names []corev1.ResourceName) string {
	if len(names) == 0 {
		return "nothing"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}
