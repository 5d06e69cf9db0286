package quota

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// The functions in this file are the resource-list algebra of upstream's quota library.
// None of them modifies its arguments; every returned list holds deep copies.
// Quantities are compared and combined by package quantity, which is resource.Quantity's
// own Cmp/Add/Sub (formats follow upstream exactly: a zero takes the format of what is
// added to it, 0 + 512Mi = 512Mi) except that it never scales by a huge exponent: values
// far beyond the bound, stored before it existed, cost what normal values cost.

// Equals reports whether a and b have the same names and numerically equal values.
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, av := range a {
		bv, ok := b[name]
		if !ok || quantity.Cmp(av, bv) != 0 {
			return false
		}
	}
	return true
}

// LessThanOrEqual reports whether every name of b that is also in a has a[name] <= b[name].
// Names only in a or only in b are ignored. The second result lists the names where
// a[name] > b[name], sorted.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for name, bv := range b {
		if av, ok := a[name]; ok && quantity.Cmp(av, bv) > 0 {
			exceeded = append(exceeded, name)
		}
	}
	slices.Sort(exceeded)
	return len(exceeded) == 0, exceeded
}

// Max returns the union of a and b with the larger value where both have a name.
func Max(a, b corev1.ResourceList) corev1.ResourceList {
	return union(a, b, func(v *resource.Quantity, bv resource.Quantity) {
		if quantity.Cmp(bv, *v) > 0 {
			*v = bv.DeepCopy()
		}
	}, false)
}

// Add returns the union of a and b with the sum where both have a name.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	return union(a, b, func(v *resource.Quantity, bv resource.Quantity) { *v = quantity.Add(*v, bv) }, false)
}

// Subtract returns a - b over the union of names; a name only in b becomes negative.
func Subtract(a, b corev1.ResourceList) corev1.ResourceList {
	return union(a, b, func(v *resource.Quantity, bv resource.Quantity) { *v = quantity.Sub(*v, bv) }, true)
}

// union combines a and b name by name: a's value, combined with b's where both have the
// name; names only in b are copied (negated when negateOnlyB).
func union(a, b corev1.ResourceList, combine func(v *resource.Quantity, bv resource.Quantity), negateOnlyB bool) corev1.ResourceList {
	result := make(corev1.ResourceList, len(a)+len(b))
	for name, av := range a {
		v := av.DeepCopy()
		if bv, ok := b[name]; ok {
			combine(&v, bv)
		}
		result[name] = v
	}
	for name, bv := range b {
		if _, ok := a[name]; !ok {
			v := bv.DeepCopy()
			if negateOnlyB {
				v.Neg()
			}
			result[name] = v
		}
	}
	return result
}

// SubtractWithNonNegativeResult returns max(0, a - b) for every name of a, and 0 for
// names only in b.
func SubtractWithNonNegativeResult(a, b corev1.ResourceList) corev1.ResourceList {
	zero := resource.MustParse("0")
	result := corev1.ResourceList{}
	for name, av := range a {
		v := av.DeepCopy()
		if bv, ok := b[name]; ok {
			v = quantity.Sub(v, bv)
		}
		if v.Sign() > 0 {
			result[name] = v
		} else {
			result[name] = zero.DeepCopy()
		}
	}
	for name := range b {
		if _, ok := result[name]; !ok {
			result[name] = zero.DeepCopy()
		}
	}
	return result
}

// Mask returns the entries of list whose names are in names.
func Mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	keep := ToSet(names)
	result := corev1.ResourceList{}
	for name, v := range list {
		if keep.Has(name) {
			result[name] = v.DeepCopy()
		}
	}
	return result
}

// ResourceNames returns the names of list, sorted.
func ResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Contains reports whether names contains name.
func Contains(names []corev1.ResourceName, name corev1.ResourceName) bool {
	return slices.Contains(names, name)
}

// ContainsPrefix reports whether name starts with any of prefixes.
func ContainsPrefix(prefixes []string, name corev1.ResourceName) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(string(name), p) {
			return true
		}
	}
	return false
}

// Intersection returns the names in both a and b, de-duplicated and sorted.
func Intersection(a, b []corev1.ResourceName) []corev1.ResourceName {
	return sets.List(ToSet(a).Intersection(ToSet(b)))
}

// Difference returns the names in a and not in b, de-duplicated and sorted.
func Difference(a, b []corev1.ResourceName) []corev1.ResourceName {
	return sets.List(ToSet(a).Difference(ToSet(b)))
}

// IsZero reports whether every value of list is zero (true for an empty list).
func IsZero(list corev1.ResourceList) bool {
	for _, v := range list {
		if !v.IsZero() {
			return false
		}
	}
	return true
}

// RemoveZeros returns list without its zero values.
func RemoveZeros(list corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{}
	for name, v := range list {
		if !v.IsZero() {
			result[name] = v.DeepCopy()
		}
	}
	return result
}

// IsNegative returns the names whose value is below zero, sorted.
func IsNegative(list corev1.ResourceList) []corev1.ResourceName {
	var names []corev1.ResourceName
	for name, v := range list {
		if v.Sign() < 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Positive returns the entries of list that are above zero.
func Positive(list corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{}
	for name, v := range list {
		if v.Sign() > 0 {
			result[name] = v.DeepCopy()
		}
	}
	return result
}

// ToSet returns names as a set.
func ToSet(names []corev1.ResourceName) sets.Set[corev1.ResourceName] {
	return sets.New(names...)
}

// prettyPrint formats list as upstream's admission errors do: "name=quantity" pairs
// sorted by name, joined with ",".
func prettyPrint(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, name := range ResourceNames(list) {
		v := list[name]
		parts = append(parts, string(name)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// prettyPrintNames formats names sorted and joined with ",".
func prettyPrintNames(names []corev1.ResourceName) string {
	s := make([]string, 0, len(names))
	for _, n := range names {
		s = append(s, string(n))
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

// KeepCanonical prepares list, in place, for a value kept and used many times (a quota's
// state, a cluster quota's slot): each quantity remembers its canonical text (as
// Quantity.String does), so encoding it again does not format it again (for some values,
// "100Ti", that costs microseconds); with compact (hard lists, which every write's check
// compares against), a value ParseQuantity kept in decimal form is put in int64 form
// (quantity.Compact), so those comparisons do not allocate. Unlike this file's other
// functions it modifies list: call it on lists not yet shared.
func KeepCanonical(list corev1.ResourceList, compact bool) {
	for name, v := range list {
		if compact {
			v = quantity.Compact(v)
		}
		_ = v.String()
		list[name] = v
	}
}
