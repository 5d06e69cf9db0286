// Package priority is quotad's Priority admission plugin. In the mutating phase it resolves
// a new pod's spec.priorityClassName to spec.priority and spec.preemptionPolicy (a
// globalDefault class applies when the pod names none; with no default the priority is 0);
// on pod updates it carries those fields over from the stored pod. In the validating phase
// it refuses a second globalDefault PriorityClass and the deletion of the built-in system
// classes.
//
// Invariants:
//   - The built-in classes system-node-critical and system-cluster-critical (SystemClasses)
//     resolve even when storage does not hold them; a stored class of the same name wins.
//   - When several classes are marked globalDefault (a race upstream allows too), the one
//     with the lowest value is the default; ties go to the smallest name.
//   - Subresource requests are ignored. Refusals are 403s with upstream's texts; storage
//     failures are returned as plain errors, as upstream returns them.
package priority
