// Package fake is an in-memory controller.Client for controllers' unit tests: the
// registry's catalogue, objects kept by group-resource, namespace and name, revisions,
// resourceVersion guards, generateName, finalizers and the deletion propagation policies
// the registry records as finalizers, and watches. It does no admission: a test refuses
// writes with Client.SetRefuse, as quota would, and reads what was written with Actions.
//
// Invariants: objects handed out are copies (a caller may change them); every write takes
// the next revision, which becomes the object's resourceVersion (and a deletion's); watch
// events are delivered in revision order.
package fake
