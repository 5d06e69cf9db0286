// Package defaultingressclass is quotad's DefaultIngressClass admission plugin, upstream's
// plugin/pkg/admission/network/defaultingressclass: a new Ingress that names no class (no
// spec.ingressClassName, no kubernetes.io/ingress.class annotation) gets the default
// IngressClass, the one annotated ingressclass.kubernetes.io/is-default-class: "true"; of
// several, the newest (then the smallest name).
//
// Invariants:
//   - Only Ingress creates are handled; subresources are ignored; nothing is refused except
//     when the classes cannot be read (upstream's 403 wrapping the error).
package defaultingressclass
