// Package defaulttolerationseconds is upstream's DefaultTolerationSeconds admission plugin:
// a pod that does not tolerate the node.kubernetes.io/not-ready or
// node.kubernetes.io/unreachable NoExecute taint gets a toleration of it for 300 seconds.
package defaulttolerationseconds
